// A report as JUnit XML: a testsuite per agent, a testcase per scenario (its iterations are reruns
// of one test). A failed scenario has a <failure> naming the unmet expectations of its failing
// iterations and any latency bound exceeded; a flaky one passes and carries one <flakyFailure> (or
// <flakyError>) per failing iteration, as Maven Surefire writes reruns. Properties hold the pass rate
// with its interval and the measured latency, bound or not; system-out holds the transcripts. In a
// comparison a regression is a failure naming the flipped expectations, and system-out starts with
// the comparison; a scenario the report's `fail_on` lets through has no failure (src/results).
import { xml } from "../escape/index.ts";
import { failureText } from "../render/index.ts";
import {
  answeredBy,
  type CallResult,
  comparisonReason,
  countScenarios,
  evaluated,
  failingInconclusive,
  failsRun,
  faultsText,
  latencyReasons,
  outcomeFacts,
  type Report,
  type ScenarioSummary,
  thresholdText,
  unevaluatedText,
  verdictReason,
} from "../results/index.ts";
import { decidedText, passKText, sequentialText, shownPassK } from "./repeats.ts";
import { comparisonLines } from "./terminal.ts";

const seconds = (ms: number) => (ms / 1000).toFixed(3);
const time = (calls: readonly CallResult[]) => calls.reduce((sum, c) => sum + c.timings.duration_ms, 0);

/** The calls of one scenario summary (same agent, scenario and version), in report order. */
function callsOf(report: Report, scenario: ScenarioSummary): CallResult[] {
  return report.results.filter(
    (c) =>
      c.side !== "old" &&
      c.agent === scenario.agent &&
      c.scenario === scenario.scenario &&
      c.version_id === scenario.version_id,
  );
}

function failedDescriptions(call: CallResult): string[] {
  if (!evaluated(call.outcome.kind)) return [unevaluatedText(call)];
  const failed = call.assertions.filter((a) => !a.passed).map((a) => a.description);
  return failed.length > 0 ? failed : ["nothing was checked"];
}

/** "response_p95_ms 412 ms > 200 ms" for each bound exceeded. */
function latencyProblems(scenario: ScenarioSummary): string[] {
  const latency = scenario.latency;
  if (!latency) return [];
  return latency.exceeded.map((name) => {
    const value = (latency as Record<string, unknown>)[name];
    return `${name} ${typeof value === "number" ? `${value} ms` : "not measured"} > ${latency.bounds[name]} ms`;
  });
}

/** The failure of a scenario that fails the run: a regression names the flipped expectations. */
function failureOf(scenario: ScenarioSummary, failing: CallResult[]): { message: string; type: string } {
  const c = scenario.comparison;
  const compared = comparisonReason(scenario);
  if (scenario.verdict === "inconclusive" && !compared) {
    const why = sequentialText(scenario) || passKText(scenario) || verdictReason(scenario).join("; ");
    return { message: `inconclusive: ${why}`, type: "inconclusive" };
  }
  if (compared && c?.outcome === "inconclusive") return { message: compared, type: "inconclusive" };
  if (compared) return { message: compared, type: "regression" };
  if (c?.outcome === "regression") {
    const flipped = c.expectations.filter((e) => e.outcome === "regression").map((e) => e.description);
    const what = flipped.length > 0 ? flipped.join("; ") : `the scenario (${c.new_verdict})`;
    const e = c.evidence;
    const message =
      e?.method === "exact"
        ? `regression: pass rate ${e.old_rate.passes}/${e.old_rate.calls} on ${c.old_version_id} → ${e.new_rate.passes}/${e.new_rate.calls} on ${c.new_version_id}, adjusted p ${e.adjusted_p_value}`
        : `regression: ${what} passed on ${c.old_version_id}, fails on ${c.new_version_id}`;
    return { message, type: "regression" };
  }
  const ofN = `${scenario.passes} of ${scenario.iterations} iterations passed (${thresholdText(scenario)})`;
  const reasons = [...new Set(failing.flatMap(failedDescriptions)), ...latencyProblems(scenario)];
  const also = c ? ` (also failed on ${c.old_version_id})` : "";
  return { message: `${reasons.join("; ")}${scenario.iterations > 1 ? ` — ${ofN}` : ""}${also}`, type: "expectation" };
}

function properties(scenario: ScenarioSummary, calls: readonly CallResult[]): string[] {
  const props: [string, string | number | null | undefined][] = [
    ["version_id", scenario.version_id],
    ["iterations", scenario.iterations],
    ["passes", scenario.passes],
    // A sequential test's rule is its own property (below): min_pass is not what it was judged by.
    ...(scenario.sequential ? [] : ([["min_pass", scenario.min_pass]] as [string, number][])),
    ["verdict", scenario.verdict],
    ["pass_rate", scenario.pass_rate?.value],
    ["pass_rate_low", scenario.pass_rate?.low],
    ["pass_rate_high", scenario.pass_rate?.high],
    ...repeatProperties(scenario),
  ];
  for (const name of ["first_response_ms", "response_p50_ms", "response_p95_ms", "tool_ms"] as const) {
    props.push([name, scenario.latency?.[name]]);
    const bound = scenario.latency?.bounds[name];
    if (bound !== undefined) props.push([`${name}_bound`, bound]);
  }
  props.push(["conversations", calls.map((c) => c.conversation_id ?? "(not created)").join(", ")]);
  const faults = faultsText({ results: [...calls] });
  if (faults) props.push(["faults", faults]);
  return props.map(([name, value]) => `<property name="${xml(name)}" value="${xml(String(value ?? ""))}"/>`);
}

