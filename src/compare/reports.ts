// The comparison's reports: the shared JSON report (kind "compare": both sides' calls, each
// scenario's comparison, the old versions, the regressions counted) and JUnit (a regression is a
// failure that names the flipped expectation; the comparison is in system-out).
import { REPORT_FORMAT, REPORT_VERSION, type Report, type ScenarioComparison, type Verdict } from "../report/index.ts";
import { callResult, type ScenarioResult, scenarioSummaries } from "../smoke/index.ts";
import { evidenceLines } from "./significance.ts";

export type FailOn = "regression" | "failure";

/** One scenario's calls on both sides; `old` is absent when the agent had no old version. */
export type ComparedScenario = {
  agent: string;
  scenario: string;
  newResults: ScenarioResult[];
  oldResults?: ScenarioResult[];
  /** The old and the new version are the same (the agent was not replaced): one set of calls serves both. */
  sameVersion: boolean;
  /** The new side's scenario verdict under its threshold (flaky passes). */
  newVerdict: Verdict;
  comparison?: ScenarioComparison;
};

export function newVerdictPassed(s: ComparedScenario): boolean {
  return s.newVerdict === "passed" || s.newVerdict === "flaky";
}

/** Whether this scenario fails the run under the policy. */
export function failsRun(s: ComparedScenario, failOn: FailOn): boolean {
  // A regression (a significantly lower pass rate, or a single call's flip) fails the run, even
  // when the new side still meets its threshold.
  if (s.comparison?.outcome === "regression") return true;
  if (newVerdictPassed(s)) return false;
  return failOn === "failure" || !s.comparison;
}

export function compareReport(
  scenarios: ComparedScenario[],
  meta: { stack?: string; oldVersions: Record<string, string>; notes: string[] },
): Report {
  const newResults = scenarios.flatMap((s) => s.newResults);
  const oldResults = scenarios.flatMap((s) => (s.sameVersion ? [] : (s.oldResults ?? [])));
  const comparisons = new Map(scenarios.map((s) => [`${s.agent}\u0000${s.scenario}`, s.comparison]));
  const summaries = scenarioSummaries(newResults).map((summary) => {
    const comparison = comparisons.get(`${summary.agent}\u0000${summary.scenario}`);
    return comparison ? { ...summary, comparison } : summary;
  });
  const all = [...newResults, ...oldResults];
  const durationMs = all.reduce((sum, r) => sum + r.timings.durationMs, 0);
  const count = (status: string) => newResults.filter((r) => r.status === status).length;
  const compared = new Set(scenarios.filter((s) => s.comparison).map((s) => s.agent));
  return {
    format: REPORT_FORMAT,
    version: REPORT_VERSION,
    kind: "compare",
    created_at: new Date().toISOString(),
    stack: meta.stack ?? null,
    versions: Object.fromEntries(newResults.map((r) => [r.agent, r.versionId])),
    old_versions: Object.fromEntries(Object.entries(meta.oldVersions).filter(([agent]) => compared.has(agent))),
    shard: null,
    // passed/failed/errors count the new side's calls (the deploy's verdict); calls and minutes both sides.
    summary: {
      scenarios: summaries.length,
      calls: all.length,
      passed: count("passed"),
      failed: count("failed"),
      flaky: summaries.filter((s) => s.verdict === "flaky").length,
      errors: count("error") + count("not_run"),
      regressions: scenarios.filter((s) => s.comparison?.outcome === "regression").length,
      call_minutes: Math.round((durationMs / 60_000) * 1000) / 1000,
      duration_ms: durationMs,
    },
    scenarios: summaries,
    results: [...newResults.map((r) => callResult(r, "new")), ...oldResults.map((r) => callResult(r, "old"))],
    notes: meta.notes,
  };
}

const xmlEscapes: Record<string, string> = { "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&apos;" };

