// Smoke results → the one report value (src/results; src/report renders it to JSON, JUnit and the rest).
// Nothing secret is in a result: the stream token is never stored in one.

import type { EventEnvelope } from "../api/index.ts";
import type { CallerFailure, CallerLine } from "../caller/index.ts";
import type { Transport } from "../contract/index.ts";
import {
  type CallLatency,
  type CallOutcomeKind,
  type CallResult,
  type Report,
  type ReportEntry,
  runReport,
  type ScenarioSummary,
} from "../results/index.ts";
import type { Assertion, Observation } from "./expectations.ts";
import { type Gate, scenarioKey, summarizeScenarios } from "./gates.ts";
import type { EntryTime } from "./observe.ts";
import { type CallOutcome, faultOf, reportOutcome } from "./outcome.ts";
import { displayLines, type ObservedEntry, speakerOf } from "./transcript.ts";

/** A call's status for a reader: an interrupted call is an "error" here (its `outcome` says which). */
export type ScenarioStatus = "passed" | "failed" | "error" | "not_run" | "inconclusive";

export type ScenarioResult = {
  agent: string;
  scenario: string;
  iteration: number;
  versionId: string;
  conversationId?: string;
  /** The stream's address, without the token. */
  eventsUrl?: string;
  transport: Transport;
  status: ScenarioStatus;
  /** How the call ended, typed: what every decision reads (`status` and `error` are for people). */
  outcome: CallOutcome;
  assertions: Assertion[];
  /** Why the call could not be completed (service unreachable, stream failed or timed out), in words. */
  error?: string;
  observation?: Observation;
  timings: { timeToFirstAgentMessageMs?: number; durationMs: number };
  /** What the scenario is judged against (default: every call of it must pass, no latency bounds). */
  gate?: Gate;
  /** Latency from the events' `created_at`. */
  latency?: CallLatency;
  /** ISO time the call started. */
  startedAt?: string;
  livemode?: boolean;
  /** The caller's lines, when the scenario has a caller: each turn, its text, when sent and heard. */
  callerLines?: CallerLine[];
  /** A persona's model: the one asked and the one its endpoint said answered. */
  callerModel?: { asked: string; answered: string | null };
  /** Why the caller failed the call (kept in a recording, so a replay fails it alike). */
  callerFailure?: CallerFailure;
  /** In a comparison, the order of the old/new pair this call belongs to (placed together). */
  pairOrder?: "old_first" | "new_first";
  /** The events as received (for `--record`; never in a report). */
  envelopes?: EventEnvelope[];
};

/** Calls by outcome: `errors` could not complete (the service, the network, a timeout, the judge). */
export type Summary = { passed: number; failed: number; errors: number; interrupted: number; notRun: number };

export function summarize(results: readonly ScenarioResult[]): Summary {
  const count = (kind: CallOutcomeKind) => results.filter((r) => r.outcome.kind === kind).length;
  return {
    passed: count("passed"),
    failed: count("failed"),
    errors: count("error"),
    interrupted: count("interrupted"),
    notRun: count("not_run"),
  };
}

/** The status a reader sees for an outcome (an interrupted call is an error there). */
export function statusOf(kind: CallOutcomeKind): ScenarioStatus {
  return kind === "interrupted" ? "error" : kind;
}

/** One call in the JSON report's shape (see src/results). */
export function callResult(r: ScenarioResult, side: "new" | "old" = "new"): CallResult {
  const times = r.observation?.entryTimes ?? [];
  return {
    agent: r.agent,
    scenario: r.scenario,
    iteration: r.iteration,
    side,
    status: statusOf(r.outcome.kind),
    version_id: r.versionId,
    conversation_id: r.conversationId ?? null,
    events_url: r.eventsUrl ?? null,
    transport: r.transport,
    livemode: r.livemode ?? false,
    error: r.error ?? null,
    assertions: r.assertions.map(({ kind, key, description, passed, detail, context, judgement }) => ({
      kind,
      key,
      description,
      passed,
      detail: detail ?? null,
      context: passed ? [] : (context ?? []),
      ...(judgement ? { judgement } : {}),
    })),
    transcript: r.observation ? displayLines(r.observation) : [],
    entries: (r.observation?.entries ?? []).map((entry, i) =>
      reportEntry(entry, times[i], r.observation ? speakerOf(r.observation, i) : undefined),
    ),
    // Arguments decoded when the service sent a JSON string; `rawArguments` keeps what it sent.
    tool_calls: r.observation?.toolCalls ?? [],
    procedures: r.observation?.procedures ?? [],
    latency: r.latency ?? { first_response_ms: null, response_ms: [], tool_ms: [] },
    timings: {
      time_to_first_agent_message_ms: r.timings.timeToFirstAgentMessageMs ?? null,
      duration_ms: r.timings.durationMs,
    },
    started_at: r.startedAt ?? null,
    outcome: reportOutcome(r.outcome),
    ...(r.callerModel ? { caller_model: r.callerModel } : {}),
    ...(r.pairOrder ? { pair_order: r.pairOrder } : {}),
    fault: faultOf(r.outcome),
  };
}

