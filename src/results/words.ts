// The words every surface (terminal, job summary, HTML, JUnit, smoke's live lines, watch's
// messages) says a result in: an outcome, the rule a scenario is judged by, why its verdict is what
// it is, whose fault the failures are, the headline counts. One place, so a renderer adds a line,
// never a wording of its own.

import { allowedInconclusive, countScenarios, judgedCalls } from "./outcome.ts";
import type { CallOutcomeKind, CallResult, Report, ScenarioSummary } from "./schema.ts";
import type { TrafficReport } from "./traffic.ts";

type Policy = Pick<Report, "fail_on"> & Partial<Pick<Report, "allow_inconclusive">>;
type Share = TrafficReport["agents"][number]["current"]["failure_rate"];

const OUTCOME_WORDS: Record<CallOutcomeKind, string> = {
  passed: "passed",
  failed: "failed",
  error: "could not complete",
  not_run: "not run",
  interrupted: "interrupted",
  inconclusive: "inconclusive",
};

/** Why a call that was not evaluated ended so, for a reader: its message, else its outcome in words. */
export function unevaluatedText(call: Pick<CallResult, "outcome" | "error">): string {
  return call.error ?? OUTCOME_WORDS[call.outcome.kind];
}

/** ` (create POST /conversations → 404, code version_not_found)`: what a call's outcome says beyond its kind, if anything. */
export function outcomeFacts(call: Pick<CallResult, "outcome">): string {
  const { stage, request, http_status: status, code } = call.outcome;
  const where = [stage, request].filter(Boolean).join(" ");
  const parts = [
    `${where}${status === null ? "" : `${where ? " " : ""}→ ${status}`}`,
    ...(code === null ? [] : [`code ${code}`]),
  ].filter(Boolean);
  return parts.length > 0 ? ` (${parts.join(", ")})` : "";
}

/** 1,240 (thousands grouped, as the reader's figures are). */
export function figure(n: number): string {
  return Math.round(n).toLocaleString("en-US");
}

const LATENCY_WORDS: Record<string, string> = {
  first_response_ms: "first response",
  response_p50_ms: "response p50",
  response_p95_ms: "response p95",
  tool_ms: "tool p95",
};

/** "latency response p95 1,240 ms over 1,000 ms" for each bound exceeded. */
export function latencyReasons(s: ScenarioSummary): string[] {
  const latency = s.latency;
  if (!latency) return [];
  return latency.exceeded.map((name) => {
    const value = (latency as Record<string, unknown>)[name];
    const bound = figure(latency.bounds[name] ?? 0);
    const word = LATENCY_WORDS[name] ?? name;
    return typeof value === "number"
      ? `latency ${word} ${figure(value)} ms over ${bound} ms`
      : `latency ${word} not measured (bound ${bound} ms)`;
  });
}

/**
 * The rule a scenario's passes are judged by, as every surface names it: `min_pass N`, or for a
 * sequential test its pass rate (its `min_pass` is not its rule: a sequential test decides on the
 * calls it has, and passes with fewer passes than the rate × the cap).
 */
export function thresholdText(s: Pick<ScenarioSummary, "min_pass" | "sequential">): string {
  const q = s.sequential;
  if (!q && s.min_pass === 0) return "no threshold of its own: the comparison with the old version decides";
  return q ? `pass_rate ${q.pass_rate} ± ${q.margin} at confidence ${q.confidence}` : `min_pass ${s.min_pass}`;
}

/** `needs 8` beside `6 of 10 passed`; for a sequential test, its rule. */
export function needsText(s: Pick<ScenarioSummary, "min_pass" | "sequential">): string {
  return s.sequential ? `sequential test, ${thresholdText(s)}` : `needs ${s.min_pass}`;
}

/**
 * Why a scenario's verdict is what it is when its passes alone do not say so: a latency bound
 * missed, too few passes for its threshold, a call that could not complete. Empty when they do.
 */
export function verdictReason(s: ScenarioSummary, stopped = false): string[] {
  // A threshold below all iterations (min_pass) is worth naming when it was missed.
  // A sequential test's verdict is its own decision: no pass count is "needed".
  const needed =
    !s.sequential && s.passes < s.min_pass && s.min_pass < (s.planned_iterations ?? s.iterations)
      ? [`needs ${s.min_pass}`]
      : [];
  const compared = comparisonReason(s);
  if (compared) return [compared];
  switch (s.verdict) {
    case "failed": {
      const lost = s.shard_missing ? [`${s.shard_missing} in a missing shard's report, counted failed`] : [];
      return [...lost, ...(s.passes >= s.min_pass ? [] : needed), ...latencyReasons(s)];
    }
    case "error":
      return [stopped ? "interrupted: the run's stop cut its calls short" : "a call could not complete"];
    case "flaky":
      return [`${s.iterations - s.passes} failed, ${thresholdText(s)}`];
    case "inconclusive":
      // Else its calls were: a caller that strayed, a judge that did not settle (each call names whose fault).
      return [s.sequential ? "the sequential test reached its cap undecided" : "too few of its calls were conclusive"];
    case "not_run":
      return [s.iterations > 0 ? "its calls were never placed" : "no call in this report"];
    default:
      return [];
  }
}

