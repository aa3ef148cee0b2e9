// One counting rule for a scenario whose call could not complete (the service, the network, a
// timeout): it is an error, counted apart from the failures, on every surface — the terminal's last
// line, the job summary, the HTML tiles, JUnit, the JSON summary and the plan's behaviour preview.
import { describe, expect, it } from "vitest";
import { type AgentPlan, attachBehaviour, type Plan } from "../../src/plan/index.ts";
import { htmlReport, jobSummary, junitXml, planMarkdown, reportJson, terminalSummary } from "../../src/report/index.ts";
import { type CallResult, callResultSchema, reportExitCode } from "../../src/results/index.ts";
import { scenarioKey } from "../../src/smoke/gates.ts";
import type { ScenarioResult } from "../../src/smoke/index.ts";
import { reportFromCalls, type ScenarioGate } from "../../src/smoke/reports.ts";

const VERSION = "ca_s@v3";

function call(scenario: string, outcome: "passed" | "failed" | "error"): CallResult {
  return callResultSchema.parse({
    agent: "support",
    scenario,
    iteration: 1,
    status: outcome,
    outcome: { kind: outcome, ...(outcome === "error" ? { stage: "create", http_status: 503 } : {}) },
    version_id: VERSION,
    conversation_id: outcome === "error" ? null : `conv_${scenario}`,
    assertions:
      outcome === "error" ? [] : [{ description: 'says "hello"', passed: outcome === "passed", detail: "no match" }],
    ...(outcome === "error" ? { error: "POST /conversations → 503 after 4 attempts" } : {}),
    transcript: [],
    timings: { duration_ms: 1000 },
  });
}

const gate = (scenario: string): [string, ScenarioGate] => [
  scenarioKey("support", scenario, VERSION),
  { agent: "support", scenario, versionId: VERSION, plannedIterations: 1, minPass: 1, bounds: {} },
];

describe("a call that could not complete", () => {
  it("is counted as an error, not a failure, on the terminal, the job summary, HTML, JUnit and JSON", () => {
    const report = reportFromCalls(
      [call("greets", "passed"), call("books", "failed"), call("transfers", "error")],
      new Map([gate("greets"), gate("books"), gate("transfers")]),
      { stack: "dev" },
    );
    const json = JSON.parse(reportJson(report)).summary;
    expect(json).toMatchObject({ scenarios: 3, passed: 1, failed: 1, errors: 1 });
    // The terminal's last line: the failure and the error each in their own count.
    expect(terminalSummary(report).trim().split("\n").at(-1)).toBe("1 passed, 1 failed, 1 could not complete");
    const row =
      jobSummary(report)
        .split("\n")[4]
        ?.split("|")
        .map((c) => c.trim()) ?? [];
    expect({ failed: Number(row[4]), errors: Number(row[5]) }).toEqual({ failed: 1, errors: 1 });
    expect(jobSummary(report)).toContain("3 scenarios: 1 passed, 1 failed, 1 could not complete");
    const html = htmlReport(report);
    const tile = (name: string) => Number(new RegExp(`data-summary="${name}"><span class="n">(\\d+)<`).exec(html)?.[1]);
    expect({ failed: tile("failed"), errors: tile("errors") }).toEqual({ failed: 1, errors: 1 });
    expect(junitXml(report)).toMatch(/<testsuites [^>]*tests="3" failures="1" errors="1"/);
  });

  it("is counted apart in the plan's behaviour preview too", () => {
    const result = (scenario: string, kind: "failed" | "error"): ScenarioResult => ({
      agent: "booking",
      scenario,
      iteration: 1,
      versionId: "ca_b@v1",
      conversationId: kind === "error" ? "" : "conv_1",
      transport: "sse",
      status: kind,
      outcome: { kind },
      assertions:
        kind === "error"
          ? []
          : [{ kind: "tool_calls", key: "b", description: "calls tool b", passed: false, detail: "never called" }],
      ...(kind === "error" ? { error: "the stream failed after its retries" } : {}),
      timings: { durationMs: 1200 },
    });
    const booking: AgentPlan = {
      agent: "booking",
      kind: "conversational",
      action: "replace",
      why: "",
      fields: [{ path: "config.tool.tools", before: 1, after: 2 }],
      promptDiffs: {},
    };
    const plan: Plan = { stack: "dev", overlays: [], agents: [booking] } as unknown as Plan;
    const target = { agent: "booking", versionId: "ca_b@v1", sections: ["tool"], calls: [] };
    attachBehaviour(plan, [target], new Map(), [result("books", "failed"), result("transfers", "error")]);
    expect(plan.behave).toMatchObject({ scenarios: 2, passed: 0, failed: 1, errors: 1 });
    const md = planMarkdown(plan);
    expect(md).toContain("0 passed, 1 failed, 1 could not complete.");
    expect(md).toContain("(against `ca_b@v1`, override_config `tool`): 0 passed, 1 failed, 1 could not complete");
  });

  it("an inconclusive scenario in the behaviour preview is inconclusive, not failed, as its report says", () => {
    const booking: AgentPlan = {
      agent: "booking",
      kind: "conversational",
      action: "replace",
      why: "",
      fields: [{ path: "config.tool.tools", before: 1, after: 2 }],
      promptDiffs: {},
    };
    const plan: Plan = { stack: "dev", overlays: [], agents: [booking] } as unknown as Plan;
    const target = { agent: "booking", versionId: "ca_b@v1", sections: ["tool"], calls: [] };
    // The caller strayed from its script: the call tested nothing.
    const strayed = {
      agent: "booking",
      scenario: "books",
      iteration: 1,
      versionId: "ca_b@v1",
      conversationId: "conv_1",
      transport: "sse",
      status: "inconclusive",
      outcome: { kind: "inconclusive" },
      assertions: [],
      fault: "caller",
      timings: { durationMs: 1200 },
    } as unknown as ScenarioResult;
    attachBehaviour(plan, [target], new Map(), [strayed]);
    expect(plan.behave).toMatchObject({ scenarios: 1, passed: 0, failed: 0, inconclusive: 1 });
    const behaviour = plan.agents[0]?.behaviour;
    expect(behaviour).toMatchObject({ passed: 0, failed: 0, inconclusive: 1 });
    expect(behaviour?.previewed && behaviour.scenarios[0]?.status).toBe("inconclusive");
    const md = planMarkdown(plan);
    expect(md).toContain("0 passed, 0 failed, 1 inconclusive.");
    expect(md).toContain("- ? `books`: inconclusive");
    expect(md).not.toContain("- ✗ `books`");
  });

  it("a plan whose mandatory policy violation blocked the behaviour preview exits 1, as documented, not 3", () => {
    const notRun = callResultSchema.parse({
      ...call("books", "passed"),
      status: "not_run",
      outcome: { kind: "not_run" },
      conversation_id: null,
      assertions: [],
      error: "a mandatory policy violation blocked the preview",
    });
    const behave = reportFromCalls([notRun], new Map([gate("books")]), { kind: "behave" });
    const plan = { stack: "prod", overlays: [], agents: [], behave_report: behave } as unknown as Plan;
    // Without the violation, a call never placed is a call that could not complete (3).
    expect(reportExitCode(plan)).toBe(3);
    expect(reportExitCode({ ...plan, policy: { mandatory: 1, advisory: 0, other: [] } })).toBe(1);
  });
});
