// The drift test: is a pinned version still as good as its blessed baseline? One sample of calls
// now, against the baseline's counts (not a second sample placed now: the baseline is the evidence
// a person approved), looked at after every round, anytime-valid.
//
// Pass rate. The baseline's rate is an estimate: the test stands on its exact one-sided
// Clopper–Pearson lower bound `reference` at a level γ. Against it, Wald's SPRT
// (src/stats/sequential.ts, Ville's boundaries at α/2) weighs H_holding: p = reference against
// H_drifted: p = reference − margin. γ is not α/2 (a union bound α/2 + α/2, which left false
// drifted at 0.0 % in the bench and cost calls): it is the largest γ ≤ 0.5 whose false-drifted
// rate, with the baseline's counts treated as data, is at most α for every true rate p:
//   sup_p Σ_x Binomial(x; B, p) · Ville(x, p) ≤ α
// where Ville(x, p) = e^(−λL) bounds the chance that the SPRT set by x passes of B ever says
// drifted when the rate now is p (λ > 0 the root of E_p[e^(λ·step)] = 1, L = ln(2/α); 1 when the
// steps drift up). So:
//   false drifted:  P(drifted | the rate did not drop)          ≤ α   (checked on a grid of p)
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
import { boundaries, type SequentialRule, sequentialDecision } from "./sequential.ts";

export type DriftRule = {
  /** α: the false-drifted rate (the baseline's bound and the test calibrated together, see above). */
  alpha: number;
  /** The pass-rate drop that is drift. */
  margin: number;
  /** The cap on calls now; undecided there is inconclusive. */
  maxCalls: number;
};

export type DriftDecision = "drifted" | "holding" | "inconclusive" | "continue";

/** P(X ≥ k) for X ~ Binomial(n, p): the terms by their ratio, one logChoose for the first. */
function upperTail(n: number, k: number, p: number): number {
  if (k <= 0) return 1;
  if (p <= 0) return 0;
  if (p >= 1) return 1;
  let term = Math.exp(logChoose(n, k) + k * Math.log(p) + (n - k) * Math.log(1 - p));
  let sum = term;
  for (let x = k; x < n; x++) {
    term *= ((n - x) / (x + 1)) * (p / (1 - p));
    sum += term;
  }
  return Math.min(1, sum);
}

/** ln C(n, x) for x = 0 … n, each from the one before. */
function logChooses(n: number): number[] {
  const logs = [0];
  for (let x = 0; x < n; x++) logs.push((logs[x] ?? 0) + Math.log(n - x) - Math.log(x + 1));
  return logs;
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

/** The SPRT set by a reference rate (rounded to 4 places: read by people), or undefined under 0.02. */
function sprtAt(reference: number, rule: DriftRule): (SequentialRule & { reference: number }) | undefined {
  if (reference < 0.02) return undefined;
  const margin = Math.min(rule.margin, reference / 2);
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

/**
 * Ville's bound on the SPRT ever saying drifted when the rate now is p: each pass steps its
 * drifted statistic by −a, each failure by +c; e^(λS) is a martingale for the λ > 0 with
 * p·e^(−λa) + (1 − p)·e^(λc) = 1, so P(ever S ≥ L) ≤ e^(−λL).
 */
export function driftedBound(sequential: SequentialRule, p: number): number {
  const b = boundaries(sequential);
  const [a, c, L] = [b.passStep, -b.failStep, -b.lower];
  if (-p * a + (1 - p) * c >= 0) return 1;
  // f(λ) = p·e^(−λa) + (1 − p)·e^(λc) − 1 is convex with f(0) = 0, f'(0) < 0: Newton's steps from
  // the right of its positive root fall onto it from above, here to within 1e-12.
  const f = (l: number) => p * Math.exp(-l * a) + (1 - p) * Math.exp(l * c) - 1;
  const slope = (l: number) => -a * p * Math.exp(-l * a) + c * (1 - p) * Math.exp(l * c);
  let lambda = 1;
  while (f(lambda) < 0) lambda *= 2;
  for (let i = 0; i < 100; i++) {
    const step = f(lambda) / slope(lambda);
    lambda -= step;
    if (step < 1e-12) break;
  }
  return Math.min(1, Math.exp(-lambda * L));
}

/** The true rates the level is checked at: 0.005 … 0.995, and 0.999. */
const RATES = [...Array.from({ length: 199 }, (_, i) => (i + 1) / 200), 0.999];
const levels = new Map<string, number>();

/** The worst false-drifted rate over true rates p when the reference is the bound at `level`. */
export function worstFalseDrifted(calls: number, level: number, rule: DriftRule): number {
  const rules = Array.from({ length: calls + 1 }, (_, x) => sprtAt(clopperPearsonLower(x, calls, level), rule));
  const chooses = logChooses(calls);
  let worst = 0;
  for (const p of RATES) {
    let sum = 0;
    for (let x = 0; x <= calls; x++) {
      const sequential = rules[x];
      const weight = Math.exp((chooses[x] ?? 0) + x * Math.log(p) + (calls - x) * Math.log(1 - p));
      if (sequential && weight > 1e-12) sum += weight * driftedBound(sequential, p);
    }
    worst = Math.max(worst, sum);
  }
  return worst;
}

/**
 * γ, the level of the baseline's lower bound: the largest in [α/2, 0.5] (bisected) whose worst
 * false-drifted rate is within α. Depends only on the baseline's calls and the rule: cached.
 */
export function referenceLevel(calls: number, rule: DriftRule): number {
  const key = `${calls}:${rule.alpha}:${rule.margin}`;
  const cached = levels.get(key);
  if (cached !== undefined) return cached;
  let [low, high] = [rule.alpha / 2, 0.5];
  if (worstFalseDrifted(calls, high, rule) <= rule.alpha) low = high;
  else
    for (let i = 0; i < 10; i++) {
      const mid = (low + high) / 2;
      if (worstFalseDrifted(calls, mid, rule) <= rule.alpha) low = mid;
      else high = mid;
    }
  levels.set(key, low);
  return low;
}

/**
 * The SPRT a baseline's counts set: H_holding p = reference (its lower bound at `referenceLevel`)
 * against H_drifted p = reference − margin (the margin shrunk to keep both inside (0, 1)), at α/2.
 * Undefined when the baseline's rate is too low for any drop to be told (its lower bound under 0.02).
 */
export function driftSequentialRule(
  baseline: { calls: number; passes: number },
  rule: DriftRule,
): (SequentialRule & { reference: number }) | undefined {
  const level = referenceLevel(baseline.calls, rule);
  return sprtAt(clopperPearsonLower(baseline.passes, baseline.calls, level), rule);
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
