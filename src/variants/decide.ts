// The verdict of each variant against the base, from the pairs placed so far: three sequential tests
// by betting on each variant's pairs (src/stats/paired.ts), each valid at every look:
//   worse:    H0 "the variant is not worse" — Wald's SPRT on the discordant pairs (regressedBet);
//   better:   H0 "the variant is not better" — the same bet, on the signs the other way;
//   no worse: H0 "worse by the margin or more" — the plug-in bet on D + margin.
// Several variants are several hypotheses: each test's family (the variants) is corrected by Holm's
// step-down on the anytime-valid p-values 1 / max wealth so far (valid at any stopping time; the
// running maximum only grows, so a rejection once made stays made). A variant is decided by its
// first rejected test (worse, then better, then no worse) and stops there; one undecided at its cap
// is inconclusive.
import { type PairedRule, type PairOutcome, pairedWealth, regressedBet, signWealth } from "../stats/index.ts";

type VariantVerdict = "better" | "worse" | "no_worse" | "inconclusive" | "undecided";

/** Each test's wealth (a verdict when it reaches its Holm level's 1/α). */
type Wealth = { worse: number; better: number; noWorse: number };
const TESTS = ["worse", "better", "noWorse"] as const;
const VERDICT_OF = { worse: "worse", better: "better", noWorse: "no_worse" } as const;

export type Standing = {
  name: string;
  pairs: PairOutcome[];
  /** The largest wealth each test reached while the variant ran. */
  best: Wealth;
  verdict: VariantVerdict;
  /** Pairs when it was decided. */
  decidedAfter?: number;
  /** The level (Holm's share of α) its verdict was reached at. */
  level?: number;
};

export const standing = (name: string): Standing => ({
  name,
  pairs: [],
  best: { worse: 1, better: 1, noWorse: 1 },
  verdict: "undecided",
});

/** Each test's wealth after these pairs. */
export function variantWealth(pairs: readonly PairOutcome[], rule: PairedRule): Wealth {
  const discordant = pairs.filter((p) => p.new !== p.old).map((p) => (p.new ? 1 : -1));
  const bet = regressedBet(rule);
  return {
    worse: signWealth(
      discordant.map((d) => -d),
      bet,
    ),
    better: signWealth(discordant, bet),
    noWorse: pairedWealth(pairs, rule).noWorse,
  };
}

/** Holm's step-down over p-values: the level each rejected one was rejected at (undefined: not rejected). */
export function holmLevels(pValues: readonly number[], alpha: number): (number | undefined)[] {
  const order = pValues.map((p, i) => ({ p, i })).sort((a, b) => a.p - b.p);
  const levels: (number | undefined)[] = pValues.map(() => undefined);
  for (const [rank, { p, i }] of order.entries()) {
    const level = alpha / (pValues.length - rank);
    // A small tolerance: a wealth that reaches 1/level exactly must not miss it by rounding.
    if (p > level + 1e-12) break;
    levels[i] = level;
  }
  return levels;
}

/**
 * One look after a round: every undecided variant's wealth updated from its pairs, then each test
 * Holm-corrected across the variants; the newly decided are marked (the standings are mutated).
 */
export function look(standings: Standing[], rule: PairedRule): void {
  for (const s of standings) {
    if (s.verdict !== "undecided") continue;
    const now = variantWealth(s.pairs, rule);
    for (const test of TESTS) s.best[test] = Math.max(s.best[test], now[test]);
  }
  const levels = Object.fromEntries(
    TESTS.map((test) => [
      test,
      holmLevels(
        standings.map((s) => 1 / Math.max(1, s.best[test])),
        rule.alpha,
      ),
    ]),
  ) as Record<(typeof TESTS)[number], (number | undefined)[]>;
  standings.forEach((s, i) => {
    if (s.verdict !== "undecided") return;
    const test = TESTS.find((t) => levels[t][i] !== undefined);
    if (test) {
      s.verdict = VERDICT_OF[test];
      s.decidedAfter = s.pairs.length;
      s.level = levels[test][i] as number;
    } else if (s.pairs.length >= rule.maxPairs) {
      s.verdict = "inconclusive";
    }
  });
}

/** The fewest pairs every test family needs at the strictest Holm level (α / variants) to say "no worse". */
export const strictestAlpha = (alpha: number, variants: number) => alpha / Math.max(1, variants);
