// Pinned-version smoke calls: plan the calls (a shard of them), place them, evaluate, gate
// (thresholds, latency), record, replay, report.
import { type ClientOptions, createClient } from "../api/index.ts";
import type { AgentDefinition } from "../definitions/index.ts";
import type { HeldAgent } from "../provider/index.ts";
import { type Report, type ReportFiles, reportExitCode, writeReports } from "../report/index.ts";
import { gateOf, type PlannedCall, type Progress } from "./call.ts";
import { scenarioKey, shardOf } from "./gates.ts";
import { planCalls, type Selection } from "./plan.ts";
import { replayRecordings, writeRecording } from "./record.ts";
import { buildReport, type ScenarioGate, type ScenarioResult } from "./reports.ts";
import { closingLines, type Output, runCalls } from "./run.ts";

export { dryRunText, type Estimate, estimate, estimateLine } from "./budget.ts";
// PlannedCall, planCalls, runCalls, callResult, scenarioSummaries: for the comparison and the
// behaviour preview, which place the same planned calls on other versions.
export type { PlannedCall, Progress } from "./call.ts";
export { parseShard, shardOf } from "./gates.ts";
export { mergeReports } from "./merge.ts";
export { planCalls, UsageError } from "./plan.ts";
export type { ScenarioResult } from "./reports.ts";
export { callResult, scenarioSummaries } from "./reports.ts";
export { closingLines, runCalls } from "./run.ts";

/** A recording could not be written (the run's calls are done; the reports are written first). */
export class RecordingError extends Error {
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
    ? all.filter((c) => shardOf(c.agent, c.scenario.name, c.iteration, shard.count) === shard.index)
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
};

/**
 * Plans (UsageError on a bad selection), places the calls, writes the reports, returns the exit
 * code: 0 every scenario passed its threshold (flaky ones too), 1 one failed, 3 one could not
 * complete. The reports are rewritten after every finished call, so a run killed part-way leaves
 * the results it had.
 */
export async function runSmoke(
  options: SmokeOptions,
): Promise<{ results: ScenarioResult[]; exitCode: number; report: Report }> {
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
    writing = writing.catch(() => {}).then(() => writeReports(report, files));
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
    const report = buildReport(results, meta);
    await write(report);
    if (recordingFailure) throw new RecordingError(recordingFailure);
    return { results, exitCode: reportExitCode(report), report };
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
  files?: ReportFiles;
  stack?: string;
  out: Output;
};

/** Re-evaluates the current expectations against recorded calls (no network); same exit codes as a run. */
export async function replaySmoke(options: ReplayOptions): Promise<{ exitCode: number; report: Report }> {
  const { results, notes } = await replayRecordings(options.dir, options.definitions, options);
  const report = buildReport(results, {
    kind: "replay",
    ...(options.stack ? { stack: options.stack } : {}),
    notes: [`replayed from ${options.dir}`, ...notes],
  });
  await writeReports(report, options.files ?? {});
  for (const note of notes) options.out.write(`${note}\n`);
  options.out.write(closingLines(report.scenarios));
  return { exitCode: reportExitCode(report), report };
}
