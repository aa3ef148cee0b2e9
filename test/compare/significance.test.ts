// Regressions with evidence: Fisher's one-sided test per scenario, Holm across the run's
// scenarios, the outcome it gives ("not enough evidence" for a flip without evidence), the latency
// shift, single calls as flips, and the words every surface shows.
import { describe, expect, it } from "vitest";
import { compareScenario, regressionEvidence } from "../../src/compare/index.ts";
import { evidenceText as evidenceLines, jobSummary } from "../../src/report/index.ts";
import { type CallResult, callResultSchema, reportSchema } from "../../src/results/index.ts";

const calls = (side: "new" | "old", passes: number, n: number, latency = [100, 110]): CallResult[] =>
  Array.from({ length: n }, (_, i) =>
    callResultSchema.parse({
      agent: "support",
      scenario: "greets",
      iteration: i + 1,
      side,
      status: i < passes ? "passed" : "failed",
      version_id: side === "old" ? "ca_1@v1" : "ca_1@v2",
      latency: { first_response_ms: 50, response_ms: latency.map((ms) => ms + i), tool_ms: [] },
      timings: { duration_ms: 1000 },
    }),
  );

describe("regressionEvidence", () => {
  it("1/10 failing vs 0/10 is not enough evidence; 8/10 failing vs 0/10 is, Holm-adjusted over the two", () => {
    const [one, eight] = regressionEvidence([
      { old: calls("old", 10, 10), new: calls("new", 9, 10) },
      { old: calls("old", 10, 10), new: calls("new", 2, 10) },
    ]);
    // p = 1/2 and 66/184756; Holm: the smaller × 2, the larger × 1 (made monotone).
    expect(one).toMatchObject({ method: "exact", p_value: 0.5, adjusted_p_value: 0.5, significant: false });
    expect(eight?.p_value).toBeCloseTo(66 / 184756, 4);
    expect(eight?.adjusted_p_value).toBeCloseTo((2 * 66) / 184756, 4);
    expect(eight).toMatchObject({ significant: true, old_rate: { passes: 10, calls: 10 }, new_rate: { passes: 2 } });
    expect(eight?.difference?.value).toBeCloseTo(-0.8, 6);

    // The outcomes: a flipped verdict without evidence is "not enough evidence", with it a regression.
    const old = calls("old", 10, 10);
    const newOne = calls("new", 9, 10);
    expect(compareScenario(old, newOne, { old: "passed", new: "failed" }, one).outcome).toBe("not_enough_evidence");
    expect(compareScenario(old, calls("new", 2, 10), { old: "passed", new: "failed" }, eight).outcome).toBe(
      "regression",
    );
    expect(evidenceLines(one as NonNullable<typeof one>).join("\n")).toMatch(
      /pass rate old 10\/10 \(100 %\) → new 9\/10 \(90 %\), −10 points \(95 % CI .*\); adjusted p 0\.5000 \(one-sided Fisher, Holm, α 0\.05\): not enough evidence/,
    );
  });

  it("a significantly lower rate is a regression even when the new side still meets its threshold", () => {
    const [e] = regressionEvidence([{ old: calls("old", 20, 20), new: calls("new", 10, 20) }], 0.01);
    expect(e?.significant).toBe(true);
    expect(
      compareScenario(calls("old", 20, 20), calls("new", 10, 20), { old: "passed", new: "flaky" }, e).outcome,
    ).toBe("regression");
  });

  it("single calls are flips, labelled as such", () => {
    const [e] = regressionEvidence([{ old: calls("old", 1, 1), new: calls("new", 0, 1) }]);
    expect(e).toMatchObject({ method: "flip", p_value: null, significant: false, latency: null });
    expect(compareScenario(calls("old", 1, 1), calls("new", 0, 1), {}, e).outcome).toBe("regression");
    expect(evidenceLines(e as NonNullable<typeof e>)).toEqual([
      "pass rate old 1/1 (100 %) → new 0/1 (0 %): single calls, compared as a flip (no test)",
    ]);
  });

  it("tests latency per turn: a 300 ms slowdown is significant with its Hodges–Lehmann shift, equal ones are not", () => {
    const [slow, same] = regressionEvidence([
      { old: calls("old", 10, 10, [100, 110]), new: calls("new", 10, 10, [400, 410]) },
      { old: calls("old", 10, 10, [100, 110]), new: calls("new", 10, 10, [100, 110]) },
    ]);
    expect(slow?.latency).toMatchObject({ shift_ms: 300, significant: true, old_turns: 20, new_turns: 20 });
    expect(same?.latency?.significant).toBe(false);
    expect(same?.latency?.shift_ms).toBe(0);
    expect(evidenceLines(slow as NonNullable<typeof slow>)[1]).toMatch(
      /response latency shift \+300 ms \(Hodges–Lehmann, 20 → 20 turns\); adjusted p .* significantly slower/,
    );
  });

  it("the job summary shows a regression's evidence", () => {
    const [e] = regressionEvidence([{ old: calls("old", 10, 10), new: calls("new", 2, 10) }]);
    const comparison = compareScenario(calls("old", 10, 10), calls("new", 2, 10), {}, e);
    const text = jobSummary({
      kind: "compare",
      scenarios: [
        {
          agent: "support",
          scenario: "greets",
          version_id: "ca_1@v2",
          verdict: "failed",
          iterations: 10,
          passes: 2,
          min_pass: 10,
          comparison,
        },
      ],
    });
    expect(text).toMatch(/adjusted p 0\.0004 \(one-sided Fisher, Holm, α 0\.05\): significant/);
  });
});

describe("every surface shows the new figures", () => {
  it("the HTML report shows pass^k, the early decision and a comparison's evidence", async () => {
    const { htmlReport } = await import("../../src/report/html/index.ts");
    const [e] = regressionEvidence([{ old: calls("old", 10, 10), new: calls("new", 2, 10) }]);
    const comparison = compareScenario(calls("old", 10, 10), calls("new", 2, 10), {}, e);
    const page = htmlReport(
      reportSchema.parse({
        kind: "compare",
        scenarios: [
          {
            agent: "support",
            scenario: "greets",
            version_id: "ca_1@v2",
            verdict: "failed",
            iterations: 10,
            planned_iterations: 10,
            passes: 2,
            min_pass: 10,
            pass_k: [
              { k: 1, value: 0.2 },
              { k: 2, value: 0.0222 },
              { k: 3, value: 0 },
            ],
            decided_after: 6,
            calls_saved: 4,
            comparison,
          },
        ],
        results: [...calls("new", 2, 10), ...calls("old", 10, 10)],
      }),
    );
    expect(page).toContain("pass^3 0.00");
    expect(page).toContain("decided after 6 of 10, 4 calls not needed");
    expect(page).toMatch(/pass rate old 10\/10 \(100 %\) → new 2\/10 \(20 %\), −80 points/);
    expect(page).toContain('data-outcome="regression"');
  });
});
