// `agent-iac judge check FILE`: the configured judge over transcripts a person labelled. The file
// (YAML) lists items — a rubric, a transcript (its display lines) or a recording, and the human's
// verdict — and every problem in it is reported at its file:line.
import { createHash } from "node:crypto";
import { readFile } from "node:fs/promises";
import path from "node:path";
import { isNode, LineCounter, parseDocument } from "yaml";
import { z } from "zod";
import { InvalidInputError } from "../errors/index.ts";
import { unreadableFile } from "../results/index.ts";
import { cohenKappa, DEFAULT_MAX_VOTES, type Kappa, type RatedPair } from "../stats/index.ts";
import { type AgreementStats, agreementStats, voteConsistency, voteFlipRate } from "./agreement.ts";
import type { Calibration } from "./cache.ts";
import type { Judge, Judgement } from "./votes.ts";

const DEFAULT_CHECK_VOTES = 3;
/**
 * The fewest labelled transcripts of a rubric whose measured agreement a scenario's
 * judge_min_agreement accepts (with fewer, one lucky item reaches agreement 1).
 */
export const MIN_CALIBRATION_ITEMS = 10;

/** Independent judge requests per item: odd (a majority), 1 … 15, or auto (adaptive, at most DEFAULT_MAX_VOTES). */
const votesSchema = z.union([
  z
    .int()
    .min(1)
    .max(15)
    .refine((n) => n % 2 === 1, "must be odd"),
  z.literal("auto"),
]);

const itemSchema = z
  .strictObject({
    rubric: z.string().trim().min(1, "must not be empty"),
    /** This item's votes (where the docs list it, beside `rubric`); else the file's `votes`. */
    votes: votesSchema.optional(),
    transcript: z.array(z.string()).min(1, "must have at least one line").optional(),
    recording: z
      .string()
      .min(1)
      .optional()
      .meta({ description: "A recording (smoke --record), relative to this file." }),
    /** `skip`: the labeller could not tell (`judge label`); it counts in no agreement. */
    human: z.enum(["pass", "fail", "skip"]),
    note: z.string().optional(),
    /** Who labelled it (`judge label --labeller`) and when (ISO time): two labellers' answers are both kept. */
    labeller: z.string().min(1).optional(),
    labelled_at: z.string().optional(),
    /** The conversation the transcript is of (`judge label` from a report). */
    conversation: z.string().optional(),
    /** SHA-256 of the rubric as labelled: a rubric edited since makes the label stale. */
    rubric_sha256: z.string().optional(),
    /** The judge's verdict the sample was drawn by, kept apart from the human's: its model makes a label stale for another judge. */
    judge: z.strictObject({ verdict: z.enum(["pass", "fail"]), model: z.string() }).optional(),
  })
  .superRefine((item, ctx) => {
    if ((item.transcript === undefined) === (item.recording === undefined)) {
      ctx.addIssue({ code: "custom", path: ["transcript"], message: "give either transcript (lines) or recording" });
    }
  });

const labelledFileSchema = z.strictObject({
  votes: votesSchema.default(DEFAULT_CHECK_VOTES),
  items: z.array(itemSchema).min(1, "must list at least one labelled transcript"),
});

type LabelledItem = z.output<typeof itemSchema> & { line: number };
export type LabelledFile = { file: string; votes: number | "auto"; items: LabelledItem[] };

/** A labelled file that cannot be used; `problems` are `file:line: field: message`. */
export class LabelledFileError extends InvalidInputError {
  override name = "LabelledFileError";
  readonly problems: string[];
  constructor(file: string, problems: string[]) {
    super(`${file}: ${problems.length} problem(s):\n${problems.join("\n")}`, { value: file });
    this.problems = problems;
  }
}

/** The largest labelled file read (bytes); its recordings are bounded where they are read. */
const MAX_LABELLED_FILE_BYTES = 10 * 1024 * 1024;

