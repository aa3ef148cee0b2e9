// Kappa's interval, the flip rate and adaptive votes' settling rule, against hand-computed cases.
import { describe, expect, it } from "vitest";
import { flipRate, kappaInterval, nextVotes, passPosterior, settledVerdict } from "../../src/stats/index.ts";

describe("kappa's 95 % interval (Wilson on the observed agreement, through kappa's chance correction)", () => {
  it("perfect agreement over 10 balanced items still leaves a wide interval", () => {
    // Wilson 95 % of 10/10: low 10 / (10 + 1.96²) = 0.7225; pe 0.5 → kappa low (0.7225 − 0.5) / 0.5 = 0.445.
    const ci = kappaInterval(1, 0.5, 10);
    expect(ci?.low).toBeCloseTo(0.445, 3);
    expect(ci?.high).toBeCloseTo(1, 10);
  });

  it("narrows with more items: 90 % agreement over 10 vs 100", () => {
    // Wilson of 9/10: [0.5958, 0.9821]; of 90/100: [0.8256, 0.9448] (pe 0.5 doubles and shifts them).
    const ten = kappaInterval(0.9, 0.5, 10);
    const hundred = kappaInterval(0.9, 0.5, 100);
    expect(ten?.low).toBeCloseTo(0.1916, 3);
    expect(ten?.high).toBeCloseTo(0.9642, 3);
    expect(hundred?.low).toBeCloseTo(0.6511, 3);
    expect(hundred?.high).toBeCloseTo(0.8896, 3);
  });

  it("never goes below −1 (pe held fixed can carry a low agreement past it)", () => {
    // 7/10 agreeing with pe 0.7: Wilson's low 0.3968 → (0.3968 − 0.7) / 0.3 = −1.011, kept at −1.
    expect(kappaInterval(0.7, 0.7, 10)?.low).toBe(-1);
  });

  it("is undefined when kappa is (one label throughout) or there are no items", () => {
    expect(kappaInterval(1, 1, 10)).toBeNull();
    expect(kappaInterval(0, 0.5, 0)).toBeNull();
  });
});

describe("flip rate: the chance two votes on one item disagree", () => {
  it("a 2–1 split has 2 of its 3 pairs disagreeing; a unanimous item none", () => {
    expect(flipRate([{ passes: 2, votes: 3 }])).toBeCloseTo(2 / 3, 10);
    expect(
      flipRate([
        { passes: 2, votes: 3 },
        { passes: 3, votes: 3 },
      ]),
    ).toBeCloseTo(2 / 6, 10);
    expect(flipRate([{ passes: 0, votes: 5 }])).toBe(0);
  });

  it("items with fewer than two votes say nothing", () => {
    expect(flipRate([{ passes: 1, votes: 1 }])).toBeNull();
    expect(flipRate([])).toBeNull();
  });
});

describe("adaptive votes: settled at 95 % under a uniform prior on the judge's pass probability", () => {
  it("the posterior of unanimous votes is 1 − 2^−(k+1)", () => {
    expect(passPosterior(0, 0)).toBeCloseTo(0.5, 10);
    expect(passPosterior(3, 0)).toBeCloseTo(1 - 1 / 16, 10);
    expect(passPosterior(4, 0)).toBeCloseTo(1 - 1 / 32, 10);
    // Beta(2, 3): P(θ < ½) = P(Bin(4, ½) ≥ 2) = 11/16.
    expect(passPosterior(1, 2)).toBeCloseTo(5 / 16, 10);
  });

  it("four unanimous votes settle; three do not; 6–1 settles, 7–2 does not", () => {
    expect(settledVerdict(3, 0)).toBeNull();
    expect(settledVerdict(4, 0)).toBe("pass");
    expect(settledVerdict(0, 4)).toBe("fail");
    // 6–1: P(Bin(8, ½) ≥ 7) = 9/256 = 0.035; 7–2: P(Bin(10, ½) ≥ 8) = 56/1024 = 0.055.
    expect(settledVerdict(6, 1)).toBe("pass");
    expect(settledVerdict(7, 2)).toBeNull();
  });

  it("asks the fewest votes that could settle, never past the cap", () => {
    expect(nextVotes(0, 0, 9)).toBe(4);
    expect(nextVotes(3, 1, 9)).toBe(3); // 6–1 would settle
    expect(nextVotes(2, 2, 9)).toBe(5); // no 4 can settle 2–2 (6–2: 0.09) and only 5 are left
    expect(nextVotes(4, 0, 9)).toBe(0);
    expect(nextVotes(5, 4, 9)).toBe(0);
    expect(nextVotes(0, 0, 3)).toBe(3);
  });
});
