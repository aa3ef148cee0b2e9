// `judge check`: the configured judge measured against transcripts a person labelled; the results
// said per rubric and overall, and stored in the judge cache, where the gates of a run read them.
import {
  agreementLine,
  type CheckResult,
  calibrations,
  checkJudge,
  MIN_CALIBRATION_ITEMS,
  oneVerdictOnly,
  readLabelledFile,
} from "../judge/index.ts";
import { terminalText } from "../render/index.ts";
import { answeredBy, writeJsonFile } from "../report/index.ts";
import { JUDGE_KEYS, movingModelWarnings, type ProjectContext, requireJudge, resolveJudge } from "../settings/index.ts";
import { recordingTranscript } from "../smoke/index.ts";
import { buildJudge, type JudgeCacheOptions } from "./judge.ts";
import { openSession } from "./session.ts";
import type { JobIO } from "./smoke-job.ts";

export type JudgeCheckRequest = {
  project: ProjectContext;
  /** The labelled file (YAML: rubric, transcript lines or a recording, the human's verdict). */
  file: string;
  /** Whose judge settings: the stack's (its file's where it is not created), else the environment's. */
  stack: string;
  /** Also write the results here as JSON. */
  json?: string | undefined;
  cache?: JudgeCacheOptions;
};

/** Judges every labelled item, says the results on `out`, stores each rubric's measurement; returns them. */
export async function judgeCheck(request: JudgeCheckRequest, io: Pick<JobIO, "out" | "onRetry">): Promise<CheckResult> {
  const { project, file } = request;
  const labelled = await readLabelledFile(file);
  const session = await openSession(request.stack, { project, source: "stack-or-file" }).catch(() => undefined);
  const settings = session?.judge ?? resolveJudge(() => undefined, project.env);
  const endpoint = requireJudge(settings, `judge check ${file}`, request.stack);
  const judge = await buildJudge(endpoint, {
    project,
    ...(request.cache ? { cache: request.cache } : {}),
    ...(io.onRetry ? { onRetry: io.onRetry } : {}),
  });
  let result: CheckResult;
  try {
    // A refused key stops here, naming the judge's key, before any item is judged.
    await judge.client.checkKey();
    result = await checkJudge(labelled, judge, recordingTranscript);
  } finally {
    await judge.client.close();
  }
  // A measurement of a model whose name moves may not hold for the model that answers tomorrow.
  for (const warning of movingModelWarnings([{ setting: JUDGE_KEYS.model.config, model: endpoint.model }]))
    io.out.write(`warning: ${terminalText(warning)}\n`);
  io.out.write(checkText(result));
  await judge.cache?.storeAgreements(judge.identity, calibrations(result, file));
  if (request.json) await writeJsonFile(request.json, result);
  return result;
}

const round = (x: number) => Math.round(x * 1000) / 1000;

/**
 * The results as a reader sees them: one block per rubric, then the whole file. Every line holds
 * the judge's words or the labelled file's, so every line is escaped for the terminal.
 */
function checkText(result: CheckResult): string {
  const lines = [`judge ${result.model}: ${result.items.length} labelled transcript(s)`];
  for (const { item, judgement } of result.items) {
    const mark = judgement.verdict === "error" ? "!" : judgement.verdict === item.human ? "✓" : "✗";
    const said =
      judgement.verdict === "error"
        ? `error: ${judgement.error}`
        : `judge ${judgement.verdict} ${judgement.agreement}${judgement.uncertain ? " (uncertain)" : ""}${answeredBy(judgement)}, human ${item.human}: ${judgement.reason}`;
    lines.push(`  ${mark} line ${item.line} ${JSON.stringify(item.rubric)}: ${said}`);
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
    const oneVerdict = r.items > 0 ? oneVerdictOnly(r.human) : null;
    if (r.name !== "overall" && oneVerdict) lines.push(`  no gate accepts this measurement: ${oneVerdict}`);
    if (r.name !== "overall" && r.items < MIN_CALIBRATION_ITEMS) {
      lines.push(
        `  only ${r.items} labelled transcript(s): a gate (judge_min_agreement, judge_min_kappa) accepts a measurement over ${MIN_CALIBRATION_ITEMS} or more`,
      );
    }
  }
  return `${lines.map(terminalText).join("\n")}\n`;
}
