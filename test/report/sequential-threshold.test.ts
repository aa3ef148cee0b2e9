// A sequential test (`pass_rate` with `confidence`) decides on the calls it has: 12 passes of a cap
// of 20 can pass it although the rate × the cap is 14. No surface shows that 14 (`min_pass 14`,
// `needs 14`) beside `12 passes` and `passed`; each names the test's own rule instead.
import { describe, expect, it } from "vitest";
import { htmlReport, jobSummary, junitXml, reportJson, terminalSummary } from "../../src/report/index.ts";
import { type CallResult, callResultSchema } from "../../src/results/index.ts";
import { scenarioKey } from "../../src/smoke/gates.ts";
import { reportFromCalls, type ScenarioGate } from "../../src/smoke/reports.ts";

const VERSION = "ca_1@v1";
const RULE = { passRate: 0.7, confidence: 0.95, margin: 0.1, maxIterations: 20 };

const call = (iteration: number, passed: boolean): CallResult =>
  callResultSchema.parse({
    agent: "support",
    scenario: "greets",
    iteration,
    status: passed ? "passed" : "failed",
    version_id: VERSION,
    conversation_id: `conv_${iteration}`,
    assertions: [{ description: "greets", passed, ...(passed ? {} : { detail: "no greeting" }) }],
    transcript: ["agent: hello"],
    timings: { duration_ms: 1000 },
  });

const gates = new Map<string, ScenarioGate>([
  [
    scenarioKey("support", "greets", VERSION),
    {
      agent: "support",
      scenario: "greets",
      versionId: VERSION,
      plannedIterations: 20,
      minPass: 14,
      bounds: {},
      sequential: RULE,
    },
  ],
]);

describe("a sequential test's threshold on every surface", () => {
  it("passed after 12 of 20: no 'min_pass 14' or 'needs 14' anywhere, its pass rate rule instead", () => {
    const report = reportFromCalls(
      Array.from({ length: 12 }, (_, i) => call(i + 1, true)),
      gates,
    );
    expect(report.scenarios[0]).toMatchObject({ verdict: "passed", passes: 12, iterations: 12 });
    const surfaces = {
      terminal: terminalSummary(report),
      summary: jobSummary(report),
      html: htmlReport(report),
      junit: junitXml(report),
    };
    for (const [name, text] of Object.entries(surfaces)) {
      expect(text, name).not.toMatch(/min_pass[^a-z]*14|needs 14/);
    }
    expect(surfaces.junit).not.toContain('name="min_pass"');
    expect(surfaces.junit).toContain('<property name="sequential" value="sequential test: pass_rate 0.7 ± 0.1');
    expect(surfaces.html).toContain("12 of 12 (sequential test, pass_rate 0.7 ± 0.1 at confidence 0.95)");
    expect(surfaces.terminal).toContain("support/greets: 12/12 passed (100 %");
    expect(surfaces.terminal).toContain("pass_rate 0.7 ± 0.1 at 95 %");
    // The JSON keeps the rule itself (min_pass stays for report merge, documented as not its rule).
    expect(JSON.parse(reportJson(report)).scenarios[0].sequential).toMatchObject({ pass_rate: 0.7, margin: 0.1 });
  });

  it("failed: the reasons name the test, not a pass count it 'needed'", () => {
    const mixed = Array.from({ length: 6 }, (_, i) => call(i + 1, i === 0));
    const report = reportFromCalls(mixed, gates);
    expect(report.scenarios[0]).toMatchObject({ verdict: "failed", passes: 1 });
    for (const text of [terminalSummary(report), jobSummary(report), htmlReport(report), junitXml(report)]) {
      expect(text).not.toMatch(/min_pass[^a-z]*14|needs 14/);
    }
    expect(junitXml(report)).toContain("1 of 6 iterations passed (pass_rate 0.7 ± 0.1 at confidence 0.95)");
  });
});
