// A judgement that adaptive votes left unsettled (pure logic): its assertion is unmet and says
// inconclusive, never the majority's verdict; an inconclusive call is the judge's fault when its
// code says the judge did not settle, the caller's otherwise (a caller that strayed).
import { describe, expect, it } from "vitest";
import type { Judgement } from "../../src/judge/index.ts";
import { judgedAssertion } from "../../src/smoke/expectations.ts";
import { faultOf, OUTCOME_CODES } from "../../src/smoke/outcome.ts";

const unsettled: Judgement = {
  rubric: "offers a refund",
  model: "test-model",
  verdict: "inconclusive",
  agreement: "5/9",
  votes_for: 5,
  votes_total: 9,
  uncertain: true,
  settled: false,
  reason: "5 pass, 4 fail after 9 votes: not settled at 95 %",
  lines: [],
  votes: [],
  answered_model: null,
  cached_votes: 0,
  error: null,
  calibration: null,
};

describe("an unsettled judgement", () => {
  it("is an unmet assertion that says inconclusive, whichever side led", () => {
    const assertion = judgedAssertion(unsettled, ["agent: hello"]);
    expect(assertion.passed).toBe(false);
    expect(assertion.detail).toBe("inconclusive 5/9: 5 pass, 4 fail after 9 votes: not settled at 95 % by the cap");
  });

  it("makes an inconclusive call the judge's fault; a caller that strayed stays the caller's", () => {
    expect(faultOf({ kind: "inconclusive", stage: "judge", code: OUTCOME_CODES.judgeUnsettled })).toBe("judge");
    expect(faultOf({ kind: "inconclusive", stage: "judge", code: OUTCOME_CODES.callerStrayed })).toBe("caller");
  });
});
