// `judge check`: the configured judge measured against transcripts a person labelled; the results
// said per rubric and overall, and stored in the judge cache, where the gates of a run read them.
import {
  agreementLine,
  type CheckResult,
  calibrations,
  checkJudge,
  kappaLine,
  MIN_CALIBRATION_ITEMS,
  oneVerdictOnly,
  readLabelledFile,
} from "../judge/index.ts";
import { terminalText } from "../render/index.ts";
import { writeJsonFile } from "../report/index.ts";
import { answeredBy } from "../results/index.ts";
import { JUDGE_KEYS, movingModelWarnings, type ProjectContext, requireJudge, resolveJudge } from "../settings/index.ts";
import { recordingTranscript } from "../smoke/index.ts";
import { buildJudge, type JudgeCacheOptions } from "./judge.ts";
import { openSession, stackSettingsAgainst } from "./session.ts";
import type { JobIO } from "./smoke-job.ts";

export type JudgeCheckRequest = {
  project: ProjectContext;
  /** The labelled file (YAML: rubric, transcript lines or a recording, the human's verdict). */
  file: string;
  /** Whose judge settings: the stack's (its file's where it is not created), else the environment's. */
  stack: string;
  /** A pull request's base: the guarded settings (the judge's address, key, model) read from it, as `plan --base` does. */
  base?: string | undefined;
  /** Also write the results here as JSON. */
  json?: string | undefined;
  cache?: JudgeCacheOptions;
  /** Another model on the same endpoint and key, judging the same items: judge–judge kappa. */
  secondJudge?: string | undefined;
  /** The gate: the judge's kappa lower bound must reach the labellers' own (human–human) lower bound. */
  withinHumans?: boolean | undefined;
};

/** The measurement and, with `withinHumans`, why the gate refused it (null: it holds). */
export type JudgeCheckOutcome = CheckResult & { gate: string | null };

/** Judges every labelled item, says the results on `out`, stores each rubric's measurement; returns them. */
export async function judgeCheck(
  request: JudgeCheckRequest,
  io: Pick<JobIO, "out" | "onRetry">,
): Promise<JudgeCheckOutcome> {
  const { project, file } = request;
  const labelled = await readLabelledFile(file, project.dir);
  const base = request.base ? await stackSettingsAgainst(request.stack, request.base, project) : undefined;
  const session = await openSession(request.stack, {
    project,
    source: "stack-or-file",
    ...(base ? { base } : {}),
  }).catch(() => undefined);
  const settings = session?.judge ?? resolveJudge(() => undefined, project.env);
  const endpoint = requireJudge(settings, `judge check ${file}`, request.stack);
  const judge = await buildJudge(endpoint, {
    project,
    ...(request.cache ? { cache: request.cache } : {}),
    ...(io.onRetry ? { onRetry: io.onRetry } : {}),
  });
  // The second judge: another model through the same settings and key (its own cache entries: the model is in the key).
  const second = request.secondJudge
    ? await buildJudge(
        { ...endpoint, model: request.secondJudge },
        { project, ...(request.cache ? { cache: request.cache } : {}) },
      )
    : undefined;
  let result: CheckResult;
  try {
    // A refused key stops here, naming the judge's key, before any item is judged.
    await judge.client.checkKey();
    await second?.client.checkKey();
    result = await checkJudge(labelled, judge, recordingTranscript, second);
  } finally {
    await judge.client.close();
    await second?.client.close();
  }
  // A measurement of a model whose name moves may not hold for the model that answers tomorrow.
  for (const warning of movingModelWarnings([{ setting: JUDGE_KEYS.model.config, model: endpoint.model }]))
    io.out.write(`warning: ${terminalText(warning)}\n`);
  io.out.write(checkText(result));
  const gate = request.withinHumans ? withinHumans(result) : null;
  if (request.withinHumans) io.out.write(`gate (--within-humans): ${gate ? `refused: ${gate}` : "holds"}\n`);
  await judge.cache?.storeAgreements(judge.identity, calibrations(result, file));
  const outcome = { ...result, gate };
  if (request.json) await writeJsonFile(request.json, outcome, project.dir);
  return outcome;
}