/** The labelled file `file` (named so in messages), a relative one read from `within` (the run's project). */
export async function readLabelledFile(file: string, within: string): Promise<LabelledFile> {
  const absolute = path.resolve(within, file);
  const problem = await unreadableFile(absolute, MAX_LABELLED_FILE_BYTES);
  if (problem) throw new LabelledFileError(file, [`${file}: ${problem}`]);
  const text = await readFile(absolute, "utf8").catch((error: NodeJS.ErrnoException) => {
    throw new LabelledFileError(file, [`${file}: cannot read it (${error.code ?? error.message})`]);
  });
  const lineCounter = new LineCounter();
  const doc = parseDocument(text, { lineCounter, prettyErrors: false });
  const lineOf = (offset: number | undefined) => (offset === undefined ? 1 : lineCounter.linePos(offset).line);
  if (doc.errors.length > 0) {
    throw new LabelledFileError(
      file,
      doc.errors.map((e) => `${file}:${lineOf(e.pos[0])}: ${e.message.split("\n")[0]}`),
    );
  }
  const at = (segments: readonly PropertyKey[]) => {
    for (let n = segments.length; n >= 0; n--) {
      const node = doc.getIn(segments.slice(0, n) as (string | number)[], true);
      if (isNode(node)) return lineOf(node.range?.[0]);
    }
    return 1;
  };
  let value: unknown;
  try {
    // The yaml library refuses a document whose aliases expand past its bound (a "billion laughs").
    value = doc.toJS({ maxAliasCount: 100 }) ?? {};
  } catch (error) {
    throw new LabelledFileError(file, [
      `${file}: cannot be read as data (${(error as Error).message.slice(0, 200)}): expand its aliases (&name / *name)`,
    ]);
  }
  const parsed = labelledFileSchema.safeParse(value);
  if (!parsed.success) {
    throw new LabelledFileError(
      file,
      parsed.error.issues.map(
        (issue) => `${file}:${at(issue.path)}: ${issue.path.join(".") || "(file)"}: ${issue.message}`,
      ),
    );
  }
  const items = parsed.data.items.map((item, i) => ({
    ...item,
    ...(item.recording ? { recording: path.resolve(path.dirname(absolute), item.recording) } : {}),
    line: at(["items", i]),
  }));
  // A recording that is a directory, a FIFO (a read that never ends) or missing is named at its line.
  const problems: string[] = [];
  for (const [i, item] of items.entries()) {
    if (!item.recording) continue;
    const why = await unreadableFile(item.recording);
    if (why) problems.push(`${file}:${at(["items", i, "recording"])}: items.${i}.recording: ${item.recording}: ${why}`);
  }
  if (problems.length > 0) throw new LabelledFileError(file, problems);
  return { file, votes: parsed.data.votes, items };
}

/**
 * One distinct item — a rubric and a transcript — however many times it is labelled: `item` is its
 * first counted label (a pass or a fail), `labels` how many labels of it the file holds, `second`
 * the second judge's judgement (`--second-judge`).
 */
type CheckedItem = { item: LabelledItem; labels: number; judgement: Judgement; second?: Judgement };
/** `flip_rate`: how often two of the judge's votes on one item disagree (null with single votes). */
type Measured = AgreementStats & {
  consistency: number | null;
  flip_rate: number | null;
  errors: number;
  /** Labels counted (repeats included); `items` counts each distinct item once. */
  labels: number;
  /** Two labellers on the same items (the first two of each item); null where no item has two. */
  human_human: Kappa | null;
  /** The judge against the second judge (`--second-judge`); null without one. */
  judge_judge: Kappa | null;
};
type RubricCheck = Measured & { rubric: string };
export type CheckResult = {
  model: string;
  second_model: string | null;
  items: CheckedItem[];
  rubrics: RubricCheck[];
  overall: Measured;
  /** `file:line: why`: labels made for another rubric wording or another judge model. */
  stale: string[];
};

export const rubricHash = (rubric: string) => createHash("sha256").update(rubric).digest("hex");

/** The key an item is counted once by: its rubric and its transcript's lines. */
export const itemKey = (rubric: string, lines: readonly string[]) =>
  createHash("sha256")
    .update(JSON.stringify([rubric, lines]))
    .digest("hex");

type Distinct = { lines: string[]; labels: LabelledItem[] };

/** The file's labels grouped by item (rubric and transcript), in file order; skipped labels left out. */
async function distinctItems(
  labelled: LabelledFile,
  readTranscript: (recording: string) => Promise<string[]>,
): Promise<Distinct[]> {
  const byKey = new Map<string, Distinct>();
  for (const item of labelled.items) {
    if (item.human === "skip") continue;
    const lines = item.transcript ?? (await readTranscript(item.recording as string));
    const key = itemKey(item.rubric, lines);
    const found = byKey.get(key);
    if (found) found.labels.push(item);
    else byKey.set(key, { lines, labels: [item] });
  }
  return [...byKey.values()];
}

/** Why each label is stale for this judge: its rubric edited since, or labelled for another judge model. */
function staleLabels(labelled: LabelledFile, model: string): string[] {
  const stale: string[] = [];
  for (const item of labelled.items) {
    const where = `${labelled.file}:${item.line}`;
    if (item.rubric_sha256 && item.rubric_sha256 !== rubricHash(item.rubric)) {
      stale.push(`${where}: the rubric changed since it was labelled`);
    } else if (item.judge && item.judge.model !== model) {
      stale.push(`${where}: labelled for judge model ${item.judge.model}, measured now for ${model}`);
    }
  }
  return stale;
}

