// The decisions of a gate, as pure functions over the report's call results: a scenario's verdict
// over its iterations (threshold, flaky), its pass rate with a Wilson interval, latency percentiles
// against `expect.latency`, which shard a call belongs to, and the worst-case call minutes.
import { createHash } from "node:crypto";
import type { LatencyBounds } from "../definitions/index.ts";
import {
  type CallResult,
  endedOnItsOwn,
  type LatencySummary,
  type ScenarioSummary,
  type Verdict,
} from "../results/index.ts";
import {
  boundaries,
  fixedDecision,
  logLikelihoodRatio,
  passHatK,
  passHatKs,
  round4,
  type SequentialRule,
  sequentialDecision,
  wilsonInterval,
} from "../stats/index.ts";
import { OUTCOME_CODES } from "./outcome.ts";

/**
 * What a scenario is judged against: its planned iterations (a sequential test's cap), the passes
 * it needs, its latency bounds, the sequential test (`pass_rate` with `confidence`) and a pass^k
 * requirement.
 */
export type Gate = {
  plannedIterations: number;
  minPass: number;
  bounds: LatencyBounds;
  sequential?: SequentialRule;
  passK?: { k: number; min: number };
};

export type GateDecision = "passed" | "failed" | "inconclusive" | "continue";

/**
 * Whether a scenario's verdict is settled by `passes` and `failures` so far (errors count as
 * failures): the sequential test's decision, or the fixed repeats' curtailment. A pass^k
 * requirement needs every planned call, so with one only a failure settles fixed repeats early.
 */
export function gateDecision(gate: Gate, passes: number, failures: number): GateDecision {
  if (gate.sequential) return sequentialDecision(passes, failures, gate.sequential);
  const decision = fixedDecision(passes, failures, gate.plannedIterations, gate.minPass);
  if (decision === "passed" && gate.passK && passes + failures < gate.plannedIterations) return "continue";
  return decision;
}

/** The calls in the order they finished (start + duration), else in iteration order. */
function finishOrder(calls: readonly CallResult[]): CallResult[] {
  const end = (c: CallResult) => (c.started_at ? Date.parse(c.started_at) + c.timings.duration_ms : Number.NaN);
  if (calls.some((c) => Number.isNaN(end(c)))) return [...calls].sort((a, b) => a.iteration - b.iteration);
  return [...calls].sort((a, b) => end(a) - end(b) || a.iteration - b.iteration);
}

const passed = (c: CallResult) => c.outcome.kind === "passed";
/** A merged call whose shard has no report: counted as a failed iteration, but no evidence of anything. */
const lostInMerge = (c: CallResult) => c.outcome.code === OUTCOME_CODES.shardMissing;
/** The calls that ended on their own: the only ones that count as passes or failures. */
const ended = (calls: readonly CallResult[]) => calls.filter((c) => endedOnItsOwn(c.outcome.kind));

/** How many finished calls settled the verdict, when fewer than planned; null otherwise. */
function decidedAfter(all: readonly CallResult[], gate: Gate): number | null {
  // No threshold (a sequential comparison's scenario without one): nothing its passes decide.
  if (gate.minPass === 0 && !gate.sequential) return null;
  const calls = ended(all);
  if (gate.sequential) {
    const passes = calls.filter(passed).length;
    const decision = gateDecision(gate, passes, calls.length - passes);
    return (decision === "passed" || decision === "failed") && calls.length < gate.plannedIterations
      ? calls.length
      : null;
  }
  let passes = 0;
  let failures = 0;
  for (const [index, call] of finishOrder(calls).entries()) {
    if (passed(call)) passes++;
    else failures++;
    if (gateDecision(gate, passes, failures) !== "continue") {
      return index + 1 < gate.plannedIterations ? index + 1 : null;
    }
  }
  return null;
}

/** The Wilson score interval (95 %) of `passes` out of `n`, with the rate, rounded; null for no trials. */
export function wilson(passes: number, n: number, z = 1.959964): { value: number; low: number; high: number } | null {
  const interval = wilsonInterval(passes, n, z);
  return interval && { value: round4(passes / n), low: round4(interval.low), high: round4(interval.high) };
}

