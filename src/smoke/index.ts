// Pinned-version smoke calls: plan the calls (a shard of them), place them, evaluate, gate
// (thresholds, latency), record, replay, report.
import { type ClientOptions, createClient } from "../api/index.ts";
import type { AgentDefinition } from "../definitions/index.ts";
import { IoError } from "../errors/index.ts";
import type { Judge } from "../judge/index.ts";
import type { HeldAgent } from "../provider/index.ts";
import { callLines, type Report, type ReportFiles, reportExitCode, writeReportFiles } from "../report/index.ts";
import { gateOf, type PlannedCall, type Progress } from "./call.ts";
import { scenarioKey, shardOf } from "./gates.ts";
import { planCalls, type Selection } from "./plan.ts";
import { recordingTranscript, replayRecordings, writeRecording } from "./record.ts";
import { buildReport, type ScenarioGate, type ScenarioResult } from "./reports.ts";
import { type Output, runCalls } from "./run.ts";

export { dryRunText, type Estimate, estimate, estimateLine } from "./budget.ts";
// PlannedCall, planCalls, runCalls, callResult, scenarioSummaries: for the comparison and the
// behaviour preview, which place the same planned calls on other versions.
export type { PlannedCall, Progress } from "./call.ts";
export { parseShard, shardOf } from "./gates.ts";
export { mergeReports } from "./merge.ts";
export { planCalls } from "./plan.ts";
export type { ScenarioResult } from "./reports.ts";
export { callResult, scenarioSummaries } from "./reports.ts";
export { runCalls } from "./run.ts";
export { recordingTranscript };

/** A recording could not be written (the run's calls are done; the reports are written first). */
export class RecordingError extends IoError {
  override name = "RecordingError";
  constructor(cause: unknown) {
    super(`writing a recording failed: ${cause instanceof Error ? cause.message : String(cause)}`, { cause });
  }
}

export type Shard = { index: number; count: number };

/** The calls of a run (this shard's), and every planned scenario's gate (all shards'). */
export type SmokePlan = { calls: PlannedCall[]; gates: Map<string, ScenarioGate>; shard?: Shard };

export function planSmoke(
  definitions: AgentDefinition[],
  outputs: Record<string, HeldAgent> | undefined,
  selection: Selection,
  shard?: Shard,
): SmokePlan {
  const all = planCalls(definitions, outputs, selection);
  const gates = new Map<string, ScenarioGate>();
  for (const call of all) {
    const key = scenarioKey(call.agent, call.scenario.name, call.versionId);
    if (!gates.has(key)) {
      gates.set(key, {
        ...gateOf(call.scenario),
        agent: call.agent,
        scenario: call.scenario.name,
        versionId: call.versionId,
      });
    }
  }
  const calls = shard
    ? // A sequential test's calls all go to one shard: it decides on all of them, round by round.
      all.filter(
        (c) =>
          shardOf(c.agent, c.scenario.name, c.scenario.confidence === undefined ? c.iteration : 1, shard.count) ===
          shard.index,
      )
    : all;
  return { calls, gates, ...(shard ? { shard } : {}) };
}

export type SmokeOptions = {
  definitions: AgentDefinition[];
  outputs: Record<string, HeldAgent> | undefined;
  selection: Selection;
  /** A plan made beforehand (for the budget check and --dry-run); else planned from the above. */
  plan?: SmokePlan;
  connection: { baseUrl: string; apiKey: string; serviceVersion?: string; onRetry?: ClientOptions["onRetry"] };
  concurrency: number;
  /** The report files to write (JSON, JUnit, HTML), rewritten after every finished call. */
  files?: ReportFiles;
  /** Writes each call's events and scenario here (JSON Lines, one file per call). */
  recordDir?: string;
  stack?: string;
  out: Output;
  /** Stops the run (e.g. on SIGINT): the reports still hold every call, finished or not. */
  signal?: AbortSignal;
  /** Progress of waiting calls; by default a status line on a terminal and a line every 15 s otherwise. */
  onProgress?: (progress: Progress) => void;
  /** Judges the scenarios' `expect.judge` rubrics (required when a planned scenario has any). */
  judge?: Judge | undefined;
};

