// Agreement with human labels and Cohen's kappa, against hand-computed cases.
import { describe, expect, it } from "vitest";
import { agreementLine, agreementStats, majority, voteConsistency } from "../../src/judge/index.ts";

const pairs = (counts: { pp: number; pf: number; fp: number; ff: number }) => [
  ...Array.from({ length: counts.pp }, () => ({ human: "pass" as const, judge: "pass" as const })),
  ...Array.from({ length: counts.pf }, () => ({ human: "pass" as const, judge: "fail" as const })),
  ...Array.from({ length: counts.fp }, () => ({ human: "fail" as const, judge: "pass" as const })),
  ...Array.from({ length: counts.ff }, () => ({ human: "fail" as const, judge: "fail" as const })),
];

describe("agreement statistics", () => {
  it("computes agreement, kappa and the confusion matrix of a hand-computed case", () => {
    // 10 items: human pass & judge pass 6, pass/fail 2, fail/pass 1, fail/fail 1.
    // po = 7/10 = 0.7; human passes 8/10, judge passes 7/10;
    // pe = 0.8 × 0.7 + 0.2 × 0.3 = 0.56 + 0.06 = 0.62; kappa = (0.7 − 0.62) / (1 − 0.62) = 0.08 / 0.38 = 0.2105…
    const stats = agreementStats(pairs({ pp: 6, pf: 2, fp: 1, ff: 1 }));
    expect(stats.items).toBe(10);
    expect(stats.agreement).toBeCloseTo(0.7, 10);
    expect(stats.kappa).toBeCloseTo(0.08 / 0.38, 10);
    expect(stats.confusion).toEqual({
      human_pass_judge_pass: 6,
      human_pass_judge_fail: 2,
      human_fail_judge_pass: 1,
      human_fail_judge_fail: 1,
    });
    // Wilson 95 % of 7/10: [0.3968, 0.8922]; through (p − 0.62) / 0.38: [−0.587, 0.716].
    expect(agreementLine(stats)).toBe(
      "agreement 0.7 (7/10), kappa 0.211 (95 % CI -0.587 to 0.716, 10 distinct item(s)); human pass 0.8, fail 0.2",
    );
    expect(stats.human).toEqual({ pass: 8, fail: 2 });
  });

  it("balanced labels: 80 % agreement is kappa 0.6; chance-level agreement is kappa 0; perfect is 1", () => {
    // po 0.8, both raters pass half: pe 0.5, kappa (0.8 − 0.5) / 0.5 = 0.6.
    expect(agreementStats(pairs({ pp: 4, pf: 1, fp: 1, ff: 4 })).kappa).toBeCloseTo(0.6, 10);
    // po 0.5 with both passing half: kappa 0.
    expect(agreementStats(pairs({ pp: 1, pf: 1, fp: 1, ff: 1 })).kappa).toBeCloseTo(0, 10);
    expect(agreementStats(pairs({ pp: 3, pf: 0, fp: 0, ff: 2 })).kappa).toBe(1);
  });

  it("kappa is undefined (null) when both raters gave every item the same label, and agreement is still 1", () => {
    const stats = agreementStats(pairs({ pp: 5, pf: 0, fp: 0, ff: 0 }));
    expect(stats.agreement).toBe(1);
    expect(stats.kappa).toBeNull();
    expect(agreementLine(stats)).toContain("kappa n/a");
  });

  it("vote consistency: unanimous items count 1, a 2-to-1 split 2/3", () => {
    expect(
      voteConsistency([
        ["pass", "pass", "pass"],
        ["fail", "pass", "fail"],
      ]),
    ).toBeCloseTo((1 + 2 / 3) / 2, 10);
    expect(voteConsistency([])).toBeNull();
  });

  it("the majority decides, the agreement is shown and a split is uncertain", () => {
    const split = majority([
      { verdict: "pass", reason: "a", lines: [2] },
      { verdict: "fail", reason: "b", lines: [5] },
      { verdict: "pass", reason: "c", lines: [1, 2] },
    ]);
    expect(split).toEqual({
      verdict: "pass",
      agreement: "2/3",
      votes_for: 2,
      uncertain: true,
      reason: "a",
      lines: [1, 2],
    });
    expect(majority([{ verdict: "fail", reason: "x", lines: [] }]).uncertain).toBe(false);
  });
});
