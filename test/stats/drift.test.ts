// The drift test's rule (src/stats/drift.ts) against hand-computed cases, and its error rate by
// simulation with a seeded generator: a false "drifted" when nothing changed stays within α at
// every look, and a drop of 0.5 is decided well before the cap.
import { describe, expect, it } from "vitest";
import { random } from "../../scripts/bench-drift.ts";
import {
  clopperPearsonLower,
  driftDecision,
  driftedBound,
  driftSequentialRule,
  exceedanceRate,
  latencyDrift,
  latencySlack,
  referenceLevel,
  worstFalseDrifted,
} from "../../src/stats/index.ts";

const RULE = { alpha: 0.05, margin: 0.1, maxCalls: 40 };

describe("the baseline's lower bound (Clopper–Pearson, one-sided)", () => {
  it("of n passes out of n is level^(1/n)", () => {
    expect(clopperPearsonLower(10, 10, 0.025)).toBeCloseTo(0.025 ** (1 / 10), 6);
    expect(clopperPearsonLower(40, 40, 0.025)).toBeCloseTo(0.025 ** (1 / 40), 6);
  });
  it("is 0 with no pass, and below the observed rate otherwise", () => {
    expect(clopperPearsonLower(0, 20, 0.025)).toBe(0);
    const low = clopperPearsonLower(15, 20, 0.025);
    expect(low).toBeGreaterThan(0.5);
    expect(low).toBeLessThan(0.75);
  });
});

describe("the level of the baseline's bound, calibrated with the test", () => {
  it("Ville's bound at the reference itself is the test's own α/2 (λ = 1: the likelihood ratio)", () => {
    const rule = driftSequentialRule({ calls: 40, passes: 40 }, RULE);
    if (!rule) throw new Error("no rule");
    expect(driftedBound(rule, rule.passRate + rule.margin)).toBeCloseTo(RULE.alpha / 2, 8);
    // Above the reference the bound falls; at or below the rate where failures outweigh, it is 1.
    expect(driftedBound(rule, 0.99)).toBeLessThan(RULE.alpha / 2);
    expect(driftedBound(rule, rule.passRate - rule.margin)).toBe(1);
  });
  it.each([10, 20, 40])("for %s baseline calls is the largest level whose worst false drifted is within α", (calls) => {
    const level = referenceLevel(calls, RULE);
    // More than the union bound's α/2 (which left false drifted at 0.0 %), less than the median.
    expect(level).toBeGreaterThan(RULE.alpha / 2);
    expect(level).toBeLessThan(0.5);
    expect(worstFalseDrifted(calls, level, RULE)).toBeLessThanOrEqual(RULE.alpha);
    // The bisection's resolution is (0.5 − α/2)/2^10 < 0.0005: a step of 0.001 more exceeds α.
    expect(worstFalseDrifted(calls, level + 0.001, RULE)).toBeGreaterThan(RULE.alpha);
  });
});

describe("the SPRT a baseline sets", () => {
  it("weighs p = reference against reference − margin at α/2", () => {
    const rule = driftSequentialRule({ calls: 40, passes: 40 }, RULE);
    // 40 passes of 40: the lower bound at level γ is γ^(1/40).
    const reference = Math.floor(referenceLevel(40, RULE) ** (1 / 40) * 10_000) / 10_000;
    expect(rule?.reference).toBe(reference);
    expect((rule?.passRate ?? 0) + (rule?.margin ?? 0)).toBeCloseTo(reference, 6);
    expect(rule?.margin).toBe(0.05);
    expect(rule?.confidence).toBe(0.975);
    expect(rule?.maxIterations).toBe(40);
  });
  it("shrinks the margin to keep H_drifted above 0, and gives up on a baseline too low to tell a drop", () => {
    const low = driftSequentialRule({ calls: 20, passes: 4 }, { ...RULE, margin: 0.4 });
    expect((low?.passRate ?? 0) - (low?.margin ?? 0)).toBeGreaterThan(0);
    expect(driftSequentialRule({ calls: 20, passes: 0 }, RULE)).toBeUndefined();
  });
  it("says drifted on failures, holding on passes, inconclusive at the cap", () => {
    const rule = driftSequentialRule({ calls: 40, passes: 40 }, { ...RULE, margin: 0.2 });
    if (!rule) throw new Error("no rule");
    expect(driftDecision(0, 5, rule)).toBe("drifted");
    expect(driftDecision(24, 0, rule)).toBe("holding");
    expect(driftDecision(1, 0, rule)).toBe("continue");
    expect(driftDecision(20, 4, { ...rule, maxIterations: 24 })).toBe("inconclusive");
  });
});