type Verdict = "pass" | "fail";
const judged = (j: Judgement | undefined): j is Judgement & { verdict: Verdict } =>
  j?.verdict === "pass" || j?.verdict === "fail";

/** The first two labellers' verdicts of each item that two labelled (an unnamed labeller is one). */
function humanPairs(list: readonly CheckedItem[], labels: Map<CheckedItem, LabelledItem[]>): RatedPair[] {
  const pairs: RatedPair[] = [];
  for (const c of list) {
    const byLabeller = new Map<string, Verdict>();
    for (const label of labels.get(c) ?? []) {
      const who = label.labeller ?? "";
      if (!byLabeller.has(who)) byLabeller.set(who, label.human as Verdict);
    }
    const [a, b] = [...byLabeller.values()];
    if (a && b) pairs.push({ a, b });
  }
  return pairs;
}

/**
 * Judges every distinct item once (`readTranscript` turns a recording into display lines), with the
 * second judge too when given, and measures agreement per rubric and overall. An item labelled
 * several times counts once (its first label against the judge), so repeats add no evidence. An
 * item the judge could not judge (or did not settle) counts in `errors`, not in agreement.
 */
export async function checkJudge(
  labelled: LabelledFile,
  judge: Judge,
  readTranscript: (recording: string) => Promise<string[]>,
  second?: Judge,
): Promise<CheckResult> {
  const items: CheckedItem[] = [];
  const labelsOf = new Map<CheckedItem, LabelledItem[]>();
  for (const { lines, labels } of await distinctItems(labelled, readTranscript)) {
    const item = labels[0] as LabelledItem;
    const votes = item.votes ?? labelled.votes;
    const rubric =
      votes === "auto" ? { rubric: item.rubric, votes: DEFAULT_MAX_VOTES, auto: true } : { rubric: item.rubric, votes };
    const checked: CheckedItem = { item, labels: labels.length, judgement: await judge.judge(rubric, lines) };
    if (second) checked.second = await second.judge(rubric, lines);
    items.push(checked);
    labelsOf.set(checked, labels);
  }
  const measure = (list: CheckedItem[]): Measured => {
    // An unsettled judgement (votes: auto) is no verdict to agree with: not judged, its votes still counted.
    const done = list.filter((c) => judged(c.judgement));
    const pairs = done.map((c) => ({ human: c.item.human as Verdict, judge: c.judgement.verdict as Verdict }));
    const votes = list
      .filter((c) => c.judgement.verdict !== "error")
      .map((c) => c.judgement.votes.map((v) => v.verdict));
    const humans = humanPairs(list, labelsOf);
    const judges = list
      .filter((c) => judged(c.judgement) && judged(c.second))
      .map((c) => ({ a: c.judgement.verdict as Verdict, b: c.second?.verdict as Verdict }));
    return {
      ...agreementStats(pairs),
      consistency: voteConsistency(votes),
      flip_rate: voteFlipRate(votes),
      errors: list.length - done.length,
      labels: done.reduce((sum, c) => sum + c.labels, 0),
      human_human: humans.length > 0 ? cohenKappa(humans) : null,
      judge_judge: second ? cohenKappa(judges) : null,
    };
  };
  const rubrics = [...new Set(items.map((c) => c.item.rubric))].map((rubric) => ({
    rubric,
    ...measure(items.filter((c) => c.item.rubric === rubric)),
  }));
  return {
    model: judge.model,
    second_model: second?.model ?? null,
    items,
    rubrics,
    overall: measure(items),
    stale: staleLabels(labelled, judge.model),
  };
}

/** What `judge check` stores per rubric, for scenarios' `judge_min_agreement` and the smoke report. */
export function calibrations(result: CheckResult, file: string, now = new Date()): Record<string, Calibration> {
  return Object.fromEntries(
    result.rubrics
      .filter((r) => r.items > 0)
      .map((r) => [
        r.rubric,
        {
          agreement: r.agreement,
          kappa: r.kappa,
          kappa_low: r.kappa_interval?.low ?? null,
          kappa_high: r.kappa_interval?.high ?? null,
          human_pass: r.human.pass,
          human_fail: r.human.fail,
          flip_rate: r.flip_rate,
          items: r.items,
          consistency: r.consistency,
          checked_at: now.toISOString(),
          file,
        },
      ]),
  );
}
