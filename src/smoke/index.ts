// Pinned-version smoke calls: plan the calls (a shard of them), place them, evaluate, gate
// (thresholds, latency), record, replay, report.
import { type Client, type ClientOptions, createClient } from "../api/index.ts";
import type { AgentDefinition } from "../definitions/index.ts";
import { IoError } from "../errors/index.ts";
import type { Judge } from "../judge/index.ts";
import type { HeldAgent } from "../provider/index.ts";
import { callLines } from "../render/index.ts";
import { type Report, reportExitCode } from "../results/index.ts";
import { gateOf, type PlannedCall, type Progress } from "./call.ts";
import { scenarioKey, shardOf } from "./gates.ts";
import { planCalls, type Selection } from "./plan.ts";
import { recordingTranscript, replayRecordings, writeRecording } from "./record.ts";

export { findRecording, MAX_RECORDING_BYTES } from "./record.ts";

import { buildReport, type ScenarioGate, type ScenarioResult } from "./reports.ts";
import { cutShort, type NotRunReason, notRunResult, type Output, type RunOptions, runCalls } from "./run.ts";

export { dryRunText, type Estimate, estimate, estimateLine } from "./budget.ts";
// PlannedCall, planCalls, runCalls, callResult, scenarioSummaries: for the comparison and the
// behaviour preview, which place the same planned calls on other versions.
export { gateOf, type PlannedCall } from "./call.ts";
export { parseShard, scenarioKey, summarizeScenarios } from "./gates.ts";
export { type MergedCalls, mergedSmokeReport, mergeShardCalls, type ShardReport } from "./merge.ts";
export { type CallOutcome, unknownVersionCalls } from "./outcome.ts";
export { planCalls, type Selection, selectedScenarios } from "./plan.ts";
export type { ScenarioGate, ScenarioResult } from "./reports.ts";
export { callResult, gatesOf, scenarioSummaries } from "./reports.ts";
export { cutShort, notRunResult, runCalls } from "./run.ts";
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
  held: Record<string, HeldAgent> | undefined,
  selection: Selection,
  shard?: Shard,
): SmokePlan {
  const all = smokePlanOf(planCalls(definitions, held, selection));
  if (!shard) return all;
  // A sequential test's calls all go to one shard: it decides on all of them, round by round.
  const calls = all.calls.filter(
    (c) =>
      shardOf(c.agent, c.scenario.name, c.scenario.confidence === undefined ? c.iteration : 1, shard.count) ===
      shard.index,
  );
  return { calls, gates: all.gates, shard };
}

