// The sequential pass-rate test: Wald's sequential probability ratio test (SPRT) of a pass rate
// with an indifference margin, looked at after every round of calls, truncated at a cap.
//
// A scenario states `pass_rate: θ`, `confidence: c`, a `margin: δ` (default min(0.05, θ/2,
// (1 − θ)/2)) and `max_iterations: N`. The test weighs H_fail: p = θ − δ against H_pass: p = θ + δ
// (the indifference zone of statistical model checking, Younes & Simmons 2006). Each pass adds
// ln((θ+δ)/(θ−δ)) to the log-likelihood ratio Λ, each failure ln((1−θ−δ)/(1−θ+δ)). After each
// round: Λ ≥ ln(1/α) → passed; Λ ≤ ln(β) → failed; else, at N calls, inconclusive; else another round.
// α = β = 1 − c.
//
// Error rates, valid at every look (so looking after every round, of any size, and stopping at the
// cap can only lower them): under H_fail the likelihood ratio is a nonnegative martingale with
// mean 1, so by Ville's inequality P(ever Λ ≥ ln(1/α)) ≤ α; symmetrically under H_pass
// P(ever Λ ≤ ln β) ≤ β. The test's operating characteristic is monotone in p, so:
//   false pass:  P(passed | true rate ≤ θ − δ) ≤ α = 1 − confidence
//   false fail:  P(failed | true rate ≥ θ + δ) ≤ β = 1 − confidence
// Inside the zone (θ − δ, θ + δ) either verdict may come, or — most often right at θ — inconclusive
// at the cap. These are the boundaries of Ville's inequality, not Wald's approximations
// ((1 − β)/α, β/(1 − α)), whose errors can exceed the nominal level slightly.

import { logChoose } from "./binomial.ts";

export type SequentialRule = {
  /** θ: the pass rate the scenario must reach. */
  passRate: number;
  /** c: 1 − c is the false-pass and the false-fail rate. */
  confidence: number;
  /** δ: half the indifference zone around θ. */
  margin: number;
  /** N: the cap on calls; reaching it undecided is inconclusive. */
  maxIterations: number;
};

export type SequentialDecision = "passed" | "failed" | "inconclusive" | "continue";

/** The default margin for a pass rate: 0.05, or less so that θ ± δ stays inside (0, 1). */
export function defaultMargin(passRate: number): number {
  // Rounded: (1 − 0.9)/2 is 0.04999… in floating point, and a margin is read by people.
  return Math.round(Math.min(0.05, passRate / 2, (1 - passRate) / 2) * 10_000) / 10_000;
}

export type Boundaries = { passStep: number; failStep: number; upper: number; lower: number };

/** The test's steps and boundaries on the log-likelihood ratio. */
export function boundaries(rule: Pick<SequentialRule, "passRate" | "confidence" | "margin">): Boundaries {
  const p0 = rule.passRate - rule.margin;
  const p1 = rule.passRate + rule.margin;
  const error = 1 - rule.confidence;
  return {
    passStep: Math.log(p1 / p0),
    failStep: Math.log((1 - p1) / (1 - p0)),
    upper: Math.log(1 / error),
    lower: Math.log(error),
  };
}

/** The log-likelihood ratio of `passes` and `failures` (positive favours passing). */
export function logLikelihoodRatio(passes: number, failures: number, rule: SequentialRule): number {
  const b = boundaries(rule);
  return passes * b.passStep + failures * b.failStep;
}

/** The decision after a look at `passes` and `failures` (errors count as failures). */
export function sequentialDecision(passes: number, failures: number, rule: SequentialRule): SequentialDecision {
  const b = boundaries(rule);
  const llr = passes * b.passStep + failures * b.failStep;
  // A small tolerance: k steps that reach a boundary exactly must not miss it by rounding.
  if (llr >= b.upper - 1e-9) return "passed";
  if (llr <= b.lower + 1e-9) return "failed";
  return passes + failures >= rule.maxIterations ? "inconclusive" : "continue";
}

/** The fewest calls that can pass (all passing) and that can fail (all failing). */
export function fewestCalls(rule: Pick<SequentialRule, "passRate" | "confidence" | "margin">): {
  toPass: number;
  toFail: number;
} {
  const b = boundaries(rule);
  return { toPass: Math.ceil(b.upper / b.passStep - 1e-9), toFail: Math.ceil(b.lower / b.failStep - 1e-9) };
}

/**
 * The fixed-sample design with the same error rates: the fewest calls n and passes needed c with
 * P(≥ c passes | θ − δ) ≤ α and P(< c passes | θ + δ) ≤ β (exact binomial). For the bench.
 */
export function fixedDesign(rule: Pick<SequentialRule, "passRate" | "confidence" | "margin">, limit = 5000) {
  const p0 = rule.passRate - rule.margin;
  const p1 = rule.passRate + rule.margin;
  const error = 1 - rule.confidence;
  for (let n = 1; n <= limit; n++) {
    // The smallest c with upper tail at p0 ≤ α; then check the lower tail at p1.
    const tail0 = upperTails(n, p0);
    const c = tail0.findIndex((t) => t <= error);
    if (c < 0) continue;
    const below = 1 - (upperTails(n, p1)[c] ?? 0);
    if (below <= error) return { n, minPass: c };
  }
  return undefined;
}

/** P(X ≥ c) for c = 0 … n, X ~ Binomial(n, p). */
function upperTails(n: number, p: number): number[] {
  const pmf = Array.from({ length: n + 1 }, (_, x) =>
    Math.exp(logChoose(n, x) + x * Math.log(p) + (n - x) * Math.log(1 - p)),
  );
  const tails = new Array<number>(n + 2).fill(0);
  for (let x = n; x >= 0; x--) tails[x] = (tails[x + 1] ?? 0) + (pmf[x] ?? 0);
  return tails.slice(0, n + 1);
}