/** Why a sequential comparison decided a scenario as it did (regressed or inconclusive), in words; "" otherwise. */
export function comparisonReason(s: Pick<ScenarioSummary, "comparison">): string {
  const q = s.comparison?.sequential;
  if (!q) return "";
  if (s.comparison?.outcome === "regression") {
    const when =
      q.pairs < q.max_pairs
        ? `decided after ${q.pairs} pairs of ${q.max_pairs}`
        : `decided at the cap of ${q.max_pairs} pairs`;
    return `regressed against the old version: ${when}`;
  }
  return s.comparison?.outcome === "inconclusive"
    ? `the comparison with the old version was inconclusive: neither regressed nor no worse (margin ${q.margin}) after ${q.pairs} pairs of ${q.max_pairs}`
    : "";
}

/** `2 agent, 1 caller`: whose fault the calls of one kind are (most first); empty when none of them carries one. */
export function faultBreakdown(
  calls: readonly Pick<CallResult, "outcome" | "fault">[],
  kind: "failed" | "error" | "inconclusive",
): string {
  const counts = new Map<string, number>();
  for (const call of calls) {
    if (call.outcome.kind === kind && call.fault) counts.set(call.fault, (counts.get(call.fault) ?? 0) + 1);
  }
  return [...counts.entries()]
    .sort(([a, x], [b, y]) => y - x || a.localeCompare(b))
    .map(([fault, n]) => `${n} ${fault}`)
    .join(", ");
}

/**
 * Whose fault the calls that failed or could not complete are, as every surface closes with it:
 * `calls 3 failed: 2 agent, 1 caller; 1 could not complete: 1 service`; empty when none did.
 */
export function faultsText(report: Pick<Report, "results">): string {
  const calls = judgedCalls(report);
  const parts = (["failed", "error", "inconclusive"] as const).flatMap((kind) => {
    const breakdown = faultBreakdown(calls, kind);
    const n = calls.filter((c) => c.outcome.kind === kind).length;
    return breakdown ? [`${n} ${kind === "error" ? "could not complete" : kind}: ${breakdown}`] : [];
  });
  return parts.length > 0 ? `calls ${parts.join("; ")}` : "";
}

/** `6 scenarios: 5 passed (1 flaky), 1 failed` — the headline unit, as on every surface. */
export function scenarioCounts(report: Pick<Report, "scenarios" | "results"> & Policy): string {
  const s = countScenarios(report);
  const allowed = allowedInconclusive(report);
  const parts = [`${s.passed} passed${s.flaky > 0 ? ` (${s.flaky} flaky)` : ""}`, `${s.failed} failed`];
  if (s.inconclusive) parts.push(`${s.inconclusive} inconclusive`);
  if (s.errors > 0) parts.push(`${s.errors} could not complete`);
  if (s.interrupted) parts.push(`${s.interrupted} interrupted`);
  if (s.tolerated > 0) parts.push(`${s.tolerated} still failing, tolerated by --fail-on regression`);
  if (allowed > 0) parts.push(`${allowed} inconclusive against the old version, allowed by --allow-inconclusive`);
  if (s.not_run > 0) parts.push(`${s.not_run} not run`);
  if (s.no_baseline) parts.push(`${s.no_baseline} without a baseline`);
  return `${s.scenarios} scenario${s.scenarios === 1 ? "" : "s"}: ${parts.join(", ")}`;
}

/** ` (answered by gpt-4o-2024-08-06, not gpt-4o)` where the judge's endpoint named another model than the one asked. */
export function answeredBy(j: { model: string; answered_model: string | null }): string {
  return j.answered_model !== null && j.answered_model !== j.model
    ? ` (answered by ${j.answered_model}, not ${j.model})`
    : "";
}

/** `12.5 % (3 of 24)`, or – when nothing was counted: a share as every surface and watch's messages say it. */
export function pct(s: Share): string {
  return s.value === null ? "–" : `${(s.value * 100).toFixed(1)} % (${s.count} of ${s.of})`;
}