/** The nearest-rank percentile (the smallest value with at least p % of values at or below it). */
export function percentile(values: readonly number[], p: number): number | null {
  if (values.length === 0) return null;
  const sorted = [...values].sort((a, b) => a - b);
  const rank = Math.max(1, Math.ceil((p / 100) * sorted.length));
  return sorted[rank - 1] ?? null;
}

const LATENCY_NAMES = ["first_response_ms", "response_p50_ms", "response_p95_ms", "tool_ms"] as const;

/**
 * A scenario's latency over all its calls: first response and tool round trip as their 95th
 * percentile, response latency at p50 and p95 over every user turn of every iteration.
 */
export function latencySummary(calls: readonly CallResult[], bounds: LatencyBounds): LatencySummary {
  const firsts = calls.map((c) => c.latency.first_response_ms).filter((v): v is number => v !== null);
  const responses = calls.flatMap((c) => c.latency.response_ms);
  const tools = calls.flatMap((c) => c.latency.tool_ms);
  const measured = {
    first_response_ms: percentile(firsts, 95),
    response_p50_ms: percentile(responses, 50),
    response_p95_ms: percentile(responses, 95),
    tool_ms: percentile(tools, 95),
  };
  const set = Object.fromEntries(
    LATENCY_NAMES.filter((name) => bounds[name] !== undefined).map((name) => [name, bounds[name] as number]),
  );
  // A bound on something never measured (no tool call, no user turn) is not met either.
  const exceeded = Object.entries(set)
    .filter(([name, bound]) => {
      const value = measured[name as keyof typeof measured];
      return value === null || value > bound;
    })
    .map(([name]) => name);
  return { ...measured, bounds: set, exceeded };
}

/**
 * The verdict of one scenario, from the calls that ended on their own (passed, failed, error). A
 * call the run's stop cut short (`interrupted`) or never placed (`not_run`) is neither a pass nor
 * a failure: it is a missing iteration, and the scenario could not complete unless the calls that
 * did end settle its verdict. `partial`: the calls are one shard's, so a threshold can only be
 * known missed (too many failures already) and latency bounds wait for the merged report. In a
 * whole run, planned calls that have no result count as missing too — unless the verdict was
 * settled without them (they were not needed). None placed: `not_run`. A sequential test that
 * reached no boundary is inconclusive; a pass^k requirement below its minimum (or with fewer than
 * k calls) fails a pass.
 */
export function scenarioVerdict(
  calls: readonly CallResult[],
  gate: Gate,
  latency: LatencySummary,
  partial: boolean,
): Verdict {
  if (calls.every((c) => c.outcome.kind === "not_run")) return "not_run";
  const done = ended(calls);
  const failing = done.filter((c) => !passed(c));
  // A call whose caller strayed (or whose judge did not settle) decided nothing: a missing iteration, but no infrastructure's.
  const strayed = calls.filter((c) => c.outcome.kind === "inconclusive").length;
  const unfinished = calls.length - done.length - strayed;
  const infrastructure = unfinished > 0 || failing.some((c) => c.outcome.kind === "error");
  const passes = done.length - failing.length;
  if (gate.sequential) {
    const decision = gateDecision(gate, passes, failing.length);
    if (decision !== "passed") return infrastructure ? "error" : decision === "failed" ? "failed" : "inconclusive";
  } else {
    // Placed again, a strayed call's iteration may have been made up by a conclusive one.
    const missing = partial ? unfinished + strayed : Math.max(0, gate.plannedIterations - done.length);
    const allowed = Math.max(0, gate.plannedIterations - gate.minPass);
    if (failing.length + missing > allowed) {
      if (infrastructure) return "error";
      return failing.length > allowed || strayed === 0 ? "failed" : "inconclusive";
    }
  }
  if (!partial && latency.exceeded.length > 0) return "failed";
  if (!partial && gate.passK) {
    const value = passHatK(passes, done.length, gate.passK.k);
    if (value === null) return "inconclusive";
    if (value < gate.passK.min) return "failed";
  }
  return failing.length > 0 ? "flaky" : "passed";
}

