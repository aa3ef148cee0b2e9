// Which judged expectations a person labels: every judged rubric of a report's calls is a candidate;
// the sample takes them stratified by the judge's verdict and by rubric, in turns (the rarest verdict
// first, so a sample of two or more holds both verdicts whenever the report has both), each
// conversation once, and is shown in a seeded shuffled order that says nothing of the verdicts.
import { createHash } from "node:crypto";
import type { Report } from "../results/index.ts";
import { seededRandom, shuffled } from "../stats/index.ts";

export type Verdict = "pass" | "fail";

/** One judged expectation of one call, as the page shows it (the verdict stays on the server). */
export type LabelItem = {
  rubric: string;
  /** The call's display lines ("agent: …", "caller: …", "tool name({…}) → …"). */
  transcript: string[];
  /** The call's tool calls and procedure output, as the report holds them. */
  tool_calls: unknown[];
  procedures: unknown[];
  /** The conversation's id, or the call's place (agent/scenario#iteration) where it has none. */
  conversation: string;
  judge: { verdict: Verdict; model: string };
};

/** Every judged expectation with a verdict (pass or fail) in the reports' calls, in report order. */
export function judgedItems(reports: readonly Report[]): LabelItem[] {
  const items: LabelItem[] = [];
  for (const report of reports) {
    for (const call of report.results) {
      const conversation =
        call.conversation_id ??
        `${call.agent}/${call.scenario}#${call.iteration}${call.side === "old" ? " (old)" : ""}`;
      for (const assertion of call.assertions) {
        const judgement = assertion.judgement;
        // An error or an unsettled judgement (votes: auto) has no verdict to label against.
        if (judgement?.verdict !== "pass" && judgement?.verdict !== "fail") continue;
        items.push({
          rubric: judgement.rubric,
          transcript: call.transcript,
          tool_calls: call.tool_calls,
          procedures: call.procedures,
          conversation,
          judge: { verdict: judgement.verdict, model: judgement.model },
        });
      }
    }
  }
  return items;
}

/** A generator seeded by a string (its SHA-256's first 32 bits): the same seed, the same sample. */
const random = (seed: string) => seededRandom(createHash("sha256").update(seed).digest().readUInt32LE(0));

/**
 * `size` items (or all there are) drawn in turns from each stratum (verdict × rubric): the strata of
 * the rarer verdict first, so the first two picks hold both verdicts where both exist; a
 * conversation already drawn is passed over. Returned in a seeded shuffled order.
 */
export function stratifiedSample(items: readonly LabelItem[], size: number, seed: string): LabelItem[] {
  const next = random(seed);
  const strata = new Map<string, LabelItem[]>();
  for (const item of shuffled(items, next)) {
    const key = JSON.stringify([item.judge.verdict, item.rubric]);
    strata.set(key, [...(strata.get(key) ?? []), item]);
  }
  const count = (verdict: Verdict) => items.filter((i) => i.judge.verdict === verdict).length;
  const rarer: Verdict = count("fail") <= count("pass") ? "fail" : "pass";
  // Alternate the verdicts' strata, the rarer verdict's first.
  const byVerdict = (verdict: Verdict) =>
    [...strata.entries()].filter(([, list]) => list[0]?.judge.verdict === verdict).map(([, list]) => list);
  const first = byVerdict(rarer);
  const second = byVerdict(rarer === "fail" ? "pass" : "fail");
  const order: LabelItem[][] = [];
  for (let i = 0; i < Math.max(first.length, second.length); i++) {
    if (first[i]) order.push(first[i] as LabelItem[]);
    if (second[i]) order.push(second[i] as LabelItem[]);
  }
  const taken: LabelItem[] = [];
  const conversations = new Set<string>();
  let progressed = true;
  while (taken.length < size && progressed) {
    progressed = false;
    for (const stratum of order) {
      if (taken.length >= size) break;
      let item = stratum.shift();
      while (item && conversations.has(item.conversation)) item = stratum.shift();
      if (!item) continue;
      taken.push(item);
      conversations.add(item.conversation);
      progressed = true;
    }
  }
  return shuffled(taken, next);
}