/** A plan of calls made elsewhere (the behaviour preview's): every planned scenario's gate. */
export function smokePlanOf(calls: PlannedCall[]): SmokePlan {
  const gates = new Map<string, ScenarioGate>();
  for (const call of calls) {
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
  return { calls, gates };
}

export type NotRunOptions = NotRunReason & {
  stack?: string;
  /** The report's kind (default "smoke"). */
  kind?: Report["kind"];
  /** The run was stopped before it placed anything: the report says so, its exit code is 130. */
  interrupted?: boolean;
  notes?: string[];
};

/**
 * The report of a run that placed nothing (stopped before it started, a failed deploy), from its
 * plan: every planned call `not_run` with the reason, every planned scenario's gate. Nothing is
 * placed and nothing is asked of the service. Its exit code is 130 when `interrupted`, else 3
 * (planned calls never placed are never a pass).
 */
export function notRunReport(plan: SmokePlan, options: NotRunOptions): Report {
  const why = { reason: options.reason, ...(options.code ? { code: options.code } : {}) };
  return buildReport(
    plan.calls.map((call) => notRunResult(call, why)),
    {
      gates: plan.gates,
      ...(plan.shard ? { shard: plan.shard } : {}),
      ...(options.kind ? { kind: options.kind } : {}),
      ...(options.stack ? { stack: options.stack } : {}),
      ...(options.notes ? { notes: options.notes } : {}),
      interrupted: options.interrupted ?? false,
    },
  );
}

/** The calls to place: a plan made beforehand (the smoke job's), or what to plan them from. */
export type SmokeOptions = (
  | { plan: SmokePlan }
  /** `held`: what the stack holds of each agent (its state), whose versions the calls pin. */
  | { definitions: AgentDefinition[]; held: Record<string, HeldAgent> | undefined; selection: Selection }
) & {
  /** Where to call: a client the caller owns (and closes), or a connection this run opens and closes. */
  connection: Client | { baseUrl: string; apiKey: string; serviceVersion?: string; onRetry?: ClientOptions["onRetry"] };
  concurrency: number;
  /** The report so far, after every finished call (e.g. to rewrite the report files as the run goes). */
  onReport?: (report: Report) => unknown;
  /** Stop fixed repeats once their verdict cannot change (default true; a comparison needs every call). */
  earlyDecisions?: boolean;
  /** Writes each call's events and scenario here (JSON Lines, one file per call). */
  recordDir?: string;
  /** Which calls to record (default: all). */
  recordOnly?: (call: PlannedCall) => boolean;
  stack?: string;
  out: Output;
  /** Stops the run (e.g. on SIGINT): the reports still hold every call, finished or not. */
  signal?: AbortSignal;
  /** Progress of waiting calls; by default a status line on a terminal and a line every 15 s otherwise. */
  onProgress?: (progress: Progress) => void;
  /** Judges the scenarios' `expect.judge` rubrics (required when a planned scenario has any). */
  judge?: Judge | undefined;
  /** How the scenarios' callers send their lines, and a persona's model. */
  caller?: RunOptions["caller"];
  /** Said in the report (e.g. a judge model whose name moves). */
  notes?: string[];
};

/**
 * Plans (InvalidInputError on a bad selection), places the calls and returns their report (emit it with
 * src/report's `emitReport`: its exit code is 0 every scenario passed its threshold, flaky ones
 * too, 1 one failed, 3 one could not complete, 130 interrupted). `onReport` hears the report after
 * every finished call, so a run killed part-way can leave the results it had.
 */
export async function runSmoke(
  options: SmokeOptions,
): Promise<{ results: ScenarioResult[]; report: Report; exitCode: number }> {
  const plan = "plan" in options ? options.plan : planSmoke(options.definitions, options.held, options.selection);
  const owned = !("conversations" in options.connection);
  const client = "conversations" in options.connection ? options.connection : createClient(options.connection);
  const meta = {
    gates: plan.gates,
    ...(plan.shard ? { shard: plan.shard } : {}),
    ...(options.stack ? { stack: options.stack } : {}),
    ...(options.notes?.length ? { notes: options.notes } : {}),
  };
  let writing: Promise<unknown> = Promise.resolve();
  // Each report is handed on after the previous one was taken, even after a failed one.
  const write = (report: Report) => {
    writing = writing.catch(() => {}).then(() => options.onReport?.(report));
    return writing;
  };
  const recordings: Promise<unknown>[] = [];
  let recordingFailure: unknown;
  try {
    const results = await runCalls(client, plan.calls, {
      concurrency: options.concurrency,
      out: options.out,
      partial: plan.shard !== undefined,
      ...(options.earlyDecisions === false ? { earlyDecisions: false } : {}),
      keepEnvelopes: options.recordDir !== undefined,
      judge: options.judge,
      ...(options.caller ? { caller: options.caller } : {}),
      ...(options.signal ? { signal: options.signal } : {}),
      ...(options.onProgress ? { onProgress: options.onProgress } : {}),
      onResult: (result, results, call) => {
        if (options.recordDir && (options.recordOnly?.(call) ?? true)) {
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
    // Decided now, once: a signal after the last call ended interrupted nothing.
    const interrupted = (options.signal?.aborted ?? false) && cutShort(results);
    const report = buildReport(results, { ...meta, interrupted });
    await write(report).catch(() => {});
    if (recordingFailure) throw new RecordingError(recordingFailure);
    return { results, report, exitCode: reportExitCode(report) };
  } finally {
    if (owned) await client.close();
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
  /**
   * The judge of `expect.judge` rubrics (from its cache where the recording was judged before), set
   * up for the scenarios recorded (`agent\u0000scenario`): one with no recording needs none.
   */
  judgeFor?: (recorded: ReadonlySet<string>) => Promise<Judge | undefined>;
  /** Said in the report (e.g. a judge model whose name moves). */
  notes?: string[];
};

/**
 * Re-evaluates the current expectations against recorded calls (no network) and prints each call's
 * result lines as live smoke does (each unmet expectation with the nearest transcript lines).
 */
export async function replaySmoke(options: ReplayOptions): Promise<{ report: Report }> {
  let judge: Judge | undefined;
  const replayed = await replayRecordings(options.dir, options.definitions, {
    agents: options.agents,
    scenarios: options.scenarios,
    judgeFor: async (recorded) => {
      judge = await options.judgeFor?.(recorded);
      return judge;
    },
  });
  const { results } = replayed;
  const notes = [...(options.notes ?? []), ...replayed.notes];
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
