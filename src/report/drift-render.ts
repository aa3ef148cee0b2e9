// The drift report on every surface: the terminal, the job summary (Markdown), JUnit and HTML each
// show every blessed scenario's baseline next to now, its verdict and why, and what moved besides
// the agent. One wording (these helpers) for all of them; the exit code is outcome.ts's rule over
// the scenario verdicts the drift verdicts were written into.

import { html, markdownText, tableCell, xml } from "../escape/index.ts";
import { type DriftScenario, exitCode, type Report } from "../results/index.ts";
import { htmlReport } from "./html/index.ts";
import { jobSummary } from "./markdown.ts";

const MARK: Record<DriftScenario["verdict"], string> = {
  drifted: "❌",
  holding: "✅",
  inconclusive: "⚠️",
  error: "❌",
  not_run: "⏭️",
};

const pct = (rate: number | null) => (rate === null ? "–" : `${Math.round(rate * 1000) / 10} %`);
const rateText = (c: { calls: number; passes: number; rate: number | null }) =>
  `${c.passes}/${c.calls} (${pct(c.rate)})`;
const p95 = (ms: number | null) => (ms === null ? "–" : `${Math.round(ms)} ms`);

/** `judge model gpt-a → gpt-b` for each thing that moved. */
function movedText(s: DriftScenario): string[] {
  return s.moved.map((m) => `${m.what.replaceAll("_", " ")}: ${m.baseline} → ${m.now}`);
}

/** The expectations whose rate dropped by more than the margin, baseline against now. */
function expectationLines(s: DriftScenario): string[] {
  const shown = s.expectations.filter((e) => e.dropped);
  return shown.map(
    (e) =>
      `expectation ${e.kind ?? ""} ${e.key ?? e.description}`.replace(/\s+/g, " ").trim() +
      `: baseline ${e.baseline.passes}/${e.baseline.calls}, now ${e.now.passes}/${e.now.calls} (dropped)`,
  );
}

/** One scenario's headline: its verdict, baseline against now, and the calls it used. */
function scenarioLine(s: DriftScenario): string {
  return (
    `${s.agent}/${s.scenario} on ${s.version_id}: ${s.verdict} — ${s.reason}; ` +
    `baseline ${rateText(s.baseline)}, p95 ${p95(s.baseline.response_p95_ms)}; ` +
    `now ${rateText(s.now)}, p95 ${p95(s.now.response_p95_ms)}; ${s.calls_used} of ${s.max_calls} calls used`
  );
}

function counts(report: Report): Record<DriftScenario["verdict"], number> {
  const out = { drifted: 0, holding: 0, inconclusive: 0, error: 0, not_run: 0 };
  for (const s of report.drift?.scenarios ?? []) out[s.verdict]++;
  return out;
}

function totalLine(report: Report): string {
  const c = counts(report);
  const interrupted = report.interrupted ? "interrupted, " : "";
  return `drift: ${interrupted}${c.drifted} drifted, ${c.holding} holding, ${c.inconclusive} inconclusive, ${c.error} error(s), ${c.not_run} not run (exit ${exitCode(report)})`;
}

function headerLine(report: Report): string {
  const d = report.drift;
  if (!d) return "drift: no baseline in this report";
  return `drift of stack ${report.stack ?? "?"} against ${d.baseline_file} (blessed ${d.blessed_at} by agent-iac ${d.tool_version}; α ${d.alpha}, margin ${d.margin}, cap ${d.max_calls} calls)`;
}

export function driftText(report: Report): string {
  const lines = [headerLine(report)];
  for (const s of report.drift?.scenarios ?? []) {
    lines.push(`${MARK[s.verdict]} ${scenarioLine(s)}`);
    for (const line of [...expectationLines(s), ...movedText(s).map((m) => `moved: ${m}`)]) lines.push(`   ${line}`);
    if (s.latency?.slower) {
      lines.push(
        `   latency: ${s.latency.exceeded} of ${s.latency.turns} turns over ${p95(s.latency.over_ms ?? s.latency.baseline_p95_ms)} (the baseline's p95 ${p95(s.latency.baseline_p95_ms)} and its slack)`,
      );
    }
  }
  for (const note of report.notes) lines.push(`note: ${note}`);
  lines.push(totalLine(report));
  return `${lines.join("\n")}\n`;
}