describe("its error rates, simulated (seeded)", () => {
  /** Baseline of n calls at p, then drift at q; what the test says and after how many calls. */
  function trial(next: () => number, p: number, q: number, baselineCalls: number) {
    let passes = 0;
    for (let i = 0; i < baselineCalls; i++) if (next() < p) passes++;
    const rule = driftSequentialRule({ calls: baselineCalls, passes }, RULE);
    if (!rule) return { decision: "inconclusive", calls: 0, everDrifted: false };
    let [now, fails] = [0, 0];
    let everDrifted = false;
    for (let n = 1; n <= RULE.maxCalls; n++) {
      if (next() < q) now++;
      else fails++;
      const decision = driftDecision(now, fails, rule);
      everDrifted ||= decision === "drifted";
      if (decision !== "continue") return { decision, calls: n, everDrifted };
    }
    return { decision: "inconclusive", calls: RULE.maxCalls, everDrifted };
  }

  it.each([0.99, 0.95, 0.9, 0.8])("nothing changed at p = %s: false drifted ≤ α, looking after every call", (p) => {
    const next = random(61 + Math.round(p * 100));
    const trials = 4000;
    // Baselines of 20 and 40 calls: the bound's level is calibrated for each.
    for (const calls of [20, 40]) {
      let drifted = 0;
      for (let i = 0; i < trials; i++) if (trial(next, p, p, calls).everDrifted) drifted++;
      expect(drifted / trials).toBeLessThanOrEqual(RULE.alpha);
    }
  });

  it("a drop of 0.5 from 0.98 is drifted in nearly every run, in under half the cap on average", () => {
    const next = random(7);
    const runs = Array.from({ length: 1000 }, () => trial(next, 0.98, 0.48, 40));
    const drifted = runs.filter((r) => r.decision === "drifted");
    expect(drifted.length / runs.length).toBeGreaterThan(0.95);
    const mean = drifted.reduce((sum, r) => sum + r.calls, 0) / drifted.length;
    expect(mean).toBeLessThan(RULE.maxCalls / 2);
  });
});

describe("latency against the baseline's p95", () => {
  it("under no change a turn exceeds the r-th of m turns with probability (m − r + 1)/(m + 1)", () => {
    expect(exceedanceRate(40)).toBeCloseTo(3 / 41, 10);
    expect(exceedanceRate(100)).toBeCloseTo(6 / 101, 10);
  });
  it("counts a turn slower only beyond the slack: max(250 ms, 25 % of the p95)", () => {
    expect(latencySlack(400)).toBe(250);
    expect(latencySlack(2000)).toBe(500);
    const noise = latencyDrift([600, 640, 649, 620], { p95Ms: 400, turns: 40 }, 0.05);
    expect(noise.exceeded).toBe(0);
    expect(noise.slower).toBe(false);
  });
  it("says slower once the wealth reached 1/α, and not on one slow turn", () => {
    const one = latencyDrift([1400, 300, 300], { p95Ms: 400, turns: 40 }, 0.05);
    expect(one.slower).toBe(false);
    const slowed = latencyDrift([1400, 1400, 1400], { p95Ms: 400, turns: 40 }, 0.05);
    expect(slowed.slower).toBe(true);
    expect(slowed.exceeded).toBe(3);
  });
});
