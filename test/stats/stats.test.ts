// The decision rules' pure functions against hand-computed cases: Fisher's one-sided exact test,
// Holm's adjustment, pass^k, the SPRT's steps and boundaries, curtailment, Mann–Whitney, the
// Hodges–Lehmann shift and Newcombe's interval. (Their error rates are measured in `npm run bench`.)
import { describe, expect, it } from "vitest";
import {
  boundaries,
  defaultMargin,
  fewestCalls,
  fisherLower,
  fixedDecision,
  fixedDesign,
  hodgesLehmann,
  holm,
  logChoose,
  mannWhitneyGreater,
  passHatK,
  passHatKs,
  rateDifference,
  sequentialDecision,
} from "../../src/stats/index.ts";

describe("Fisher's exact test, one-sided (new lower)", () => {
  it("10/10 old vs 2/10 new: P(X ≤ 2) = C(12,2)·C(8,8)/C(20,10) = 66/184756", () => {
    expect(fisherLower(10, 10, 2, 10)).toBeCloseTo(66 / 184756, 12);
  });
  it("10/10 old vs 9/10 new: P(X = 9) = C(19,9)·C(1,1)/C(20,10) = 1/2", () => {
    expect(fisherLower(10, 10, 9, 10)).toBeCloseTo(0.5, 12);
  });
  it("3/4 vs 1/4: (C(4,0)C(4,4) + C(4,1)C(4,3))/C(8,4) = 17/70; equal rates give p ≥ 1/2", () => {
    expect(fisherLower(3, 4, 1, 4)).toBeCloseTo(17 / 70, 12);
    expect(fisherLower(5, 10, 5, 10)).toBeGreaterThan(0.5);
    expect(fisherLower(0, 10, 10, 10)).toBe(1);
  });
  it("logChoose is ln C(n, k)", () => {
    expect(Math.exp(logChoose(20, 10))).toBeCloseTo(184756, 6);
    expect(logChoose(5, 6)).toBe(Number.NEGATIVE_INFINITY);
  });
});

describe("Holm's step-down adjustment", () => {
  it("[0.01, 0.04, 0.03, 0.005] → sorted ×4, ×3, ×2, ×1, made monotone: [0.03, 0.06, 0.06, 0.02]", () => {
    const adjusted = holm([0.01, 0.04, 0.03, 0.005]);
    expect(adjusted.map((p) => Math.round(p * 1e6) / 1e6)).toEqual([0.03, 0.06, 0.06, 0.02]);
  });
  it("caps at 1 and leaves a single p-value as it is", () => {
    expect(holm([0.5, 0.6])).toEqual([1, 1]);
    expect(holm([0.2])).toEqual([0.2]);
    expect(holm([])).toEqual([]);
  });
});

describe("pass^k (τ-bench's C(c,k)/C(n,k))", () => {
  it("8 of 10: pass^1 0.8, pass^3 = 8·7·6/(10·9·8) = 0.4667, pass^10 = 0; k > n is undefined", () => {
    expect(passHatK(8, 10, 1)).toBeCloseTo(0.8, 12);
    expect(passHatK(8, 10, 3)).toBeCloseTo(336 / 720, 12);
    expect(passHatK(8, 10, 9)).toBe(0);
    expect(passHatK(10, 10, 10)).toBe(1);
    expect(passHatK(8, 10, 11)).toBeNull();
    expect(passHatKs(3, 4).map((p) => p.value)).toEqual([0.75, 0.5, 0.25, 0]);
  });
  it("is unbiased: E[C(X,k)/C(n,k)] = p^k for X ~ Binomial(n, p)", () => {
    const n = 12;
    const p = 0.83;
    for (const k of [1, 2, 4, 7]) {
      let mean = 0;
      for (let x = 0; x <= n; x++) {
        const pmf = Math.exp(logChoose(n, x) + x * Math.log(p) + (n - x) * Math.log(1 - p));
        mean += pmf * (passHatK(x, n, k) ?? 0);
      }
      expect(mean).toBeCloseTo(p ** k, 10);
    }
  });
});

describe("early decision of fixed repeats (curtailment)", () => {
  it("iterations 10, min_pass 8: passed at 8 passes, failed at 3 failures, else continue", () => {
    expect(fixedDecision(8, 0, 10, 8)).toBe("passed");
    expect(fixedDecision(8, 2, 10, 8)).toBe("passed");
    expect(fixedDecision(7, 2, 10, 8)).toBe("continue");
    expect(fixedDecision(0, 2, 10, 8)).toBe("continue");
    expect(fixedDecision(0, 3, 10, 8)).toBe("failed");
    expect(fixedDecision(0, 1, 10, 10)).toBe("failed");
  });
});

