// A run's report for the terminal: one line per scenario saying why its verdict differs from its
// passes, the comparison of old and new versions, and the closing count in scenarios with calls
// second. The line of each call (each unmet expectation under it with the nearest transcript lines)
// is src/render's `callLines`, which live smoke prints as calls finish.
import { terminalText } from "../escape/index.ts";
import {
  allowedInconclusive,
  countScenarios,
  evaluated,
  faultBreakdown,
  faultsText,
  figure,
  judgedCalls,
  nothingChecked,
  type Report,
  type ScenarioComparison,
  type ScenarioSummary,
  stoppedScenario,
  tolerated,
  unevaluatedText,
  unknownVersion,
  verdictReason,
  withoutBaseline,
} from "../results/index.ts";
import { comparisonEvidence, decidedText, passKText } from "./repeats.ts";

const percent = (x: number) => `${Math.round(x * 100)} %`;

function measured(s: ScenarioSummary): string {
  const l = s.latency;
  if (!l) return "";
  const ms = (name: string, v: number | null | undefined) => {
    const bound = l.bounds[name];
    return v === null || v === undefined
      ? ""
      : `${name.replace(/_ms$/, "")} ${figure(v)} ms${bound !== undefined ? ` (≤ ${figure(bound)})` : ""}`;
  };
  const values = [
    ms("first_response_ms", l.first_response_ms),
    ms("response_p50_ms", l.response_p50_ms),
    ms("response_p95_ms", l.response_p95_ms),
    ms("tool_ms", l.tool_ms),
  ].filter(Boolean);
  return values.length > 0 ? `; latency ${values.join(", ")}` : "";
}

/** `support/greets: 3/3 passed, latency response p95 1,240 ms over 1,000 ms → failed; latency …`. */
function scenarioLine(s: ScenarioSummary, stopped = false): string {
  const rule = s.sequential
    ? `pass_rate ${s.sequential.pass_rate} ± ${s.sequential.margin} at ${percent(s.sequential.confidence)}`
    : `min_pass ${s.min_pass}`;
  const rate =
    s.pass_rate && s.iterations > 1 && (s.passes < s.iterations || s.sequential)
      ? ` (${percent(s.pass_rate.value)}, 95 % CI ${Math.round(s.pass_rate.low * 100)}–${percent(s.pass_rate.high)}, ${rule})`
      : "";
  const why = s.verdict === "flaky" ? [] : verdictReason(s, stopped);
  const reason = why.length > 0 ? `, ${why.join(", ")}` : "";
  const repeats = [decidedText(s), passKText(s)]
    .filter(Boolean)
    .map((t) => `; ${t}`)
    .join("");
  const verdict = stopped ? "interrupted" : s.verdict;
  return `${s.agent}/${s.scenario}: ${s.passes}/${s.iterations} passed${rate}${reason} → ${verdict}${repeats}${measured(s)}`;
}

const side = (value: boolean | null) => (value === null ? "not evaluated" : value ? "passed" : "failed");
const signed = (n: number) => (n > 0 ? `+${n}` : String(n));

/** One scenario's comparison in words: versions, outcome, flips, deltas, procedures, transcript diff. */
export function comparisonLines(c: ScenarioComparison | undefined, agent: string): string[] {
  if (!c) return [`no old version of ${agent}: plain smoke (nothing to compare with)`];
  const sameVersion = c.old_version_id === c.new_version_id;
  const lines = [
    `old ${c.old_version_id}: ${c.old_verdict}; new ${c.new_version_id}: ${c.new_verdict} → ${c.outcome.replaceAll("_", " ")}`,
    ...(sameVersion ? ["(the same version on both sides: the agent was not replaced)"] : []),
    ...comparisonEvidence(c),
    "",
    "expectations (old → new):",
    ...c.expectations.map(
      (e) => `  ${e.outcome.replaceAll("_", " ")}: ${e.description} (${side(e.old)} → ${side(e.new)})`,
    ),
  ];
  if (c.duration_delta_ms !== null) lines.push("", `duration: ${signed(c.duration_delta_ms)} ms`);
  if (c.response_latency_delta_ms.length > 0) {
    lines.push(`response latency per turn: ${c.response_latency_delta_ms.map((d) => `${signed(d)} ms`).join(", ")}`);
  }
  if (c.procedure_differences.length > 0) {
    lines.push("", "procedures:", ...c.procedure_differences.map((d) => `  ${d}`));
  }
  if (c.transcript_diff.some((l) => !l.startsWith("  "))) {
    lines.push("", "transcript (- old, + new):", ...c.transcript_diff);
  } else if (!sameVersion) lines.push("", "transcript: the same on both versions");
  return lines;
}

