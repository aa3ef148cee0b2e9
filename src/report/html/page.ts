// The document: the summary at the top (counts, pinned versions, duration, call minutes), the
// filters, then every scenario. A Content-Security-Policy allows only this page's own script and
// stylesheet (by hash), so even a slip in escaping could neither run code nor load anything.
import { createHash } from "node:crypto";
import { type Html, html, trusted } from "../../escape/index.ts";
import { countScenarios, faultsText, headline, type Report, scenarioCounts } from "../../results/index.ts";
import { SCRIPT, STYLE } from "./assets.ts";
import { duration, headlineMark, verdictBadge } from "./format.ts";
import { groupScenarios, scenarioSection } from "./scenario.ts";

const titles: Record<string, string> = {
  smoke: "Smoke run",
  compare: "Comparison: old and new versions",
  behave: "Behaviour preview of changed agents",
  merged: "Smoke run (merged shards)",
  replay: "Smoke run replayed from recordings",
  drift: "Drift against the blessed baseline",
};

const hash = (text: string) => `'sha256-${createHash("sha256").update(text).digest("base64")}'`;

/**
 * A page's document up to its <body> tag: a policy that lets exactly its own styles (and script)
 * run and nothing load, no referrer, the title and the styles (every report page shares it).
 */
export function documentStart(title: string, kind: string, styles: readonly string[], script?: string): Html {
  const scripts = script ? `script-src ${hash(script)}; ` : "";
  const policy = `default-src 'none'; style-src ${styles.map(hash).join(" ")}; ${scripts}base-uri 'none'; form-action 'none'`;
  return html`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="${policy}">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<title>${title}</title>
${styles.map(
  (style) => html`<style>${trusted(style)}</style>
`,
)}</head>
<body data-kind="${kind}">`;
}

/** A count of scenarios; its icon only where there is something to mark (a 0 failed shows no ✗). */
function tile(name: string, count: number, icon: string, tone: string): Html {
  const toneNow = count > 0 ? tone : "neutral";
  const mark = count > 0 ? html`<span aria-hidden="true">${icon}</span> ` : null;
  return html`<li class="tile ${toneNow}" data-summary="${name}"><span class="n">${count}</span>${mark}${name}</li>`;
}

/** The verdict at the top: its mark follows the exit code (a flaky scenario is flaky, never a failure). */
function verdictLine(report: Report): Html {
  const h = headline(report);
  return html`<p class="headline" data-exit-code="${String(h.exitCode)}" data-mark="${h.mark}">${headlineMark(h.mark)} <strong>${h.word}</strong> — ${scenarioCounts(report)}${faultsText(report) ? ` — ${faultsText(report)}` : ""}</p>`;
}

function summary(report: Report): Html {
  const s = countScenarios(report);
  const verdicts = new Map<string, number>();
  for (const scenario of report.scenarios) verdicts.set(scenario.verdict, (verdicts.get(scenario.verdict) ?? 0) + 1);
  const agents = [...new Set([...Object.keys(report.versions), ...Object.keys(report.old_versions)])].sort();
  return html`<section aria-labelledby="summary-title">
<h2 id="summary-title">Summary</h2>
${verdictLine(report)}
<ul class="tiles" aria-label="scenarios">
${tile("passed", s.passed, "✓", "good")}
${tile("failed", s.failed, "✗", "bad")}
${tile("flaky", s.flaky, "≈", "warn")}
${tile("errors", s.errors, "⚠", "bad")}
${s.inconclusive ? tile("inconclusive", s.inconclusive, "?", "bad") : null}
${s.interrupted ? tile("interrupted", s.interrupted, "■", "bad") : null}
${tile("regressions", s.regressions, "↓", "bad")}
</ul>
<dl class="facts">
<div><dt>scenarios</dt><dd data-summary="scenarios">${s.scenarios}</dd></div>
<div><dt>calls</dt><dd data-summary="calls">${s.calls}</dd></div>
<div><dt>calls passed / failed / errors</dt><dd data-summary="call_counts">${s.calls_passed} / ${s.calls_failed} / ${s.calls_errors}</dd></div>
${s.calls_interrupted > 0 ? html`<div><dt>calls interrupted</dt><dd data-summary="calls_interrupted">${s.calls_interrupted}</dd></div>` : null}
${s.calls_not_run > 0 ? html`<div><dt>calls not run</dt><dd data-summary="calls_not_run">${s.calls_not_run}</dd></div>` : null}
<div><dt>duration</dt><dd data-summary="duration">${duration(s.duration_ms)}</dd></div>
<div><dt>call minutes used</dt><dd data-summary="call_minutes">${String(Math.round(s.call_minutes * 100) / 100)}</dd></div>
${
  verdicts.size > 0
    ? html`<div><dt>scenario verdicts</dt><dd>${[...verdicts].map(([verdict, n]) => html`${verdictBadge(verdict)} ${n} `)}</dd></div>`
    : null
}
</dl>
${
  agents.length > 0
    ? html`<table class="versions"><caption>Pinned versions</caption><thead><tr><th scope="col">agent</th>${Object.keys(report.old_versions).length > 0 ? html`<th scope="col">old version</th>` : null}<th scope="col">version${report.kind === "compare" ? " (new)" : ""}</th></tr></thead><tbody>${agents.map(
        (agent) =>
          html`<tr><th scope="row">${agent}</th>${Object.keys(report.old_versions).length > 0 ? html`<td><code>${report.old_versions[agent] ?? "–"}</code></td>` : null}<td><code>${report.versions[agent] ?? "–"}</code></td></tr>`,
      )}</tbody></table>`
    : null
}
${report.notes.length > 0 ? html`<ul class="notes" aria-label="notes">${report.notes.map((note) => html`<li>${note}</li>`)}</ul>` : null}
</section>`;
}

function filters(agents: string[]): Html {
  return html`<form class="filters" role="search" aria-label="filter scenarios">
<label>Search <input type="search" id="search" placeholder="scenario or transcript text" aria-keyshortcuts="/" autocomplete="off"></label>
<label><input type="checkbox" id="failed-only"> Failed only</label>
<label>Agent <select id="agent"><option value="">all agents</option>${agents.map((a) => html`<option value="${a}">${a}</option>`)}</select></label>
<span id="shown" role="status" aria-live="polite"></span>
</form>`;
}

export function page(report: Report): string {
  const groups = groupScenarios(report);
  const agents = [...new Set(groups.map((g) => g.summary.agent))].sort();
  const title = titles[report.kind] ?? `Report (${report.kind})`;
  const meta = [
    report.stack ? `stack ${report.stack}` : null,
    report.created_at ? `created ${report.created_at}` : null,
    report.shard ? `shard ${report.shard.index} of ${report.shard.count}` : null,
    `${report.format} v${report.version}`,
  ].filter((part): part is string => part !== null);
  const doc = html`${documentStart(`agent-iac · ${title}${report.stack ? ` · ${report.stack}` : ""}`, report.kind, [STYLE], SCRIPT)}
<a class="skip" href="#scenarios">Skip to scenarios</a>
<header class="top">
<h1>agent-iac · ${title}</h1>
<p class="meta">${meta.join(" · ")}</p>
</header>
<main>
${summary(report)}
<h2 id="scenarios-title">Scenarios</h2>
${filters(agents)}
<div id="scenarios" aria-labelledby="scenarios-title">
${groups.map((group, i) => scenarioSection(group, i))}
<p id="no-match" class="empty" hidden>No scenario matches the filters.</p>
</div>
</main>
<script>${trusted(SCRIPT)}</script>
</body>
</html>
`;
  return doc.value;
}