describe("the sequential test (SPRT, Ville's boundaries)", () => {
  const rule = { passRate: 0.9, confidence: 0.95, margin: 0.05, maxIterations: 40 };
  it("θ 0.9 ± 0.05 at 95 %: steps ln(0.95/0.85), ln(0.05/0.15); boundaries ±ln 20", () => {
    const b = boundaries(rule);
    expect(b.passStep).toBeCloseTo(Math.log(0.95 / 0.85), 12);
    expect(b.failStep).toBeCloseTo(Math.log(0.05 / 0.15), 12);
    expect(b.upper).toBeCloseTo(Math.log(20), 12);
    expect(b.lower).toBeCloseTo(-Math.log(20), 12);
    // 26 · 0.11123 = 2.892 < 2.996 ≤ 27 · 0.11123 = 3.003; 2 · 1.0986 = 2.197 < 2.996 ≤ 3.296.
    expect(fewestCalls(rule)).toEqual({ toPass: 27, toFail: 3 });
  });
  it("decides at the boundaries, continues between them, and is inconclusive at the cap", () => {
    expect(sequentialDecision(27, 0, rule)).toBe("passed");
    expect(sequentialDecision(26, 0, rule)).toBe("continue");
    expect(sequentialDecision(26, 1, rule)).toBe("continue");
    expect(sequentialDecision(0, 3, rule)).toBe("failed");
    // 36 passes, 4 failures: 36·0.11123 − 4·1.0986 = −0.39: undecided at the cap of 40.
    expect(sequentialDecision(36, 4, rule)).toBe("inconclusive");
    const low = { passRate: 0.7, confidence: 0.95, margin: 0.1, maxIterations: 20 };
    // 14·ln(0.8/0.6) − 6·ln(2) = 4.028 − 4.159 = −0.13.
    expect(sequentialDecision(14, 6, low)).toBe("inconclusive");
    expect(sequentialDecision(11, 0, low)).toBe("passed");
  });
  it("defaults the margin to 0.05 or less, inside (0, 1)", () => {
    expect(defaultMargin(0.9)).toBe(0.05);
    expect(defaultMargin(0.96)).toBeCloseTo(0.02, 12);
    expect(defaultMargin(0.04)).toBeCloseTo(0.02, 12);
  });
  it("the fixed-sample design with the same error rates needs far more calls", () => {
    const design = fixedDesign(rule);
    expect(design?.n).toBeGreaterThan(80);
    expect(design?.minPass).toBeLessThan(design?.n ?? 0);
  });
});

describe("Mann–Whitney U (one-sided: new slower) and the Hodges–Lehmann shift", () => {
  it("exact: new all above old is 1/C(6,3) = 0.05 for 3 + 3 and 1/C(8,4) = 1/70 for 4 + 4", () => {
    expect(mannWhitneyGreater([1, 2, 3], [4, 5, 6])).toBeCloseTo(0.05, 12);
    expect(mannWhitneyGreater([1, 2, 3, 4], [5, 6, 7, 8])).toBeCloseTo(1 / 70, 12);
    expect(mannWhitneyGreater([4, 5, 6], [1, 2, 3])).toBeCloseTo(1, 12);
  });
  it("ties use the normal approximation; fewer than 2 values on a side is no test", () => {
    const p = mannWhitneyGreater([100, 100, 110, 120], [100, 130, 140, 150]);
    expect(p).toBeGreaterThan(0);
    expect(p).toBeLessThan(0.2);
    expect(mannWhitneyGreater([1], [2, 3])).toBeNull();
  });
  it("the shift is the median of the pairwise differences", () => {
    expect(hodgesLehmann([1, 2, 3], [4, 5, 6])).toBe(3);
    expect(hodgesLehmann([10, 20], [15, 40])).toBe(12.5);
    expect(hodgesLehmann([], [1])).toBeNull();
  });
});

describe("the difference of two pass rates (Newcombe's hybrid score interval)", () => {
  it("10/10 → 2/10: −0.8 with 95 % interval −0.943 to −0.384 (from Wilson 0.057–0.510 and 0.722–1)", () => {
    const d = rateDifference(10, 10, 2, 10);
    expect(d.value).toBeCloseTo(-0.8, 12);
    expect(d.low).toBeCloseTo(-0.9433, 3);
    expect(d.high).toBeCloseTo(-0.384, 3);
  });
});
