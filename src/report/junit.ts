// A report as JUnit XML: a testsuite per agent, a testcase per scenario (its iterations are reruns
// of one test). A failed scenario has a <failure> naming the unmet expectations of its failing
// iterations and any latency bound exceeded; a flaky one passes and carries one <flakyFailure> (or
// <flakyError>) per failing iteration, as Maven Surefire writes reruns. Properties hold the pass rate
// with its interval and the measured latency, bound or not; system-out holds the transcripts.
import type { CallResult, Report, ScenarioSummary } from "./schema.ts";

const xmlEscapes: Record<string, string> = { "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&apos;" };

export function xml(text: string): string {
  // Characters XML 1.0 cannot hold are dropped; the rest is escaped.
  // biome-ignore lint/suspicious/noControlCharactersInRegex: removing the control characters XML forbids
  const clean = text.replace(/[\u0000-\u0008\u000b\u000c\u000e-\u001f\ufffe\uffff]/g, "");
  return clean.replace(/[&<>"']/g, (c) => xmlEscapes[c] ?? c);
}

const seconds = (ms: number) => (ms / 1000).toFixed(3);
const time = (calls: readonly CallResult[]) => calls.reduce((sum, c) => sum + c.timings.duration_ms, 0);

/** The calls of one scenario summary (same agent, scenario and version), in report order. */
export function callsOf(report: Report, scenario: ScenarioSummary): CallResult[] {
  return report.results.filter(
    (c) => c.agent === scenario.agent && c.scenario === scenario.scenario && c.version_id === scenario.version_id,
  );
}

/** Each unmet expectation with the nearest transcript lines, or why the call could not complete. */
export function failureText(call: CallResult): string {
  if (call.status === "error" || call.status === "not_run") return call.error ?? call.status;
  const lines: string[] = [];
  for (const assertion of call.assertions.filter((a) => !a.passed)) {
    lines.push(`✗ ${assertion.description}${assertion.detail ? `: ${assertion.detail}` : ""}`);
    for (const line of assertion.context) lines.push(`    | ${line}`);
  }
  if (call.assertions.length === 0) lines.push("✗ nothing was checked: the scenario evaluated no assertion");
  return lines.join("\n");
}

function failedDescriptions(call: CallResult): string[] {
  if (call.status === "error" || call.status === "not_run") return [call.error ?? call.status];
  const failed = call.assertions.filter((a) => !a.passed).map((a) => a.description);
  return failed.length > 0 ? failed : ["nothing was checked"];
}

/** "response_p95_ms 412 > 200" for each bound exceeded. */
export function latencyProblems(scenario: ScenarioSummary): string[] {
  const latency = scenario.latency;
  if (!latency) return [];
  return latency.exceeded.map((name) => {
    const value = (latency as Record<string, unknown>)[name];
    return `${name} ${typeof value === "number" ? `${value} ms` : "not measured"} > ${latency.bounds[name]} ms`;
  });
}

function properties(scenario: ScenarioSummary, calls: readonly CallResult[]): string[] {
  const props: [string, string | number | null | undefined][] = [
    ["version_id", scenario.version_id],
    ["iterations", scenario.iterations],
    ["passes", scenario.passes],
    ["min_pass", scenario.min_pass],
    ["verdict", scenario.verdict],
    ["pass_rate", scenario.pass_rate?.value],
    ["pass_rate_low", scenario.pass_rate?.low],
    ["pass_rate_high", scenario.pass_rate?.high],
  ];
  for (const name of ["first_response_ms", "response_p50_ms", "response_p95_ms", "tool_ms"] as const) {
    props.push([name, scenario.latency?.[name]]);
    const bound = scenario.latency?.bounds[name];
    if (bound !== undefined) props.push([`${name}_bound`, bound]);
  }
  props.push(["conversations", calls.map((c) => c.conversation_id ?? "(not created)").join(", ")]);
  return props.map(([name, value]) => `<property name="${xml(name)}" value="${xml(String(value ?? ""))}"/>`);
}

function transcriptOf(call: CallResult): string {
  const header = [
    `iteration ${call.iteration}: ${call.status}`,
    `version: ${call.version_id}`,
    `conversation: ${call.conversation_id ?? "(not created)"}`,
    `transport: ${call.transport}`,
    // Judged expectations: verdict, votes, reason and cited lines, passed or not.
    ...call.assertions.flatMap(({ judgement: j }) =>
      j
        ? [
            `judged ${JSON.stringify(j.rubric)}: ${j.verdict} ${j.agreement}${j.uncertain ? " (uncertain)" : ""}${j.reason ? ` — ${j.reason}` : ""}${j.lines.length > 0 ? ` (lines ${j.lines.join(", ")})` : ""}`,
          ]
        : [],
    ),
  ];
  return [...header, "", ...call.transcript].join("\n");
}

function testcase(report: Report, scenario: ScenarioSummary): string[] {
  const calls = callsOf(report, scenario);
  const assertions = calls.reduce((sum, c) => sum + c.assertions.length, 0);
  const out = [
    `    <testcase classname="${xml(scenario.agent)}" name="${xml(scenario.scenario)}" time="${seconds(time(calls))}" assertions="${assertions}">`,
    `      <properties>${properties(scenario, calls).join("")}</properties>`,
  ];
  const failing = calls.filter((c) => c.status !== "passed");
  const ofN = `${scenario.passes} of ${scenario.iterations} iterations passed (min_pass ${scenario.min_pass})`;
  if (scenario.verdict === "failed" || scenario.verdict === "error") {
    const reasons = [...new Set(failing.flatMap(failedDescriptions)), ...latencyProblems(scenario)];
    const message = `${reasons.join("; ")}${scenario.iterations > 1 ? ` — ${ofN}` : ""}`;
    const text = [
      ...failing.map((c) => `#${c.iteration}\n${failureText(c)}`),
      ...latencyProblems(scenario).map((p) => `✗ latency ${p}`),
    ].join("\n\n");
    const [tag, type] = scenario.verdict === "error" ? ["error", "infrastructure"] : ["failure", "expectation"];
    out.push(`      <${tag} message="${xml(message)}" type="${type}">${xml(text)}</${tag}>`);
  } else if (scenario.verdict === "flaky") {
    for (const call of failing) {
      const tag = call.status === "failed" ? "flakyFailure" : "flakyError";
      const type = call.status === "failed" ? "expectation" : "infrastructure";
      out.push(
        `      <${tag} message="${xml(`#${call.iteration}: ${failedDescriptions(call).join("; ")} — ${ofN}`)}" type="${type}">`,
        `        <stackTrace>${xml(failureText(call))}</stackTrace>`,
        `        <system-out>${xml(transcriptOf(call))}</system-out>`,
        `      </${tag}>`,
      );
    }
  } else if (scenario.verdict === "not_run") {
    out.push(`      <skipped message="no call of this scenario in this report"/>`);
  }
  out.push(`      <system-out>${xml(calls.map(transcriptOf).join("\n\n"))}</system-out>`, "    </testcase>");
  return out;
}

function counts(scenarios: readonly ScenarioSummary[]) {
  return {
    tests: scenarios.length,
    failures: scenarios.filter((s) => s.verdict === "failed").length,
    errors: scenarios.filter((s) => s.verdict === "error").length,
    skipped: scenarios.filter((s) => s.verdict === "not_run").length,
  };
}

export function junitXml(report: Report): string {
  const total = counts(report.scenarios);
  const byAgent = new Map<string, ScenarioSummary[]>();
  for (const s of report.scenarios) byAgent.set(s.agent, [...(byAgent.get(s.agent) ?? []), s]);
  const out = [
    '<?xml version="1.0" encoding="UTF-8"?>',
    `<testsuites name="agent-iac smoke" tests="${total.tests}" failures="${total.failures}" errors="${total.errors}" skipped="${total.skipped}" time="${seconds(time(report.results))}">`,
  ];
  for (const [agent, scenarios] of byAgent) {
    const c = counts(scenarios);
    const calls = report.results.filter((r) => r.agent === agent);
    const versions = [...new Set(scenarios.map((s) => s.version_id))].join(", ");
    out.push(
      `  <testsuite name="${xml(agent)}" tests="${c.tests}" failures="${c.failures}" errors="${c.errors}" skipped="${c.skipped}" time="${seconds(time(calls))}">`,
      `    <properties><property name="version_id" value="${xml(versions)}"/></properties>`,
    );
    for (const scenario of scenarios) out.push(...testcase(report, scenario));
    out.push("  </testsuite>");
  }
  out.push("</testsuites>", "");
  return out.join("\n");
}
