// The sequential comparison of old and new: pairs of calls (one on each version, placed together)
// looked at after every round, until a test by betting decides "regressed" or "no worse", or the
// cap on pairs leaves it "inconclusive".
//
// Each pair gives D = new − old ∈ {−1, 0, 1} (1 a pass, 0 a failure; an error counts as a failure),
// whose mean is Δ = p_new − p_old. Two one-sided tests of the mean of a bounded variable by betting
// (Waudby-Smith & Ramdas 2023, "Estimating means of bounded random variables by betting", JRSS-B
// 86(1); Ramdas, Grünwald, Vovk & Shafer 2023, "Game-theoretic statistics and safe anytime-valid
// inference", Statistical Science 38(4)):
//   regressed: H0 Δ ≥ 0 (the new version is not worse), bet on Y = −D of the discordant pairs a
//              constant λ: Wald's SPRT (Wald 1945, "Sequential tests of statistical hypotheses",
//              Ann. Math. Statist. 16(2)) of McNemar's sign of the discordant pairs,
//              P(new worse | discordant) = 1/2 against (1 + λ)/2. Wald's SPRT is designed for one
//              alternative, and the cap says which drops a scenario means to find: λ is the Kelly bet
//              for the smallest drop from a pass rate of 0.95 that the test decides, by Wald's
//              approximation of its mean length, within half of max_pairs (`regressedBet`: 0.83 at
//              the default 40 pairs, 0.67 at 100, 0.51 at 250). Measured (npm run bench -- --decisions)
//              against one constant bet for every cap, a mixture of λ ∈ {0.3, 0.5, 0.7, 0.9}, a
//              two-bet mixture, bets shrinking like 1/√t and the plug-in bet: each of those saves
//              fewer calls at some drop (a small bet wastes a large drop's early evidence, a large one
//              loses its wealth on a small drop's discordant pairs that go the other way);
//   no worse:  H0 Δ ≤ −margin (the new version is worse by the margin or more), bet on Y = D + margin
//              with the predictable plug-in bet of their aGRAPA, truncated.
// Under its H0, E[Y] ≤ 0 and the wealth K_t = Π (1 + λ_i·Y_i), with λ_i ≥ 0 chosen from the pairs
// before i and 1 + λ_i·Y_i ≥ 0, is a nonnegative supermartingale with K_0 = 1: by Ville's inequality
// P(ever K_t ≥ 1/α) ≤ α. So each verdict's error is held at α at every look, whenever the looks are
// made and however many pairs a round places:
//   false regressed: P(regressed | Δ ≥ 0)       ≤ α
//   false no worse:  P(no worse | Δ ≤ −margin)  ≤ α
// Between (−margin < Δ < 0) either may come, or inconclusive at the cap. Latency the same way: the
// sign of each pair's new − old mean response latency, H0 "not slower" (P(slower) ≤ P(faster)).
//
// Why not fewer pairs: no test, sequential or fixed, can say "no worse" from n pairs that all passed
// before (1 − margin)^n ≤ α (the null Δ = −margin makes n concordant pairs that likely), so the
// cap must allow it; `fewestPairs` says how many this test needs at best.

/** Betting truncated below the bet that a worst outcome would take to zero. */
const TRUNCATION = 0.95;

/**
 * The wealth of betting against H0 "E[Y] ≤ 0" on Y_1 … Y_n, each Y ≥ `lowest` (< 0) and ≤ 1.
 * λ_i = clip(μ̂/(σ̂² + μ̂²), 0, TRUNCATION/|lowest|) from Y_1 … Y_{i−1} (with one prior observation
 * of 0 and a prior variance of 1/4, so the first bet is none).
 */
export function bettingWealth(values: readonly number[], lowest: number): number {
  let wealth = 1;
  let sum = 0;
  let squares = 0;
  const cap = TRUNCATION / Math.abs(lowest);
  values.forEach((y, i) => {
    const n = i + 1;
    const mean = sum / n;
    const variance = (0.25 + squares - n * mean * mean) / n;
    const lambda = Math.min(cap, Math.max(0, mean / (variance + mean * mean)));
    wealth *= 1 + lambda * y;
    sum += y;
    squares += y * y;
  });
  return wealth;
}

/** The pass rate a release's scenarios usually have, for which the regressed test is designed. */
const DESIGN_PASS_RATE = 0.95;

/** P(new worse | discordant) and P(discordant) when the pass rate drops by `drop` from DESIGN_PASS_RATE. */
function discordance(drop: number): { worse: number; discordant: number } {
  const [before, after] = [DESIGN_PASS_RATE, DESIGN_PASS_RATE - drop];
  const worse = before * (1 - after);
  const better = (1 - before) * after;
  return { worse: worse / (worse + better), discordant: worse + better };
}

