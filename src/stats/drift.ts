// The drift test: is a pinned version still as good as its blessed baseline? One sample of calls
// now, against the baseline's counts (not a second sample placed now: the baseline is the evidence
// a person approved), looked at after every round, anytime-valid.
//
// Pass rate. The baseline's rate is an estimate, so the test stands on its exact one-sided
// Clopper–Pearson lower bound at level α/2: `reference` ≤ the baseline's true rate except with
// probability α/2. Against it, Wald's SPRT (src/stats/sequential.ts, Ville's boundaries at α/2)
// weighs H_holding: p = reference against H_drifted: p = reference − margin. So:
//   false drifted:  P(drifted | the rate did not drop)          ≤ α/2 + α/2 = α   (union bound)
//   false holding:  P(holding | p ≤ reference − margin)         ≤ α/2
// at every look, whenever the looks are made; undecided at the cap: inconclusive.
//
// Latency (p95). Under no change a turn's response latency exceeds the baseline's p95 (the r-th of
// m turns) with probability (m − r + 1)/(m + 1) by exchangeability, and exceeds it by more than a
// slack (max(250 ms, 25 % of the p95): what a reader calls slower, not noise) at most that often. The
// test bets each turn now on exceeding p95 + slack (Wald's SPRT of that rate against 0.5 or three
// times it): `slower` once its wealth reaches 1/α. Turns within one call are not independent, so this α is approximate (the bench
// measures it); it never stops a scenario, only adds "slower" to what the calls showed.
import { logChoose } from "./binomial.ts";
import { type SequentialRule, sequentialDecision } from "./sequential.ts";

export type DriftRule = {
  /** α: the false-drifted rate (half spent on the baseline's bound, half on the test). */
  alpha: number;
  /** The pass-rate drop that is drift. */
  margin: number;
  /** The cap on calls now; undecided there is inconclusive. */
  maxCalls: number;
};

export type DriftDecision = "drifted" | "holding" | "inconclusive" | "continue";

/** P(X ≥ k) for X ~ Binomial(n, p). */
function upperTail(n: number, k: number, p: number): number {
  if (k <= 0) return 1;
  if (p <= 0) return 0;
  if (p >= 1) return 1;
  let sum = 0;
  for (let x = k; x <= n; x++) sum += Math.exp(logChoose(n, x) + x * Math.log(p) + (n - x) * Math.log(1 - p));
  return Math.min(1, sum);
}

/** The exact one-sided lower confidence bound of a rate (Clopper–Pearson): P(X ≥ passes | bound) = level. */
export function clopperPearsonLower(passes: number, n: number, level: number): number {
  if (passes <= 0 || n <= 0) return 0;
  let [low, high] = [0, passes / n];
  for (let i = 0; i < 60; i++) {
    const mid = (low + high) / 2;
    if (upperTail(n, passes, mid) < level) low = mid;
    else high = mid;
  }
  return low;
}

/**
 * The SPRT a baseline's counts set: H_holding p = reference against H_drifted p = reference −
 * margin (the margin shrunk to keep both inside (0, 1)), at α/2. Undefined when the baseline's
 * rate is too low for any drop to be told (its lower bound under 0.02).
 */
export function driftSequentialRule(
  baseline: { calls: number; passes: number },
  rule: DriftRule,
): (SequentialRule & { reference: number }) | undefined {
  const reference = clopperPearsonLower(baseline.passes, baseline.calls, rule.alpha / 2);
  if (reference < 0.02) return undefined;
  const margin = Math.min(rule.margin, reference / 2);
  // Rounded down to 4 places (read by people); the rule stays inside (0, 1).
  const round = (x: number) => Math.floor(x * 10_000) / 10_000;
  const half = round(margin / 2);
  return {
    reference: round(reference),
    passRate: round(reference) - half,
    margin: half,
    confidence: 1 - rule.alpha / 2,
    maxIterations: rule.maxCalls,
  };
}

/** The decision after a look: the SPRT's "failed" is drifted, its "passed" holding. */
export function driftDecision(passes: number, failures: number, sequential: SequentialRule): DriftDecision {
  const decision = sequentialDecision(passes, failures, sequential);
  return decision === "failed" ? "drifted" : decision === "passed" ? "holding" : decision;
}

/** Under no change, the chance a turn exceeds the r-th smallest of m baseline turns, r the p95's nearest rank. */
export function exceedanceRate(baselineTurns: number): number {
  const rank = Math.max(1, Math.ceil(0.95 * baselineTurns));
  return (baselineTurns - rank + 1) / (baselineTurns + 1);
}

export type LatencyDrift = { exceeded: number; turns: number; wealth: number; slower: boolean; over_ms: number };

/** How far over the baseline's p95 a turn must be to count as slower: max(250 ms, 25 % of the p95). */
export function latencySlack(p95Ms: number): number {
  return Math.max(250, 0.25 * p95Ms);
}

/** Whether the turns now exceed the baseline's p95 more often than no change allows (wealth ≥ 1/α). */
export function latencyDrift(
  turnsMs: readonly number[],
  baseline: { p95Ms: number; turns: number },
  alpha: number,
): LatencyDrift {
  const q0 = exceedanceRate(baseline.turns);
  const q1 = Math.min(0.9, Math.max(0.5, 3 * q0));
  let wealth = 1;
  let exceeded = 0;
  let slower = false;
  const overMs = baseline.p95Ms + latencySlack(baseline.p95Ms);
  for (const ms of turnsMs) {
    const over = ms > overMs;
    if (over) exceeded++;
    wealth *= over ? q1 / q0 : (1 - q1) / (1 - q0);
    // Once the wealth reached 1/α it is said (Ville's inequality bounds ever reaching it).
    slower ||= wealth >= 1 / alpha - 1e-9;
  }
  return { exceeded, turns: turnsMs.length, wealth, slower, over_ms: Math.round(overMs) };
}
