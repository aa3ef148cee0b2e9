// Scenarios with their calls. A scenario of a comparison shows its outcome, the expectations that
// flipped, the transcript diff, and the old and new calls side by side.

import { type Html, html } from "../../escape/index.ts";
import {
  type CallResult,
  evaluated,
  needsText,
  type Report,
  type ScenarioComparison,
  type ScenarioSummary,
  type Verdict,
  verdictReason,
} from "../../results/index.ts";
import { comparisonEvidence, decidedText, passKText, sequentialText } from "../repeats.ts";
import { callArticle } from "./call.ts";
import { duration, outcomeBadge, passMark, signedMs, verdictBadge, verdictTone } from "./format.ts";

export type ScenarioGroup = {
  summary: ScenarioSummary;
  /** Calls with their index in `report.results` (anchors are made from it). */
  calls: { call: CallResult; index: number }[];
};

/** The verdict of calls that have no scenario summary (an older or partial report). */
function verdictOf(calls: readonly CallResult[]): Verdict {
  if (calls.every((c) => c.outcome.kind === "not_run")) return "not_run";
  if (calls.some((c) => !evaluated(c.outcome.kind))) return "error";
  return calls.every((c) => c.outcome.kind === "passed") ? "passed" : "failed";
}

/** Each scenario summary with its calls, in the report's order; calls no summary claims form their own groups. */
export function groupScenarios(report: Report): ScenarioGroup[] {
  const claimed = new Set<number>();
  const groups: ScenarioGroup[] = report.scenarios.map((summary) => {
    const calls = report.results.flatMap((call, index) => {
      if (claimed.has(index) || call.agent !== summary.agent || call.scenario !== summary.scenario) return [];
      const version =
        call.side === "old" ? (summary.comparison?.old_version_id ?? call.version_id) : summary.version_id;
      if (call.version_id !== version) return [];
      claimed.add(index);
      return [{ call, index }];
    });
    return { summary, calls };
  });
  const rest = new Map<string, ScenarioGroup["calls"]>();
  report.results.forEach((call, index) => {
    if (claimed.has(index)) return;
    const key = JSON.stringify([call.agent, call.scenario, call.side, call.version_id]);
    rest.set(key, [...(rest.get(key) ?? []), { call, index }]);
  });
  for (const calls of rest.values()) {
    const first = (calls[0] as { call: CallResult }).call;
    const list = calls.map((c) => c.call);
    groups.push({
      summary: {
        agent: first.agent,
        scenario: first.scenario,
        version_id: first.version_id,
        verdict: verdictOf(list),
        iterations: list.length,
        passes: list.filter((c) => c.outcome.kind === "passed").length,
        min_pass: list.length,
        pass_rate: null,
      },
      calls,
    });
  }
  return groups;
}

/** What the "failed only" filter keeps: anything but a clean pass of the new side (a regression, a flaky run, an error). */
function needsAttention(group: ScenarioGroup): boolean {
  return (
    group.summary.verdict !== "passed" ||
    group.summary.comparison?.outcome === "regression" ||
    group.calls.some(({ call }) => call.side !== "old" && call.outcome.kind !== "passed")
  );
}

function percent(value: number): string {
  return `${Math.round(value * 1000) / 10} %`;
}

function scenarioFacts(summary: ScenarioSummary): Html {
  const latency = summary.latency;
  const bounds = latency ? Object.entries(latency.bounds) : [];
  // Why the verdict differs from the passes (a latency bound, a threshold, a call that could not complete).
  const why = verdictReason(summary);
  return html`<dl class="facts">
<div><dt>version</dt><dd><code>${summary.version_id}</code></dd></div>
<div><dt>passed iterations</dt><dd>${summary.passes} of ${summary.iterations} (${needsText(summary)})</dd></div>
${why.length > 0 ? html`<div><dt>why ${summary.verdict.replace("_", " ")}</dt><dd data-why>${why.join(", ")}</dd></div>` : null}
${summary.pass_rate ? html`<div><dt>pass rate</dt><dd>${percent(summary.pass_rate.value)} (95 % interval ${percent(summary.pass_rate.low)}–${percent(summary.pass_rate.high)})</dd></div>` : null}
${[
  ["pass^k", passKText(summary)],
  ["decided", decidedText(summary)],
  ["sequential test", sequentialText(summary)],
].map(([dt, dd]) => (dd ? html`<div><dt>${dt}</dt><dd>${dd}</dd></div>` : null))}
${
  latency
    ? html`<div><dt>first reply</dt><dd>${duration(latency.first_response_ms)}</dd></div>
<div><dt>reply p50 / p95</dt><dd>${duration(latency.response_p50_ms)} / ${duration(latency.response_p95_ms)}</dd></div>
<div><dt>tool calls</dt><dd>${duration(latency.tool_ms)}</dd></div>
${bounds.length > 0 ? html`<div><dt>latency bounds</dt><dd>${bounds.map(([name, ms]) => html`<span class="bound${latency.exceeded.includes(name) ? " exceeded" : ""}">${name} ≤ ${duration(ms)}${latency.exceeded.includes(name) ? html` <strong><span aria-hidden="true">✗</span> exceeded</strong>` : html` <span aria-hidden="true">✓</span>`}</span> `)}</dd></div>` : null}`
    : null
}
</dl>`;
}