/**
 * The regressed test's bet for a rule: Kelly's for the smallest drop from a pass rate of 0.95 that
 * Wald's SPRT decides in half of `maxPairs` on average (its mean length ≈ ln(1/α) over the
 * expected log-wealth a pair adds, discordance × KL(q ‖ 1/2)), kept within [0.3, 0.9] so one pair
 * that goes the other way never takes most of the wealth.
 */
export function regressedBet(rule: Pick<PairedRule, "alpha" | "maxPairs">): number {
  const meanPairs = (drop: number) => {
    const { worse: q, discordant } = discordance(drop);
    const kl = q * Math.log(2 * q) + (1 - q) * Math.log(2 * (1 - q));
    return Math.log(1 / rule.alpha) / (discordant * kl);
  };
  // The mean length falls as the drop grows: bisect for the drop that takes half the cap.
  let [low, high] = [1e-6, DESIGN_PASS_RATE];
  for (let i = 0; i < 60; i++) {
    const mid = (low + high) / 2;
    if (meanPairs(mid) > rule.maxPairs / 2) low = mid;
    else high = mid;
  }
  const bet = 2 * discordance(high).worse - 1;
  return Math.round(Math.min(0.9, Math.max(0.3, bet)) * 1000) / 1000;
}

/** The latency test's bet: Wald's SPRT against P(slower) = (1 + 0.7)/2 = 0.85 (nearly every pair differs in latency). */
const LATENCY_BET = 0.7;

/**
 * The wealth of the constant bet λ against H0 "E[Y] ≤ 0" on signs Y_1 … Y_n ∈ {−1, 1}:
 * Π (1 + λ·Y_i), a nonnegative supermartingale under H0 (the likelihood ratio of Wald's SPRT).
 */
export function signWealth(values: readonly number[], bet: number): number {
  return values.reduce((wealth, y) => wealth * (1 + bet * y), 1);
}

export type PairedRule = {
  /** α: the error of each verdict. */
  alpha: number;
  /** The pass-rate drop the new version may have and still be "no worse". */
  margin: number;
  /** The cap on pairs; undecided there is inconclusive. */
  maxPairs: number;
};

export type PairedDecision = "regressed" | "no_worse" | "inconclusive" | "continue";

/** A pair of calls: whether the old and the new one passed. */
export type PairOutcome = { old: boolean; new: boolean };

/** Each pair's D = new − old ∈ {−1, 0, 1}. */
const differences = (pairs: readonly PairOutcome[]) => pairs.map((p) => Number(p.new) - Number(p.old));

/** The no-worse test's wealth: the plug-in bet on Y = D + margin (it needs no cap). */
const noWorseWealth = (d: readonly number[], margin: number) =>
  bettingWealth(
    d.map((x) => x + margin),
    -(1 - margin),
  );

/** The wealth of each test after these pairs (a verdict once it reaches 1/α). */
export function pairedWealth(pairs: readonly PairOutcome[], rule: PairedRule): { regressed: number; noWorse: number } {
  const d = differences(pairs);
  return {
    // Concordant pairs (D = 0) multiply any bet's wealth by 1: McNemar's discordant pairs alone.
    regressed: signWealth(
      d.filter((x) => x !== 0).map((x) => -x),
      regressedBet(rule),
    ),
    noWorse: noWorseWealth(d, rule.margin),
  };
}

/** The decision after a look at the pairs so far. Regressed is said first: it is the one that fails a release. */
export function pairedDecision(pairs: readonly PairOutcome[], rule: PairedRule): PairedDecision {
  const wealth = pairedWealth(pairs, rule);
  // A small tolerance: a wealth that reaches 1/α exactly must not miss it by rounding.
  const threshold = 1 / rule.alpha - 1e-9;
  if (wealth.regressed >= threshold) return "regressed";
  if (wealth.noWorse >= threshold) return "no_worse";
  return pairs.length >= rule.maxPairs ? "inconclusive" : "continue";
}

/** Whether new is slower with evidence: the sign of each pair's new − old latency, bet against "not slower". */
export function slowerWealth(differencesMs: readonly number[]): number {
  return signWealth(
    differencesMs.map(Math.sign).filter((x) => x !== 0),
    LATENCY_BET,
  );
}

/** The fewest pairs that can end "no worse" (every pair passing on both sides); Infinity past `limit`. */
export function fewestPairs(rule: Pick<PairedRule, "alpha" | "margin">, limit = 1000): number {
  const pairs: PairOutcome[] = [];
  for (let n = 1; n <= limit; n++) {
    pairs.push({ old: true, new: true });
    if (noWorseWealth(differences(pairs), rule.margin) >= 1 / rule.alpha - 1e-9) return n;
  }
  return Number.POSITIVE_INFINITY;
}