/**
 * The judge is as good as the people when the lower bound of its kappa against them reaches the
 * lower bound of the labellers' kappa with each other; why not, or null when it does.
 */
function withinHumans(result: CheckResult): string | null {
  const { kappa_interval: judge, human_human: humans } = result.overall;
  if (!humans?.kappa_interval)
    return "no item was labelled by two labellers (judge label --labeller NAME), so their own agreement is unknown";
  if (!judge) return "the judge's kappa is undefined (one label throughout)";
  if (judge.low >= humans.kappa_interval.low) return null;
  return `the judge's kappa lower bound ${round(judge.low)} is below the labellers' own ${round(humans.kappa_interval.low)}`;
}

const round = (x: number) => Math.round(x * 1000) / 1000;

/**
 * The results as a reader sees them: one block per rubric, then the whole file. Every line holds
 * the judge's words or the labelled file's, so every line is escaped for the terminal.
 */
function checkText(result: CheckResult): string {
  const lines = [`judge ${result.model}: ${result.items.length} labelled transcript(s)`];
  for (const { item, judgement, labels } of result.items) {
    const mark = judgement.verdict === "error" ? "!" : judgement.verdict === item.human ? "✓" : "✗";
    const said =
      judgement.verdict === "error"
        ? `error: ${judgement.error}`
        : `judge ${judgement.verdict} ${judgement.agreement}${judgement.uncertain ? " (uncertain)" : ""}${answeredBy(judgement)}, human ${item.human}: ${judgement.reason}`;
    const repeats = labels > 1 ? ` (labelled ${labels} times, counted once)` : "";
    lines.push(`  ${mark} line ${item.line} ${JSON.stringify(item.rubric)}${repeats}: ${said}`);
  }
  for (const r of [
    ...result.rubrics.map((r) => ({ ...r, name: JSON.stringify(r.rubric) })),
    { ...result.overall, name: "overall" },
  ]) {
    const c = r.confusion;
    const consistency = r.consistency === null ? "n/a" : String(round(r.consistency));
    const flips = r.flip_rate === null ? "n/a" : String(round(r.flip_rate));
    lines.push(
      `${r.name}: ${agreementLine(r)}; vote consistency ${consistency}, flip rate ${flips}${r.errors > 0 ? `; ${r.errors} not judged` : ""}`,
      `  confusion (human × judge): pass×pass ${c.human_pass_judge_pass}, pass×fail ${c.human_pass_judge_fail}, fail×pass ${c.human_fail_judge_pass}, fail×fail ${c.human_fail_judge_fail}`,
    );
    if (r.labels > r.items) {
      lines.push(`  ${r.labels} labels of ${r.items} distinct item(s): an item labelled again is counted once`);
    }
    if (r.human_human) lines.push(`  human–human (two labellers, the same items): ${kappaLine(r.human_human)}`);
    if (r.judge_judge) {
      lines.push(`  judge–judge (${result.model} and ${result.second_model}): ${kappaLine(r.judge_judge)}`);
    }
    const oneVerdict = r.items > 0 ? oneVerdictOnly(r.human) : null;
    if (r.name !== "overall" && oneVerdict) lines.push(`  no gate accepts this measurement: ${oneVerdict}`);
    if (r.name !== "overall" && r.items < MIN_CALIBRATION_ITEMS) {
      lines.push(
        `  only ${r.items} labelled transcript(s): a gate (judge_min_agreement, judge_min_kappa) accepts a measurement over ${MIN_CALIBRATION_ITEMS} or more`,
      );
    }
  }
  if (result.stale.length > 0) {
    lines.push(
      `stale: ${result.stale.length} label(s) were made for another rubric or judge model; label a fresh sample (agent-iac judge label):`,
      ...result.stale.slice(0, 10).map((s) => `  ${s}`),
    );
  }
  return `${lines.map(terminalText).join("\n")}\n`;
}