function diffLine(line: string): Html {
  const cls = line.startsWith("+") ? "add" : line.startsWith("-") ? "del" : "same";
  return html`<span class="diff-${cls}">${line}</span>\n`;
}

function comparisonBlock(comparison: ScenarioComparison): Html {
  const flipped = comparison.expectations.filter((e) => e.old !== e.new);
  return html`<section class="comparison" aria-label="old versus new">
<p>${outcomeBadge(comparison.outcome)} old <code>${comparison.old_version_id}</code> ${verdictBadge(comparison.old_verdict)} → new <code>${comparison.new_version_id}</code> ${verdictBadge(comparison.new_verdict)}</p>
${
  comparison.expectations.length > 0
    ? html`<table class="flips"><caption>Expectations old → new (${flipped.length} flipped)</caption>
<thead><tr><th scope="col">expectation</th><th scope="col">old</th><th scope="col">new</th><th scope="col">outcome</th></tr></thead>
<tbody>${comparison.expectations.map(
        (e) =>
          html`<tr class="${e.old !== e.new ? "flip" : ""}" data-flip="${String(e.old !== e.new)}"><td>${e.old !== e.new ? html`<strong><span aria-hidden="true">⇄</span> flipped:</strong> ` : null}${e.description}</td><td>${passMark(e.old)}</td><td>${passMark(e.new)}</td><td>${outcomeBadge(e.outcome)}</td></tr>`,
      )}</tbody></table>`
    : null
}
${comparisonEvidence(comparison).length > 0 ? html`<ul class="evidence">${comparisonEvidence(comparison).map((line) => html`<li>${line}</li>`)}</ul>` : null}
<dl class="facts">
${comparison.duration_delta_ms === null ? null : html`<div><dt>duration new − old</dt><dd>${signedMs(comparison.duration_delta_ms)}</dd></div>`}
${comparison.response_latency_delta_ms.length > 0 ? html`<div><dt>reply latency new − old</dt><dd>${comparison.response_latency_delta_ms.map(signedMs).join(", ")}</dd></div>` : null}
</dl>
${comparison.procedure_differences.length > 0 ? html`<div class="label">Procedure differences</div><ul>${comparison.procedure_differences.map((d) => html`<li>${d}</li>`)}</ul>` : null}
${comparison.transcript_diff.length > 0 ? html`<details open><summary>Transcript diff (first iterations; − old, + new)</summary><pre class="diff">${comparison.transcript_diff.map(diffLine)}</pre></details>` : null}
</section>`;
}

function callList(calls: ScenarioGroup["calls"]): Html {
  return html`${calls.map(({ call, index }) => callArticle(call, `c${index}`))}`;
}

function calls(group: ScenarioGroup): Html {
  const old = group.calls.filter(({ call }) => call.side === "old");
  if (old.length === 0) return callList(group.calls);
  const fresh = group.calls.filter(({ call }) => call.side !== "old");
  const heading = (side: string, list: ScenarioGroup["calls"]) =>
    html`<h4 class="side-title">${side} <code>${list[0]?.call.version_id ?? ""}</code></h4>`;
  return html`<div class="sides"><div class="side-col" data-side="old">${heading("Old", old)}${callList(old)}</div><div class="side-col" data-side="new">${heading("New", fresh)}${callList(fresh)}</div></div>`;
}

export function scenarioSection(group: ScenarioGroup, n: number): Html {
  const { summary } = group;
  const attention = needsAttention(group);
  // The card's bar: a regression fails the run whatever the new side's verdict (flaky included).
  const tone = summary.comparison?.outcome === "regression" ? "bad" : verdictTone(summary.verdict);
  return html`<section class="scenario" id="s${n}" data-agent="${summary.agent}" data-scenario="${summary.scenario}" data-verdict="${summary.verdict}" data-attention="${String(attention)}" data-tone="${tone}"${summary.comparison ? html` data-outcome="${summary.comparison.outcome}"` : null}>
<h3>${verdictBadge(summary.verdict)} <span class="agent">${summary.agent}</span> / <span class="name">${summary.scenario}</span>${summary.comparison ? html` ${outcomeBadge(summary.comparison.outcome)}` : null}</h3>
${scenarioFacts(summary)}
${summary.comparison ? comparisonBlock(summary.comparison) : null}
${calls(group)}
</section>`;
}
