// Smoke results as JUnit XML (a testsuite per agent, a testcase per scenario and iteration) and as
// JSON. Nothing secret is in a result: the stream token is never stored in one.
import type { Assertion, Observation } from "./expectations.ts";
import { renderEntry } from "./transcript.ts";

export type ScenarioStatus = "passed" | "failed" | "error";

export type ScenarioResult = {
  agent: string;
  scenario: string;
  iteration: number;
  versionId: string;
  conversationId?: string;
  /** The stream's address, without the token. */
  eventsUrl?: string;
  transport: "sse" | "ws";
  status: ScenarioStatus;
  assertions: Assertion[];
  /** Why the call could not be completed (service unreachable, stream failed or timed out). */
  error?: string;
  observation?: Observation;
  timings: { timeToFirstAgentMessageMs?: number; durationMs: number };
};

export type Summary = { passed: number; failed: number; errors: number };

export function summarize(results: ScenarioResult[]): Summary {
  return {
    passed: results.filter((r) => r.status === "passed").length,
    failed: results.filter((r) => r.status === "failed").length,
    errors: results.filter((r) => r.status === "error").length,
  };
}

export function testcaseName(result: ScenarioResult): string {
  return `${result.scenario}#${result.iteration}`;
}

const xmlEscapes: Record<string, string> = { "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&apos;" };

function xml(text: string): string {
  // Characters XML 1.0 cannot hold are dropped; the rest is escaped.
  // biome-ignore lint/suspicious/noControlCharactersInRegex: removing the control characters XML forbids
  const clean = text.replace(/[\u0000-\u0008\u000b\u000c\u000e-\u001f\ufffe\uffff]/g, "");
  return clean.replace(/[&<>"']/g, (c) => xmlEscapes[c] ?? c);
}

function seconds(ms: number): string {
  return (ms / 1000).toFixed(3);
}

function failureText(result: ScenarioResult): string {
  const lines: string[] = [];
  for (const assertion of result.assertions.filter((a) => !a.passed)) {
    lines.push(`✗ ${assertion.description}${assertion.detail ? `: ${assertion.detail}` : ""}`);
    for (const line of assertion.context ?? []) lines.push(`    | ${line}`);
  }
  if (result.assertions.length === 0) lines.push("✗ nothing was checked: the scenario evaluated no assertion");
  return lines.join("\n");
}

export function junitReport(results: ScenarioResult[]): string {
  const byAgent = new Map<string, ScenarioResult[]>();
  for (const result of results) byAgent.set(result.agent, [...(byAgent.get(result.agent) ?? []), result]);
  const total = summarize(results);
  const totalTime = results.reduce((sum, r) => sum + r.timings.durationMs, 0);
  const out = [
    '<?xml version="1.0" encoding="UTF-8"?>',
    `<testsuites name="agent-iac smoke" tests="${results.length}" failures="${total.failed}" errors="${total.errors}" time="${seconds(totalTime)}">`,
  ];
  for (const [agent, cases] of byAgent) {
    const summary = summarize(cases);
    const time = cases.reduce((sum, r) => sum + r.timings.durationMs, 0);
    const versions = [...new Set(cases.map((c) => c.versionId))].join(", ");
    out.push(
      `  <testsuite name="${xml(agent)}" tests="${cases.length}" failures="${summary.failed}" errors="${summary.errors}" time="${seconds(time)}">`,
      `    <properties><property name="version_id" value="${xml(versions)}"/></properties>`,
    );
    for (const result of cases) {
      out.push(
        `    <testcase classname="${xml(agent)}" name="${xml(testcaseName(result))}" time="${seconds(result.timings.durationMs)}" assertions="${result.assertions.length}">`,
      );
      if (result.status === "error") {
        out.push(
          `      <error message="${xml(result.error ?? "error")}" type="infrastructure">${xml(result.error ?? "")}</error>`,
        );
      } else if (result.status === "failed") {
        const failed = result.assertions.filter((a) => !a.passed).map((a) => a.description);
        const message = failed.length > 0 ? failed.join("; ") : "nothing was checked";
        out.push(`      <failure message="${xml(message)}" type="expectation">${xml(failureText(result))}</failure>`);
      }
      const header = [
        `version: ${result.versionId}`,
        `conversation: ${result.conversationId ?? "(not created)"}`,
        `transport: ${result.transport}`,
      ];
      const transcript = transcriptLines(result.observation);
      out.push(`      <system-out>${xml([...header, "", ...transcript].join("\n"))}</system-out>`, "    </testcase>");
    }
    out.push("  </testsuite>");
  }
  out.push("</testsuites>", "");
  return out.join("\n");
}

export function jsonReport(results: ScenarioResult[]): string {
  const report = {
    summary: summarize(results),
    results: results.map((r) => ({
      agent: r.agent,
      scenario: r.scenario,
      iteration: r.iteration,
      status: r.status,
      version_id: r.versionId,
      conversation_id: r.conversationId ?? null,
      events_url: r.eventsUrl ?? null,
      transport: r.transport,
      error: r.error ?? null,
      assertions: r.assertions.map(({ description, passed, detail }) => ({
        description,
        passed,
        detail: detail ?? null,
      })),
      transcript: transcriptLines(r.observation),
      // Arguments decoded when the service sent a JSON string; `rawArguments` keeps what it sent.
      tool_calls: r.observation?.toolCalls ?? [],
      procedures: r.observation?.procedures ?? [],
      timings: {
        time_to_first_agent_message_ms: r.timings.timeToFirstAgentMessageMs ?? null,
        duration_ms: r.timings.durationMs,
      },
    })),
  };
  return `${JSON.stringify(report, null, 2)}\n`;
}

/** The call's transcript as display lines (tool arguments decoded). */
function transcriptLines(observation: Observation | undefined): string[] {
  return (observation?.entries ?? []).map(renderEntry);
}
