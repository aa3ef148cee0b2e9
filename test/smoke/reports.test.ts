import { describe, expect, it } from "vitest";
import { parseDocument } from "yaml";
import { junitXml, reportJson } from "../../src/report/index.ts";
import { reportSchema } from "../../src/results/index.ts";
import { buildReport, type ScenarioResult } from "../../src/smoke/reports.ts";

// The renderers of the one report value a smoke run builds.
const junitReport = (results: ScenarioResult[]) => junitXml(buildReport(results));
const jsonReport = (results: ScenarioResult[]) => reportJson(buildReport(results));

const passed: ScenarioResult = {
  agent: "support",
  scenario: "greets",
  iteration: 1,
  versionId: "ca_1@v1",
  conversationId: "conv_1",
  eventsUrl: "http://127.0.0.1:1/conversations/conv_1/events",
  transport: "sse",
  status: "passed",
  outcome: { kind: "passed" },
  assertions: [{ kind: "says", key: "hello", description: 'says "hello"', passed: true }],
  observation: {
    agentMessages: [],
    toolCalls: [],
    errors: [],
    ended: true,
    durationSec: 1,
    procedures: [],
    entries: [{ kind: "agent", message: { generationId: "g", text: "Hello <there> & welcome", complete: true } }],
  },
  timings: { durationMs: 1200, timeToFirstAgentMessageMs: 30 },
};
const failed: ScenarioResult = {
  ...passed,
  scenario: "books",
  status: "failed",
  outcome: { kind: "failed" },
  assertions: [
    {
      kind: "says",
      key: "booked",
      description: 'says "booked"',
      passed: false,
      detail: 'no completed agent message matched "booked"',
      context: ["agent: Hello"],
    },
    { kind: "ends", key: "ends", description: "the conversation ends", passed: true },
  ],
};
const errored: ScenarioResult = {
  ...passed,
  agent: "booking",
  scenario: "stalls",
  status: "error",
  outcome: { kind: "error", stage: "stream", request: "GET /conversations/conv_1/events", code: "timeout" },
  error: "timed out after 2 s",
  assertions: [],
};

describe("reports", () => {
  it("writes JUnit with a suite per agent, a case per scenario, failures naming the unmet expectation", () => {
    const xml = junitReport([passed, failed, errored]);
    expect(xml).toContain('<testsuites name="agent-iac smoke" tests="3" failures="1" errors="1"');
    expect(xml.match(/<testsuite /g)).toHaveLength(2);
    expect(xml).toContain('<testcase classname="support" name="greets" time="1.200" assertions="1">');
    expect(xml).toContain('<failure message="says &quot;booked&quot;" type="expectation">');
    expect(xml).toContain("    | agent: Hello");
    expect(xml).toContain('<error message="timed out after 2 s" type="infrastructure">');
    expect(xml).toContain("agent: Hello &lt;there&gt; &amp; welcome");
    // Well-formed enough for an XML parser: every testcase is closed.
    expect(xml.match(/<testcase /g)?.length).toBe(xml.match(/<\/testcase>/g)?.length);
  });

  it("writes JSON with ids, pinned versions, transcripts and timings", () => {
    const report = JSON.parse(jsonReport([passed, errored]));
    expect(report).toMatchObject({ format: "agent-iac-report", version: 4, kind: "smoke" });
    expect(report.summary).toMatchObject({ scenarios: 2, calls: 2, passed: 1, failed: 0, errors: 1, flaky: 0 });
    expect(reportSchema.parse(report).scenarios.map((s) => s.verdict)).toEqual(["passed", "error"]);
    expect(report.results[0]).toMatchObject({
      conversation_id: "conv_1",
      version_id: "ca_1@v1",
      transcript: ["agent: Hello <there> & welcome"],
      timings: { time_to_first_agent_message_ms: 30, duration_ms: 1200 },
    });
    expect(report.results[1].error).toBe("timed out after 2 s");
    // The typed outcome, in the report's snake_case.
    expect(report.results.map((r: { outcome: unknown }) => r.outcome)).toEqual([
      { kind: "passed", stage: null, request: null, http_status: null, code: null },
      {
        kind: "error",
        stage: "stream",
        request: "GET /conversations/conv_1/events",
        http_status: null,
        code: "timeout",
      },
    ]);
    expect(parseDocument(jsonReport([failed])).errors).toEqual([]);
  });
});
