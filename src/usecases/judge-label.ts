// `judge label`: a seeded, stratified sample of the judged expectations in smoke reports, or in
// recordings replayed through the configured judge (as `smoke --replay` does, with its cache), served
// on a blind page on loopback until Ctrl+C; each answer is on disk, in the labels file `judge check`
// reads, before the page hears it is saved.
import { stat } from "node:fs/promises";
import { InvalidInputError } from "../errors/index.ts";
import { disagreements, judgedItems, LabelStore, startLabelServer, stratifiedSample } from "../labels/index.ts";
import { type Report, readReport } from "../results/index.ts";
import { type ProjectContext, requireJudge } from "../settings/index.ts";
import type { JudgeCacheOptions } from "./judge.ts";
import { replayRun } from "./replay.ts";
import { openSession } from "./session.ts";
import type { JobIO } from "./smoke-job.ts";

export type JudgeLabelRequest = {
  /** smoke --json reports, or directories of recordings (smoke --record DIR) to replay through the judge. */
  reports: string[];
  /** The stack whose settings name the judge (and its agent files' expectations) for a recordings directory. */
  stack: string;
  project: ProjectContext;
  judgeCache?: JudgeCacheOptions;
  /** The labels file, created on the first answer (a relative one in the project's directory). */
  labels: string;
  labeller: string;
  /** How many items to draw; the default: every disagreement with --disagreements, else 40. */
  sample?: number | undefined;
  seed: string;
  /** Only the items where the judge and a labeller, or two labellers, disagree. */
  disagreements?: boolean | undefined;
};

export type JudgeLabelIO = {
  out: { write(text: string): unknown };
  /** Told of each retry of the judge while recordings are replayed. */
  onRetry?: JobIO["onRetry"];
  /** Resolves at Ctrl+C (or SIGTERM). */
  untilInterrupted(): Promise<NodeJS.Signals>;
};

const DEFAULT_SAMPLE = 40;

const isDirectory = (file: string) =>
  stat(file).then(
    (info) => info.isDirectory(),
    () => false,
  );

/** Each input's report: a file is read as a smoke report, a directory replayed through the judge. */
async function readReports(request: JudgeLabelRequest, io: JudgeLabelIO): Promise<Report[]> {
  const reports: Report[] = [];
  for (const file of request.reports) {
    if (await isDirectory(request.project.path(file))) {
      reports.push(await replayed(file, request, io));
      continue;
    }
    reports.push(
      await readReport(file, request.project.dir).catch((error: Error) => {
        throw new InvalidInputError(
          `${error.message}: judge label reads smoke reports (--json) and directories of recordings (--record DIR); a single recording holds no verdict: give its directory`,
          { value: file },
        );
      }),
    );
  }
  return reports;
}

/**
 * The recordings replayed as `smoke --replay DIR` replays them (the stack's agent files, the judge
 * and its cache). Its lines are not shown: they hold the judge's verdicts, which the labeller must
 * not see before answering. `dir` as the user named it (relative to the project).
 */
async function replayed(dir: string, request: JudgeLabelRequest, io: JudgeLabelIO): Promise<Report> {
  const session = await openSession(request.stack, { project: request.project, source: "file", optional: true });
  requireJudge(session.judge, `judge label ${dir} replays the recordings through the judge`, request.stack);
  const report = await replayRun(
    {
      stack: request.stack,
      project: request.project,
      dir: request.project.path(dir),
      selection: {},
      ...(request.judgeCache ? { judgeCache: request.judgeCache } : {}),
    },
    { out: { write: () => true, isTTY: false }, ...(io.onRetry ? { onRetry: io.onRetry } : {}) },
  );
  const unjudged = report.results
    .flatMap((call) => call.assertions)
    .filter((a) => a.judgement && a.judgement.verdict !== "pass" && a.judgement.verdict !== "fail").length;
  io.out.write(
    `judge label: replayed ${report.results.length} recorded call(s) of ${dir} through the judge${unjudged > 0 ? `; ${unjudged} judged expectation(s) got no verdict (an error or unsettled votes: see \`agent-iac smoke --replay ${dir}\`) and are not offered` : ""}\n`,
  );
  return report;
}

/** Serves the sample until interrupted; returns how many were drawn, how many answered this run, and the signal. */
export async function judgeLabel(
  request: JudgeLabelRequest,
  io: JudgeLabelIO,
): Promise<{ items: number; answered: number; signal: NodeJS.Signals | null }> {
  const judged = judgedItems(await readReports(request, io));
  if (judged.length === 0) {
    throw new InvalidInputError(`${request.reports.join(", ")}: no judged expectation with a verdict to label`);
  }
  const store = new LabelStore(request.labels, request.project.dir);
  const pool = request.disagreements ? disagreements(judged, await store.labels()) : judged;
  if (pool.length === 0) {
    io.out.write(
      `judge label: no item where the judge and a labeller, or two labellers, disagree in ${request.labels}\n`,
    );
    return { items: 0, answered: 0, signal: null };
  }
  const size = request.sample ?? (request.disagreements ? pool.length : DEFAULT_SAMPLE);
  const items = stratifiedSample(pool, size, request.seed);
  const verdicts = new Set(pool.map((item) => item.judge.verdict));
  if (verdicts.size === 1) {
    // Said without naming it: the labeller must not learn the verdicts before answering.
    io.out.write(
      "note: the judge gave every one of these items the same verdict, so the sample cannot hold both: label more reports for a kappa worth reading\n",
    );
  }
  const server = await startLabelServer({ items, store, labeller: request.labeller });
  io.out.write(
    `judge label: ${items.length} item(s) of ${pool.length} ${request.disagreements ? "disagreement(s)" : "judged expectation(s)"}, stratified by the judge's verdict and rubric (seed ${request.seed}), for ${request.labeller}\n` +
      `open ${server.url}\n` +
      `  (the address holds this run's one-time token: share it with no one; listening on 127.0.0.1 only)\n` +
      `answers are written to ${request.labels} as you give them; press Ctrl+C when done\n`,
  );
  const signal = await io.untilInterrupted();
  await server.close();
  io.out.write(`judge label: stopped (${signal}); ${server.answered()} answer(s) this run, in ${request.labels}\n`);
  return { items: items.length, answered: server.answered(), signal };
}
