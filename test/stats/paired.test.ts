// The sequential comparison's tests by betting (src/stats/paired.ts) against hand-computed wealth,
// their decisions, and their error held at α at every look (simulated here on a few thousand runs;
// `npm run bench -- --decisions` measures it on 10,000).
import { describe, expect, it } from "vitest";
import {
  bettingWealth,
  fewestPairs,
  type PairOutcome,
  pairedDecision,
  pairedWealth,
  regressedBet,
  signWealth,
  slowerWealth,
} from "../../src/stats/index.ts";

const pairs = (spec: string): PairOutcome[] =>
  // "11" both passed, "10" old passed and new failed, …
  spec.split(" ").map((p) => ({ old: p[0] === "1", new: p[1] === "1" }));

/** A seeded generator (Park–Miller), so the simulations are the same every run. */
function seeded(seed: number): () => number {
  let s = seed;
  return () => {
    s = (s * 48271) % 2147483647;
    return s / 2147483647;
  };
}

describe("betting wealth", () => {
  it("bets nothing on the first value, then the truncated plug-in bet μ̂/(σ̂² + μ̂²)", () => {
    // Y = 1, 1: the first bet is 0 (prior mean 0); the second μ̂ = 1/2, σ̂² = (1/4 + 1 − 2·1/4)/2 = 3/8,
    // λ = (1/2)/(3/8 + 1/4) = 0.8 → wealth 1.8.
    expect(bettingWealth([1], -1)).toBe(1);
    expect(bettingWealth([1, 1], -1)).toBeCloseTo(1.8, 12);
    // The bet is capped at 0.95/|lowest|: a worst value never takes the wealth to 0.
    expect(bettingWealth([1, 1, 1, 1, 1, 1, 1, 1, -1], -1)).toBeGreaterThan(0);
  });
  it("the regressed test: Wald's SPRT (a constant bet) on the discordant pairs; concordant ones change nothing", () => {
    // Two pairs where only the old call passed: (1 + λ)²; one the other way: × (1 − λ).
    expect(signWealth([1, 1], 0.7)).toBeCloseTo(2.89, 12);
    expect(signWealth([1, -1], 0.7)).toBeCloseTo(1.7 * 0.3, 12);
    const rule = { alpha: 0.05, margin: 0.1, maxPairs: 40 };
    const w = pairedWealth(pairs("11 10 00 10 11 11"), rule).regressed;
    expect(w).toBeCloseTo(pairedWealth(pairs("10 10"), rule).regressed, 12);
    expect(w).toBeCloseTo(1.829 ** 2, 12);
    // A pair where only the new call passed counts against a regression.
    expect(pairedWealth(pairs("10 01"), rule).regressed).toBeLessThan(1);
  });
  it("bets for the smallest drop from 0.95 that it decides within half the cap, on average", () => {
    // Kelly's bet 2q − 1 for that drop, q = P(new worse | discordant): a larger cap finds smaller drops.
    expect(regressedBet({ alpha: 0.05, maxPairs: 40 })).toBe(0.829);
    expect(regressedBet({ alpha: 0.05, maxPairs: 100 })).toBe(0.674);
    expect(regressedBet({ alpha: 0.05, maxPairs: 250 })).toBe(0.51);
    // A stricter α needs more evidence for the same drop: within the same cap it bets on a larger one.
    expect(regressedBet({ alpha: 0.01, maxPairs: 40 })).toBeGreaterThan(0.829);
    // Never past 0.9 (one pair the other way keeps a tenth of the wealth), never under 0.3.
    expect(regressedBet({ alpha: 0.05, maxPairs: 10 })).toBe(0.9);
    expect(regressedBet({ alpha: 0.05, maxPairs: 100_000 })).toBe(0.3);
  });
  it("the latency bet reads only the sign of each pair's shift, with a constant bet of 0.7", () => {
    expect(slowerWealth([120, 5, 0, 80])).toBeCloseTo(signWealth([1, 1, 1], 0.7), 12);
  });
});

describe("the sequential comparison's decision", () => {
  const rule = { alpha: 0.05, margin: 0.1, maxPairs: 40 };
  it("no worse needs ≥ ln(1/α)/ln(1/(1 − margin)) concordant passing pairs: 32 at α 0.05, margin 0.1", () => {
    expect(Math.log(20) / Math.log(1 / 0.9)).toBeGreaterThan(28);
    expect(fewestPairs(rule)).toBe(32);
    expect(fewestPairs({ alpha: 0.05, margin: 0.2 })).toBe(16);
    const all = Array.from({ length: 32 }, () => ({ old: true, new: true }));
    expect(pairedDecision(all.slice(0, 31), rule)).toBe("continue");
    expect(pairedDecision(all, rule)).toBe("no_worse");
  });
  it("a new version failing every other call is regressed after 5 discordant pairs (wealth 1.829⁵ = 20.5 ≥ 20)", () => {
    const half = Array.from({ length: 10 }, (_, i) => ({ old: true, new: i % 2 === 0 }));
    expect(pairedDecision(half.slice(0, 9), rule)).toBe("continue");
    expect(pairedDecision(half, rule)).toBe("regressed");
    expect(pairedWealth(half, rule).regressed).toBeCloseTo(1.829 ** 5, 9);
  });
  it("a drop of exactly the margin is undecided at the cap: inconclusive", () => {
    const tenth = Array.from({ length: 20 }, (_, i) => ({ old: true, new: (i + 1) % 10 !== 0 }));
    expect(pairedDecision(tenth, { ...rule, maxPairs: 20 })).toBe("inconclusive");
  });
  it("holds each verdict's error at α at every look (1,000 simulated runs each)", () => {
    const random = seeded(7);
    const run = (pOld: number, pNew: number) => {
      const seen: PairOutcome[] = [];
      for (;;) {
        seen.push({ old: random() < pOld, new: random() < pNew });
        const d = pairedDecision(seen, rule);
        if (d !== "continue") return d;
      }
    };
    const share = (pOld: number, pNew: number, verdict: string) =>
      Array.from({ length: 1000 }, () => run(pOld, pNew)).filter((d) => d === verdict).length / 1000;
    // Nothing changed: a false regression at most α.
    expect(share(0.8, 0.8, "regressed")).toBeLessThanOrEqual(0.05);
    // A drop of exactly the margin: a false "no worse" at most α.
    expect(share(0.9, 0.8, "no_worse")).toBeLessThanOrEqual(0.05);
    // And the tests see what they are for.
    expect(share(1, 1, "no_worse")).toBe(1);
    expect(share(0.9, 0.4, "regressed")).toBeGreaterThan(0.9);
  });
});