/** pass^k (as `pass^3`), the early decision and the sequential test, where the scenario has them. */
function repeatProperties(s: ScenarioSummary): [string, string | number | null | undefined][] {
  const shown = shownPassK(s);
  return [
    ...(shown ? ([[`pass^${shown.k}`, shown.value]] as [string, number][]) : []),
    ...(s.pass_k_required ? ([["pass_k_required", passKText(s)]] as [string, string][]) : []),
    ...(decidedText(s) ? ([["decided", decidedText(s)]] as [string, string][]) : []),
    ...(s.sequential ? ([["sequential", sequentialText(s)]] as [string, string][]) : []),
  ];
}

function transcriptOf(call: CallResult): string {
  const header = [
    `iteration ${call.iteration}: ${call.outcome.kind.replace("_", " ")}${outcomeFacts(call)}${call.fault ? `, fault: ${call.fault}` : ""}`,
    `version: ${call.version_id}`,
    `conversation: ${call.conversation_id ?? "(not created)"}`,
    `transport: ${call.transport}`,
    // Judged expectations: verdict, votes, reason and cited lines, passed or not.
    ...call.assertions.flatMap(({ judgement: j }) =>
      j
        ? [
            `judged ${JSON.stringify(j.rubric)}: ${j.verdict} ${j.agreement}${j.uncertain ? " (uncertain)" : ""}${answeredBy(j)}${j.reason ? ` — ${j.reason}` : ""}${j.lines.length > 0 ? ` (lines ${j.lines.join(", ")})` : ""}`,
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
  const failing = calls.filter((c) => c.outcome.kind !== "passed");
  const ofN = `${scenario.passes} of ${scenario.iterations} iterations passed (${thresholdText(scenario)})`;
  if (scenario.verdict === "error") {
    const reasons = [...new Set(failing.flatMap(failedDescriptions))];
    const text = failing.map((c) => `#${c.iteration}\n${failureText(c)}`).join("\n\n");
    out.push(`      <error message="${xml(reasons.join("; "))}" type="infrastructure">${xml(text)}</error>`);
  } else if (failsRun(report, scenario) || failingInconclusive(report, scenario)) {
    const { message, type } = failureOf(scenario, failing);
    const text = [
      ...failing.map((c) => `#${c.iteration}\n${failureText(c)}`),
      ...latencyReasons(scenario).map((p) => `✗ ${p}`),
    ].join("\n\n");
    out.push(`      <failure message="${xml(message)}" type="${type}">${xml(text)}</failure>`);
  } else if (scenario.verdict === "flaky") {
    for (const call of failing) {
      // A call that did not run is no rerun of the test: it is counted in neither tag.
      if (call.outcome.kind === "not_run") continue;
      const tag = call.outcome.kind === "failed" ? "flakyFailure" : "flakyError";
      const type = call.outcome.kind === "failed" ? "expectation" : "infrastructure";
      out.push(
        `      <${tag} message="${xml(`#${call.iteration}: ${failedDescriptions(call).join("; ")} — ${ofN}`)}" type="${type}">`,
        `        <stackTrace>${xml(failureText(call))}</stackTrace>`,
        `        <system-out>${xml(transcriptOf(call))}</system-out>`,
        `      </${tag}>`,
      );
    }
  } else if (scenario.verdict === "not_run") {
    const why = [...new Set(calls.map(unevaluatedText))];
    const message = why.length > 0 ? why.join("; ") : "no call of this scenario in this report";
    out.push(`      <skipped message="${xml(message)}"/>`);
  }
  const comparison = report.kind === "compare" ? [...comparisonLines(scenario.comparison, scenario.agent), "", ""] : [];
  out.push(
    `      <system-out>${xml([...comparison, calls.map(transcriptOf).join("\n\n")].join("\n"))}</system-out>`,
    "    </testcase>",
  );
  return out;
}

/** JUnit's counts are the report's: tests = scenarios, failures = those that fail the run. */
function counts(report: Report, scenarios: readonly ScenarioSummary[]) {
  const s = countScenarios({ ...report, scenarios: [...scenarios] });
  const errors = s.errors + (s.interrupted ?? 0);
  return { tests: s.scenarios, failures: s.failed + (s.inconclusive ?? 0), errors, skipped: s.not_run };
}

const SUITE_NAMES: Record<string, string> = {
  compare: "agent-iac smoke --compare",
  behave: "agent-iac plan --behave",
  merged: "agent-iac smoke (merged shards)",
  replay: "agent-iac smoke --replay",
};

export function junitXml(report: Report): string {
  const total = counts(report, report.scenarios);
  const byAgent = new Map<string, ScenarioSummary[]>();
  for (const s of report.scenarios) byAgent.set(s.agent, [...(byAgent.get(s.agent) ?? []), s]);
  const out = [
    '<?xml version="1.0" encoding="UTF-8"?>',
    `<testsuites name="${xml(SUITE_NAMES[report.kind] ?? "agent-iac smoke")}" tests="${total.tests}" failures="${total.failures}" errors="${total.errors}" skipped="${total.skipped}" time="${seconds(time(report.results.filter((r) => r.side !== "old")))}">`,
  ];
  for (const [agent, scenarios] of byAgent) {
    const c = counts(report, scenarios);
    const calls = report.results.filter((r) => r.agent === agent && r.side !== "old");
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