/** The statistics a scenario's summary adds for repeats: pass^k, the early decision, the sequential test. */
function repeatFigures(all: readonly CallResult[], gate: Gate, verdict: Verdict, partial: boolean) {
  // Only calls that ended on their own settle anything: a cut-short or unplaced call is never "not
  // needed", and a missing shard's call (counted failed in a merge) decides nothing.
  const counted = ended(all);
  const list = counted.filter((c) => !lostInMerge(c));
  const lost = counted.length - list.length;
  const passes = list.filter(passed).length;
  // A scenario with a call cut short, never placed or in a missing shard did not complete: nothing
  // was "decided after" a few calls and no call was "not needed".
  const stopped = counted.length < all.length || lost > 0;
  const decided = verdict !== "not_run" && !stopped && gateDecision(gate, passes, list.length - passes) !== "continue";
  const saved = !partial && decided ? Math.max(0, gate.plannedIterations - all.length) : 0;
  const figures: Partial<ScenarioSummary> = {
    decided_after: partial || stopped ? null : decidedAfter(list, gate),
    calls_saved: saved,
    pass_k: list.length >= 2 ? passHatKs(passes, list.length) : [],
    ...(lost > 0 ? { shard_missing: lost } : {}),
  };
  if (gate.passK) {
    const value = passHatK(passes, list.length, gate.passK.k);
    figures.pass_k_required = {
      k: gate.passK.k,
      min: gate.passK.min,
      value: value === null ? null : round4(value),
      met: value !== null && value >= gate.passK.min,
    };
  }
  if (gate.sequential) {
    const rule = gate.sequential;
    const b = boundaries(rule);
    figures.sequential = {
      pass_rate: rule.passRate,
      confidence: rule.confidence,
      margin: rule.margin,
      max_iterations: rule.maxIterations,
      log_likelihood_ratio: round4(logLikelihoodRatio(passes, list.length - passes, rule)),
      pass_boundary: round4(b.upper),
      fail_boundary: round4(b.lower),
    };
  }
  return figures;
}

/** Summaries of a report's scenarios, one per (agent, scenario, version), in the order given. */
export function summarizeScenarios(
  calls: readonly CallResult[],
  gates: ReadonlyMap<string, Gate & { agent: string; scenario: string; versionId: string }>,
  partial: boolean,
): ScenarioSummary[] {
  const byKey = new Map<string, CallResult[]>();
  for (const key of gates.keys()) byKey.set(key, []);
  for (const call of calls) {
    const key = scenarioKey(call.agent, call.scenario, call.version_id);
    byKey.set(key, [...(byKey.get(key) ?? []), call]);
  }
  return [...byKey.entries()].map(([key, list]) => {
    const first = list[0];
    const gate = gates.get(key) ?? {
      agent: first?.agent ?? "",
      scenario: first?.scenario ?? "",
      versionId: first?.version_id ?? "",
      plannedIterations: list.length,
      minPass: list.length,
      bounds: {},
    };
    const passes = list.filter(passed).length;
    const latency = latencySummary(list, gate.bounds);
    const verdict = scenarioVerdict(list, gate, latency, partial);
    const done = ended(list).length;
    return {
      agent: gate.agent,
      scenario: gate.scenario,
      version_id: gate.versionId,
      verdict,
      iterations: list.length,
      planned_iterations: gate.plannedIterations,
      passes,
      min_pass: gate.minPass,
      pass_rate: wilson(passes, done),
      latency,
      ...repeatFigures(list, gate, verdict, partial),
    };
  });
}

export function scenarioKey(agent: string, scenario: string, versionId: string): string {
  return `${agent}\u0000${scenario}\u0000${versionId}`;
}

/**
 * The shard (1…count) a call belongs to: a hash of agent, scenario and iteration, so adding or
 * removing a scenario moves no other call between shards.
 */
export function shardOf(agent: string, scenario: string, iteration: number, count: number): number {
  const digest = createHash("sha256").update(`${agent}\u0000${scenario}\u0000${iteration}`).digest();
  return (digest.readUInt32BE(0) % count) + 1;
}

/** `i/n` → {index, count}, or undefined when it is not a shard. */
export function parseShard(text: string): { index: number; count: number } | undefined {
  const match = /^(\d+)\/(\d+)$/.exec(text.trim());
  if (!match) return undefined;
  const index = Number(match[1]);
  const count = Number(match[2]);
  if (count < 1 || index < 1 || index > count) return undefined;
  return { index, count };
}