/** The job summary: the drift table first, then the run's own summary of its calls. */
export function driftMarkdown(report: Report): string {
  const rows = (report.drift?.scenarios ?? []).map((s) =>
    [
      `${MARK[s.verdict]} ${s.verdict}`,
      markdownText(`${s.agent}/${s.scenario}`),
      markdownText(s.version_id),
      `${rateText(s.baseline)}, p95 ${p95(s.baseline.response_p95_ms)}`,
      `${rateText(s.now)}, p95 ${p95(s.now.response_p95_ms)}`,
      `${s.calls_used} of ${s.max_calls}`,
      markdownText([s.reason, ...expectationLines(s), ...movedText(s).map((m) => `moved: ${m}`)].join("; ")),
    ]
      .map(tableCell)
      .join(" | "),
  );
  return [
    `## agent-iac drift: ${markdownText(report.stack ?? "")}`,
    "",
    markdownText(headerLine(report)),
    "",
    "| verdict | scenario | version | baseline | now | calls | why |",
    "| --- | --- | --- | --- | --- | --- | --- |",
    ...rows.map((row) => `| ${row} |`),
    "",
    markdownText(totalLine(report)),
    "",
    jobSummary(report),
  ].join("\n");
}

/** JUnit: a testcase per blessed scenario; drifted is a failure, inconclusive and error an error, not run skipped. */
export function driftJunit(report: Report): string {
  const scenarios = report.drift?.scenarios ?? [];
  const c = counts(report);
  const cases = scenarios.map((s) => {
    const message = xml([scenarioLine(s), ...expectationLines(s), ...movedText(s)].join("\n"));
    const body =
      s.verdict === "drifted"
        ? `<failure message="${xml(s.reason)}" type="drifted">${message}</failure>`
        : s.verdict === "inconclusive" || s.verdict === "error"
          ? `<error message="${xml(s.reason)}" type="${s.verdict}">${message}</error>`
          : s.verdict === "not_run"
            ? `<skipped message="not run"/>`
            : `<system-out>${message}</system-out>`;
    return `    <testcase classname="drift.${xml(s.agent)}" name="${xml(s.scenario)}">${body}</testcase>`;
  });
  return [
    `<?xml version="1.0" encoding="UTF-8"?>`,
    `<testsuites name="agent-iac drift" tests="${scenarios.length}" failures="${c.drifted}" errors="${c.inconclusive + c.error}">`,
    `  <testsuite name="drift ${xml(report.stack ?? "")}" tests="${scenarios.length}" failures="${c.drifted}" errors="${c.inconclusive + c.error}" skipped="${c.not_run}">`,
    ...cases,
    "  </testsuite>",
    "</testsuites>",
    "",
  ].join("\n");
}

/** The run's HTML report with the drift table at the top of its main part. */
export function driftHtml(report: Report): string {
  const rows = (report.drift?.scenarios ?? []).map(
    (
      s,
    ) => html`<tr data-verdict="${s.verdict}"><td>${MARK[s.verdict]} ${s.verdict}</td><td>${s.agent}/${s.scenario}</td>
<td>${s.version_id}</td><td>${rateText(s.baseline)}, p95 ${p95(s.baseline.response_p95_ms)}</td>
<td>${rateText(s.now)}, p95 ${p95(s.now.response_p95_ms)}</td><td>${s.calls_used} of ${s.max_calls}</td>
<td>${[s.reason, ...expectationLines(s), ...movedText(s).map((m) => `moved: ${m}`)].join("; ")}</td></tr>`,
  );
  const section = html`<section id="drift" aria-labelledby="drift-title">
<h2 id="drift-title">Drift: baseline against now</h2>
<p>${headerLine(report)}</p>
<table><thead><tr><th>verdict</th><th>scenario</th><th>version</th><th>baseline</th><th>now</th><th>calls</th><th>why</th></tr></thead>
<tbody>${rows}</tbody></table>
<p>${totalLine(report)}</p>
</section>
`;
  return htmlReport(report).replace("<main>\n", `<main>\n${section.value}`);
}
