// A sequential comparison's verdict on every surface, from report objects built here: "no worse" is
// earned (an inconclusive comparison fails the run unless allow_inconclusive, which the summary
// then names), the job summary and the terminal say how many pairs it took, and a report written
// before the rename ("not_significant") still reads, as "not enough evidence".
import { describe, expect, it } from "vitest";
import { htmlReport, junitXml, terminalSummary } from "../../src/report/index.ts";
import { jobSummary, type ReportInput } from "../../src/report/markdown.ts";
import { countScenarios, exitCode, reportSchema } from "../../src/results/index.ts";

const comparison = (outcome: string, pairs: number) => ({
  old_version_id: "ca_1@v1",
  new_version_id: "ca_1@v2",
  old_verdict: "passed" as const,
  new_verdict: "passed" as const,
  outcome,
  pairs: ["old_first", "new_first", "new_first"] as ("old_first" | "new_first")[],
  sequential: { alpha: 0.05, margin: 0.1, max_pairs: 40, pairs, regressed_wealth: 1.2, no_worse_wealth: 3.4 },
});

const report = (outcome: string, pairs: number, extra: Partial<ReportInput> = {}): ReportInput => ({
  kind: "compare",
  fail_on: "regression",
  scenarios: [
    {
      agent: "support",
      scenario: "greets",
      version_id: "ca_1@v2",
      verdict: "passed",
      iterations: pairs,
      passes: pairs,
      min_pass: 0,
      comparison: comparison(outcome, pairs),
    },
  ],
  ...extra,
});

describe("the sequential comparison on the report's surfaces", () => {
  it("no worse passes; inconclusive fails (exit 1) unless allow_inconclusive, which the summary names", () => {
    expect(exitCode(reportSchema.parse(report("no_worse", 32)))).toBe(0);
    const inconclusive = reportSchema.parse(report("inconclusive", 40));
    expect(exitCode(inconclusive)).toBe(1);
    expect(jobSummary(report("inconclusive", 40))).toContain(
      "the comparison with the old version was inconclusive: neither regressed nor no worse (margin 0.1) after 40 pairs of 40",
    );
    const allowed = reportSchema.parse(report("inconclusive", 40, { allow_inconclusive: true }));
    expect(exitCode(allowed)).toBe(0);
    expect(jobSummary(report("inconclusive", 40, { allow_inconclusive: true }))).toMatch(
      /^### ⚠️ .*1 inconclusive against the old version, allowed by --allow-inconclusive/,
    );
    const text = terminalSummary(allowed);
    expect(text).toContain("? inconclusive support/greets");
    expect(text).toContain("3 pairs placed interleaved (old and new together), order per pair: ON NO NO");
    expect(text).toContain("sequential comparison: undecided at the cap of 40 pairs: inconclusive");
  });

  it("a regression says after how many pairs it was decided, and the calls it saved", () => {
    const regressed = reportSchema.parse(report("regression", 12));
    expect(exitCode(regressed)).toBe(1);
    expect(terminalSummary(regressed)).toContain(
      "sequential comparison: decided after 12 pairs of 40 (56 calls saved)",
    );
    expect(jobSummary(report("regression", 12))).toContain("decided after 12 pairs of 40");
  });

  it("says 'decided after N of M' only when N < M: a decision at the cap saved no call", () => {
    const atCap = reportSchema.parse(report("regression", 40));
    const texts = [terminalSummary(atCap), jobSummary(report("regression", 40)), junitXml(atCap), htmlReport(atCap)];
    for (const text of texts) {
      expect(text).not.toContain("decided after 40 pairs of 40");
      expect(text).toContain("decided at the cap of 40 pairs");
    }
    expect(countScenarios(atCap).calls_saved).toBe(0);
    // A scenario's own early decision, stated at its last planned call, is no early decision either.
    const [scenario] = report("no_worse", 3).scenarios ?? [];
    const whole = reportSchema.parse({
      ...report("no_worse", 3),
      scenarios: [{ ...scenario, comparison: undefined, planned_iterations: 3, decided_after: 3, calls_saved: 0 }],
    });
    expect(terminalSummary(whole)).not.toContain("decided after");
    expect(junitXml(whole)).not.toContain("decided after");
  });

  it("reads a report written before the rename: not_significant is not enough evidence", () => {
    const { sequential: _none, ...fixed } = comparison("not_significant", 3);
    const [scenario] = report("not_significant", 3).scenarios ?? [];
    const old = reportSchema.parse({ ...report("x", 3), scenarios: [{ ...scenario, comparison: fixed }] });
    expect(old.scenarios[0]?.comparison?.outcome).toBe("not_enough_evidence");
    expect(terminalSummary(old)).toContain("≟ not enough evidence support/greets");
  });
});