function xml(text: string): string {
  // biome-ignore lint/suspicious/noControlCharactersInRegex: removing the control characters XML forbids
  const clean = text.replace(/[\u0000-\u0008\u000b\u000c\u000e-\u001f\ufffe\uffff]/g, "");
  return clean.replace(/[&<>"']/g, (c) => xmlEscapes[c] ?? c);
}

const seconds = (ms: number) => (ms / 1000).toFixed(3);
const side = (value: boolean | null) => (value === null ? "not evaluated" : value ? "passed" : "failed");

/** The comparison of one scenario in words: versions, outcome, flips, deltas, procedures, transcript diff. */
export function comparisonText(s: ComparedScenario): string[] {
  const c = s.comparison;
  if (!c) return [`no old version of ${s.agent}: plain smoke (nothing to compare with)`];
  const lines = [
    `old ${c.old_version_id}: ${c.old_verdict}; new ${c.new_version_id}: ${c.new_verdict} → ${c.outcome.replace("_", " ")}`,
    ...(s.sameVersion ? ["(the same version on both sides: the agent was not replaced)"] : []),
    ...(c.evidence ? evidenceLines(c.evidence) : []),
    "",
    "expectations (old → new):",
    ...c.expectations.map(
      (e) => `  ${e.outcome.replace("_", " ")}: ${e.description} (${side(e.old)} → ${side(e.new)})`,
    ),
  ];
  if (c.duration_delta_ms !== null) lines.push("", `duration: ${signed(c.duration_delta_ms)} ms`);
  if (c.response_latency_delta_ms.length > 0) {
    lines.push(`response latency per turn: ${c.response_latency_delta_ms.map((d) => `${signed(d)} ms`).join(", ")}`);
  }
  if (c.procedure_differences.length > 0)
    lines.push("", "procedures:", ...c.procedure_differences.map((d) => `  ${d}`));
  if (c.transcript_diff.some((l) => !l.startsWith("  "))) {
    lines.push("", "transcript (- old, + new):", ...c.transcript_diff);
  } else if (!s.sameVersion) lines.push("", "transcript: the same on both versions");
  return lines;
}

export const signed = (n: number) => (n > 0 ? `+${n}` : String(n));

/** The flipped expectations of a regression, or the scenario's own failure. */
function failureOf(s: ComparedScenario, failOn: FailOn): { message: string; type: string } | undefined {
  if (!failsRun(s, failOn)) return undefined;
  const c = s.comparison;
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
  const failed = [
    ...new Set(s.newResults.flatMap((r) => r.assertions.filter((a) => !a.passed).map((a) => a.description))),
  ];
  const also = c ? ` (also failed on ${c.old_version_id})` : "";
  return { message: `${failed.join("; ") || "nothing was checked"}${also}`, type: "expectation" };
}

export function compareJunit(scenarios: ComparedScenario[], failOn: FailOn): string {
  const byAgent = new Map<string, ComparedScenario[]>();
  for (const s of scenarios) byAgent.set(s.agent, [...(byAgent.get(s.agent) ?? []), s]);
  const time = (list: ComparedScenario[]) =>
    list.flatMap((s) => s.newResults).reduce((t, r) => t + r.timings.durationMs, 0);
  const errored = (s: ComparedScenario) => s.newResults.some((r) => r.status === "error");
  const failures = (list: ComparedScenario[]) => list.filter((s) => !errored(s) && failureOf(s, failOn)).length;
  const errors = (list: ComparedScenario[]) => list.filter(errored).length;
  const out = [
    '<?xml version="1.0" encoding="UTF-8"?>',
    `<testsuites name="agent-iac smoke --compare" tests="${scenarios.length}" failures="${failures(scenarios)}" errors="${errors(scenarios)}" time="${seconds(time(scenarios))}">`,
  ];
  for (const [agent, list] of byAgent) {
    out.push(
      `  <testsuite name="${xml(agent)}" tests="${list.length}" failures="${failures(list)}" errors="${errors(list)}" time="${seconds(time(list))}">`,
    );
    for (const s of list) {
      const assertions = s.newResults.reduce((n, r) => n + r.assertions.length, 0);
      out.push(
        `    <testcase classname="${xml(agent)}" name="${xml(s.scenario)}" time="${seconds(time([s]))}" assertions="${assertions}">`,
      );
      const error = s.newResults.find((r) => r.status === "error");
      const failure = failureOf(s, failOn);
      if (error) {
        out.push(
          `      <error message="${xml(error.error ?? "error")}" type="infrastructure">${xml(error.error ?? "")}</error>`,
        );
      } else if (failure) {
        const body = s.newResults
          .flatMap((r) => r.assertions.filter((a) => !a.passed))
          .map((a) => `✗ ${a.description}${a.detail ? `: ${a.detail}` : ""}`);
        out.push(
          `      <failure message="${xml(failure.message)}" type="${failure.type}">${xml(body.join("\n"))}</failure>`,
        );
      }
      out.push(`      <system-out>${xml(comparisonText(s).join("\n"))}</system-out>`, "    </testcase>");
    }
    out.push("  </testsuite>");
  }
  out.push("</testsuites>", "");
  return out.join("\n");
}