function reportEntry(
  entry: ObservedEntry,
  time: EntryTime | undefined,
  by: "caller" | "not_caller" | undefined,
): ReportEntry {
  const at_ms = time?.atMs ?? null;
  switch (entry.kind) {
    case "agent":
      return { kind: "agent", text: entry.message.text, complete: entry.message.complete, at_ms };
    case "user":
      return { kind: "user", text: entry.text, at_ms, ...(by ? { by } : {}) };
    case "tool":
      return {
        kind: "tool",
        name: entry.call.name,
        call_id: entry.call.callId,
        arguments: entry.call.arguments,
        ...(entry.call.returned ? { result: entry.call.error ?? entry.call.result } : {}),
        at_ms,
        returned_at_ms: time?.returnedAtMs ?? null,
      };
    case "error":
      return { kind: "error", error: entry.error, at_ms };
  }
}

export type ScenarioGate = Gate & { agent: string; scenario: string; versionId: string };

/** The gates of the scenarios the results belong to, in the order they first appear. */
export function gatesOf(results: readonly ScenarioResult[]): Map<string, ScenarioGate> {
  const byKey = new Map<string, ScenarioResult[]>();
  for (const r of results) {
    const key = scenarioKey(r.agent, r.scenario, r.versionId);
    byKey.set(key, [...(byKey.get(key) ?? []), r]);
  }
  const gates = new Map<string, ScenarioGate>();
  for (const [key, list] of byKey) {
    const first = list[0] as ScenarioResult;
    const gate = list.find((r) => r.gate)?.gate ?? { plannedIterations: list.length, minPass: list.length, bounds: {} };
    gates.set(key, { ...gate, agent: first.agent, scenario: first.scenario, versionId: first.versionId });
  }
  return gates;
}

/** Scenario verdicts over their iterations, in planned order (threshold `min_pass`, default all). */
export function scenarioSummaries(
  results: readonly ScenarioResult[],
  options: { gates?: ReadonlyMap<string, ScenarioGate>; partial?: boolean } = {},
): ScenarioSummary[] {
  return summarizeScenarios(
    results.map((r) => callResult(r)),
    options.gates ?? gatesOf(results),
    options.partial ?? false,
  );
}

export type ReportMeta = {
  kind?: Report["kind"];
  stack?: string;
  shard?: { index: number; count: number };
  /** Every planned scenario (a shard's report lists the scenarios of the other shards too). */
  gates?: ReadonlyMap<string, ScenarioGate>;
  notes?: string[];
  /** The run was stopped (SIGINT/SIGTERM): the report says so, its exit code is 130. */
  interrupted?: boolean;
};

/** The one report of a run: every format is rendered from it. */
export function buildReport(results: readonly ScenarioResult[], meta: ReportMeta = {}): Report {
  return reportFromCalls(
    results.map((r) => callResult(r)),
    meta.gates ?? gatesOf(results),
    meta,
  );
}

/** A report from call results in the report's shape (also what `report merge` rebuilds). */
export function reportFromCalls(
  calls: readonly CallResult[],
  gates: ReadonlyMap<string, ScenarioGate>,
  meta: ReportMeta = {},
): Report {
  const versions: Record<string, string> = {};
  for (const gate of gates.values()) versions[gate.agent] ??= gate.versionId;
  return runReport({
    kind: meta.kind ?? "smoke",
    stack: meta.stack ?? null,
    versions,
    shard: meta.shard ?? null,
    scenarios: summarizeScenarios(calls, gates, meta.shard !== undefined),
    results: [...calls],
    notes: meta.notes ?? [],
    interrupted: meta.interrupted ?? false,
  });
}
