// `smoke`'s workflow: the stack opened from its state (invalid files refused, the calls planned on
// the versions it holds) → the smoke job, plain or compared with the old versions of a file →
// what the run says after its report (versions the service did not know). With `replay`, no stack
// state and no network: the current expectations against the recordings.
import type { CompareRule, FailOn } from "../compare/index.ts";
import { type Report, reportExitCode } from "../results/index.ts";
import type { ProjectContext } from "../settings/index.ts";
import type { Selection } from "../smoke/index.ts";
import type { JudgeCacheOptions } from "./judge.ts";
import type { CommandOutcome, RunIO } from "./outcome.ts";
import { replayRun } from "./replay.ts";
import { runSmokeJob, smokeJobFrom } from "./smoke-job.ts";
import { prepareSmoke, suiteShard } from "./smoke-prologue.ts";
import { unknownVersionsNote } from "./unknown-versions.ts";

export type SmokeRequest = {
  stack: string;
  project: ProjectContext;
  selection: Selection;
  /** `I/N`: place only shard I of N (bad input when the text is not one). */
  shard?: string | undefined;
  concurrency: number;
  maxCallMinutes?: number | undefined;
  /** Say the calls and their worst case; place none (the run ends without a report). */
  dryRun: boolean;
  /** Record each call's events in this directory (relative to the project). */
  record?: string | undefined;
  /** Place no call: evaluate the current expectations against this directory's recordings. */
  replay?: string | undefined;
  /** Also call the old versions in `file` (relative to the project) and compare. */
  compare?:
    | {
        file: string;
        failOn: FailOn;
        alpha?: number | undefined;
        requireBaseline: boolean;
        rule?: CompareRule | undefined;
        allowInconclusive: boolean;
      }
    | undefined;
  judgeCache: JudgeCacheOptions;
};

/** `judge`: what judging the run cost (none when no call was judged). */
export type SmokeOutcome = CommandOutcome<Report> & { judge?: { model: string; requests: number; cached: number } };

export async function smokeStack(
  request: SmokeRequest,
  io: RunIO & { onReport?: (report: Report) => unknown },
): Promise<SmokeOutcome> {
  const { project } = request;
  const shard = suiteShard(request.shard);
  if (request.replay !== undefined) {
    const dir = project.path(request.replay);
    const report = await replayRun({ ...request, dir }, { out: io.out, onRetry: io.onRetry });
    return { report, notes: [], code: reportExitCode(report) };
  }
  const compareWith = project.path(request.compare?.file);
  const { session, held, plan, old } = await prepareSmoke({ ...request, shard, compareWith }, io.warn);
  io.useConnection(session.connection);
  // Ctrl+C (or SIGTERM) stops the calls: those in flight end as interrupted, the rest as not run,
  // and the report still holds every planned call.
  const stop = io.interruption();
  const { compare } = request;
  const job = smokeJobFrom(session, {
    plan,
    placement: compare && old ? { kind: "compare", old, ...compare } : { kind: "smoke" },
    concurrency: request.concurrency,
    maxCallMinutes: request.maxCallMinutes,
    dryRun: request.dryRun,
    announceCost: request.selection.live,
    recordDir: project.path(request.record),
    judgeCache: request.judgeCache,
  });
  const result = await runSmokeJob(job, {
    out: io.out,
    signal: stop.signal,
    onRetry: io.onRetry,
    ...(io.onReport ? { onReport: io.onReport } : {}),
  }).finally(stop.release);
  if (result.kind === "dry-run") return { report: undefined, notes: [], code: 0 };
  const { report, judge } = result;
  const used = judge && { model: judge.model, requests: judge.stats.requests, cached: judge.stats.cached };
  // A stopped run says nothing after its report but that it was stopped.
  const notes = report.interrupted ? [] : [unknownVersionsNote(result.results, held.agents, request.stack)];
  return { report, notes: notes.filter(Boolean), code: reportExitCode(report), ...(used ? { judge: used } : {}) };
}