const MARK = {
  regression: "✗",
  fixed: "✓",
  still_failing: "~",
  unchanged: "=",
  not_enough_evidence: "≟",
  no_worse: "=",
  inconclusive: "?",
  interrupted: "■",
} as const;

/** The comparison with the old versions, scenario by scenario, and its count of outcomes. */
function comparisonSummary(report: Report): string[] {
  const lines = ["", "comparison with the old versions:"];
  const count = {
    regression: 0,
    fixed: 0,
    still_failing: 0,
    unchanged: 0,
    not_enough_evidence: 0,
    no_worse: 0,
    inconclusive: 0,
    interrupted: 0,
  };
  for (const s of report.scenarios) {
    const c = s.comparison;
    const passed = s.verdict === "passed" || s.verdict === "flaky";
    if (!c) {
      const old = report.results.find((r) => r.side === "old" && r.agent === s.agent && r.scenario === s.scenario);
      const version = JSON.stringify(old?.version_id);
      const why = !old
        ? "no old version, plain smoke"
        : unknownVersion(old)
          ? `the baseline was not found: the service does not know the old version ${version} (404), no comparison`
          : `the old version ${version} could not run (${unevaluatedText(old)}): no baseline, no comparison`;
      lines.push(`  · ${s.agent}/${s.scenario}: ${why} (${passed ? "passed" : "failed"})`);
      continue;
    }
    count[c.outcome]++;
    const same = c.old_version_id === c.new_version_id;
    const versions = same ? `same version ${c.new_version_id}` : `${c.old_version_id} → ${c.new_version_id}`;
    const flipped = c.expectations.filter((e) => e.outcome === "regression" || e.outcome === "fixed");
    const what = flipped.map((e) => `${e.description} ${e.outcome === "regression" ? "now fails" : "now passes"}`);
    const policy = tolerated(report, s) ? " (does not fail the run: --fail-on regression)" : "";
    // An old side that could not be called is no baseline: say so next to the outcome.
    const oldCall = same
      ? undefined
      : report.results.find(
          (r) => r.side === "old" && r.agent === s.agent && r.scenario === s.scenario && !evaluated(r.outcome.kind),
        );
    const oldError = oldCall ? unevaluatedText(oldCall) : undefined;
    const caveat = oldError ? ` (the old version's call could not complete: ${oldError})` : "";
    lines.push(
      `  ${MARK[c.outcome]} ${c.outcome.replaceAll("_", " ")} ${s.agent}/${s.scenario} (${versions})${what.length ? `: ${what.join("; ")}` : ""}${policy}${caveat}`,
    );
    if (c.outcome !== "regression") lines.push(...comparisonEvidence(c).map((l) => `      ${l}`));
    if (c.outcome === "regression") {
      lines.push(
        ...comparisonLines(c, s.agent)
          .slice(1)
          .map((l) => (l ? `      ${l}` : "")),
      );
    }
  }
  // Scenarios without a baseline were not compared: never a tally of zeros as if they were.
  const missing = withoutBaseline(report).length;
  const compared = Object.values(count).reduce((a, b) => a + b, 0);
  const policy = report.require_baseline
    ? "--require-baseline: the run fails (exit 3)"
    : "--require-baseline makes a missing baseline an error";
  if (missing > 0 && compared === 0) {
    lines.push(`no comparison: the baseline of ${missing} scenario(s) was not found or could not run (${policy})`);
    return lines;
  }
  lines.push(
    `${count.regression} regression(s), ${count.fixed} fixed, ${count.still_failing} still failing, ${count.unchanged} unchanged${optionalCounts(count)}${missing > 0 ? `; ${missing} scenario(s) without a baseline, not compared (${policy})` : ""}`,
  );
  return lines;
}