/**
 * Plans (InvalidInputError on a bad selection), places the calls and returns their report (emit it with
 * src/report's `emitReport`: its exit code is 0 every scenario passed its threshold, flaky ones
 * too, 1 one failed, 3 one could not complete, 130 interrupted). The report files are rewritten
 * after every finished call, so a run killed part-way leaves the results it had.
 */
export async function runSmoke(
  options: SmokeOptions,
): Promise<{ results: ScenarioResult[]; report: Report; exitCode: number }> {
  const plan = options.plan ?? planSmoke(options.definitions, options.outputs, options.selection);
  const client = createClient(options.connection);
  const meta = {
    gates: plan.gates,
    ...(plan.shard ? { shard: plan.shard } : {}),
    ...(options.stack ? { stack: options.stack } : {}),
  };
  const files = options.files ?? {};
  let writing: Promise<unknown> = Promise.resolve();
  // Each write runs after the previous one, even after a failed one.
  const write = (report: Report) => {
    writing = writing.catch(() => {}).then(() => writeReportFiles(report, files));
    return writing;
  };
  const recordings: Promise<unknown>[] = [];
  let recordingFailure: unknown;
  try {
    const results = await runCalls(client, plan.calls, {
      concurrency: options.concurrency,
      out: options.out,
      partial: plan.shard !== undefined,
      keepEnvelopes: options.recordDir !== undefined,
      judge: options.judge,
      ...(options.signal ? { signal: options.signal } : {}),
      ...(options.onProgress ? { onProgress: options.onProgress } : {}),
      onResult: (result, results, call) => {
        if (options.recordDir) {
          recordings.push(
            writeRecording(options.recordDir, call, result).catch((error: unknown) => {
              recordingFailure ??= error;
            }),
          );
        }
        // The envelopes were kept for the recording only.
        delete result.envelopes;
        write(buildReport(results, meta)).catch(() => {});
      },
    });
    await Promise.all(recordings);
    const report = buildReport(results, { ...meta, interrupted: options.signal?.aborted ?? false });
    await write(report);
    if (recordingFailure) throw new RecordingError(recordingFailure);
    return { results, report, exitCode: reportExitCode(report) };
  } finally {
    await client.close();
  }
}

export type ReplayOptions = {
  definitions: AgentDefinition[];
  dir: string;
  /** Only these agents' / scenarios' recordings (`--agent`, `--scenario`). */
  agents?: string[] | undefined;
  scenarios?: string[] | undefined;
  stack?: string;
  out: Output;
  /** Judges `expect.judge` rubrics: from its cache where the recording was judged before. */
  judge?: Judge | undefined;
};

/**
 * Re-evaluates the current expectations against recorded calls (no network) and prints each call's
 * result lines as live smoke does (each unmet expectation with the nearest transcript lines).
 */
export async function replaySmoke(options: ReplayOptions): Promise<{ report: Report }> {
  const { results, notes } = await replayRecordings(options.dir, options.definitions, options);
  const { judge } = options;
  if (judge && judge.stats.requests > 0) {
    notes.push(
      `judge: ${judge.stats.requests} vote(s) were not in the judge cache (a new or changed rubric, another model, or --no-judge-cache) and were asked of ${judge.model}; ${judge.stats.cached} came from the cache`,
    );
  } else if (judge && judge.stats.cached > 0) {
    notes.push(`judge: all ${judge.stats.cached} vote(s) came from the judge cache (no request made)`);
  }
  const report = buildReport(results, {
    kind: "replay",
    ...(options.stack ? { stack: options.stack } : {}),
    notes: [`replayed from ${options.dir}`, ...notes],
  });
  for (const note of notes) options.out.write(`${note}\n`);
  for (const call of report.results) options.out.write(callLines(call));
  return { report };
}