/** The outcomes only some comparisons have, when any did: `, 2 no worse, 1 inconclusive`. */
function optionalCounts(
  count: Record<"not_enough_evidence" | "no_worse" | "inconclusive" | "interrupted", number>,
): string {
  const words = {
    not_enough_evidence: "not enough evidence",
    no_worse: "no worse",
    inconclusive: "inconclusive",
    interrupted: "interrupted",
  };
  return (["not_enough_evidence", "no_worse", "inconclusive", "interrupted"] as const)
    .filter((k) => count[k] > 0)
    .map((k) => `, ${count[k]} ${words[k]}`)
    .join("");
}

/** `calls: 12 of 14 passed, 2 failed, 0 could not complete` — the second figure, labelled. */
function callsLine(report: Report): string {
  const s = countScenarios(report);
  const judged = judgedCalls(report).length;
  const old = s.calls_old;
  const unfinished = [
    ...(s.calls_interrupted > 0 ? [`${s.calls_interrupted} interrupted`] : []),
    ...(s.calls_not_run > 0 ? [`${s.calls_not_run} not run`] : []),
  ].map((t) => `, ${t}`);
  const calls = judgedCalls(report);
  const whose = (kind: "failed" | "error") => {
    const breakdown = faultBreakdown(calls, kind);
    return breakdown ? ` (${breakdown})` : "";
  };
  return `calls: ${s.calls_passed} of ${judged} passed, ${s.calls_failed} failed${whose("failed")}, ${s.calls_errors} could not complete${whose("error")}${unfinished.join("")}${old > 0 ? ` (and ${old} on the old versions)` : ""}`;
}

/**
 * The closing text of a run: the comparison (if any), one line per scenario, the calls, and last
 * `N passed, N failed[, N could not complete][, N flaky]` in scenarios (a flaky one passed; the mark follows the exit code).
 */
export function terminalSummary(report: Report): string {
  const s = countScenarios(report);
  // Version ids (from `--compare OLD`) and the old calls' errors are data: each line escaped whole.
  const lines = report.kind === "compare" ? comparisonSummary(report).map(terminalText) : [];
  // A scenario with no call here (another shard's) is not this report's to tell; one whose calls
  // were never placed is, and so is every scenario of a merge (one with no call in any report).
  const told = (x: ScenarioSummary) => x.verdict !== "not_run" || x.iterations > 0 || report.kind === "merged";
  const notPlaced = report.scenarios.filter((x) => x.verdict === "not_run" && told(x)).length;
  lines.push(...report.scenarios.filter(told).map((x) => terminalText(scenarioLine(x, stoppedScenario(report, x)))));
  if (report.results.length > 0) lines.push(callsLine(report));
  if (s.calls_saved)
    lines.push(`${s.calls_saved} planned call(s) not needed: their scenarios were decided without them`);
  // A scenario that could not complete is counted apart from the failed ones, as on every surface
  // (the JSON summary's and the job summary's `errors`, JUnit's <error>, the HTML tile).
  const extra = [
    ...(s.errors > 0 ? [`${s.errors} could not complete`] : []),
    ...(s.interrupted ? [`${s.interrupted} interrupted`] : []),
    ...(s.flaky > 0 ? [`${s.flaky} flaky`] : []),
    ...(s.inconclusive ? [`${s.inconclusive} inconclusive`] : []),
    ...(s.tolerated > 0 ? [`${s.tolerated} still failing (--fail-on regression)`] : []),
    ...(allowedInconclusive(report) > 0
      ? [`${allowedInconclusive(report)} inconclusive against the old version, allowed by --allow-inconclusive`]
      : []),
    ...(notPlaced > 0 ? [`${notPlaced} not run`] : []),
    ...(s.no_baseline ? [`${s.no_baseline} without a baseline`] : []),
  ];
  if (nothingChecked(report)) lines.push("nothing was checked: no scenario was evaluated, so this run is not a pass");
  const faults = faultsText(report);
  lines.push(
    `${s.passed} passed, ${s.failed} failed${extra.map((e) => `, ${e}`).join("")}${faults ? ` — ${faults}` : ""}`,
  );
  return `${lines.join("\n")}\n`;
}
