// Reports of kind "try" (variants.ts) for people: the terminal text, Markdown for a file or the job
// summary, and the HTML page (one column per side, the transcripts of each round side by side).
// Every surface says the same: each variant's verdict against the base with its pairs, each side's
// pass rate with its interval, judged rubrics and latency, and a ranking that says how sure it is.
import { codeSpan, type Html, html, markdownText, tableCell, terminalText } from "../escape/index.ts";
import {
  type CallResult,
  type Report,
  tryExitCode,
  type VariantFigures,
  type VariantsReport,
} from "../results/index.ts";
import { STYLE } from "./html/assets.ts";
import { callArticle } from "./html/call.ts";
import { documentStart } from "./html/page.ts";

const EMPTY: VariantsReport = {
  agent: "",
  version_id: "",
  scenarios: [],
  alpha: 0,
  margin: 0,
  max_pairs: 1,
  rounds: 0,
  base: { calls: 0, evaluated: 0, passes: 0, pass_rate: null, rubrics: [], latency_ms: null },
  variants: [],
  ranking: { order: [], first: null, not_told_apart: [], text: "" },
  fail_on: null,
};
const partOf = (report: Report): VariantsReport => report.variants ?? EMPTY;

const WORDS: Record<string, string> = {
  better: "better",
  worse: "worse",
  no_worse: "no worse",
  inconclusive: "inconclusive",
  undecided: "undecided (stopped)",
};
const verdictWord = (verdict: string) => WORDS[verdict] ?? verdict;
const percent = (x: number) => `${Math.round(x * 1000) / 10} %`;

/** `83.3 % [64.1 %, 93.3 %] (25 of 30)`. */
function rateText(f: VariantFigures): string {
  if (!f.pass_rate) return "– (no call ended on its own)";
  const { value, low, high } = f.pass_rate;
  return `${percent(value)} [${percent(low)}, ${percent(high)}] (${f.passes} of ${f.evaluated})`;
}
const latencyText = (f: VariantFigures) => (f.latency_ms === null ? "–" : `${Math.round(f.latency_ms)} ms`);
const rubricsText = (f: VariantFigures) => f.rubrics.map((r) => `${r.rubric}: ${r.passes} of ${r.calls}`).join("; ");

/** Why the verdict: the pairs and the level it was reached at, or why none was. */
function verdictReasonText(v: VariantsReport["variants"][number], part: VariantsReport): string {
  if (v.verdict === "inconclusive") return `not decided within ${part.max_pairs} pairs`;
  if (v.verdict === "undecided") return `stopped after ${v.pairs} pairs`;
  const level = v.level === null ? "" : ` at level ${Math.round(v.level * 10000) / 10000} (Holm)`;
  const margin = v.verdict === "no_worse" ? `, within a margin of ${percent(part.margin)}` : "";
  return `after ${v.decided_after ?? v.pairs} pairs${level}${margin}`;
}

function headlineOf(report: Report): { mark: string; word: string; code: number } {
  const code = report.interrupted ? 130 : tryExitCode(report.variants);
  if (code === 130) return { mark: "❌", word: "interrupted", code };
  if (code === 3) return { mark: "❌", word: "nothing checked for a variant", code };
  if (code === 1) return { mark: "❌", word: "a variant is worse", code };
  const caution = partOf(report).variants.some((v) => v.verdict === "worse" || v.verdict === "inconclusive");
  return { mark: caution ? "⚠️" : "✅", word: "tried", code };
}

export function tryText(report: Report): string {
  const part = partOf(report);
  const h = headlineOf(report);
  const lines = [
    `${h.mark} try ${part.agent} (${part.version_id}): ${h.word} — ${part.variants.length} variant(s) against the base over ${part.rounds} round(s) of ${part.scenarios.join(", ")}`,
    `  base: ${rateText(part.base)}, latency ${latencyText(part.base)}${part.base.rubrics.length > 0 ? `, ${rubricsText(part.base)}` : ""}`,
  ];
  for (const v of part.variants) {
    lines.push(
      `  ${v.name}: ${verdictWord(v.verdict)} ${verdictReasonText(v, part)} — ${rateText(v)}, latency ${latencyText(v)}${v.rubrics.length > 0 ? `, ${rubricsText(v)}` : ""} (override_config ${v.sections.join(", ")})`,
    );
  }
  lines.push(`ranking: ${part.ranking.text}`);
  for (const note of report.notes) lines.push(`note: ${note}`);
  return `${lines.map(terminalText).join("\n")}\n`;
}

export function tryMarkdown(report: Report): string {
  const part = partOf(report);
  const h = headlineOf(report);
  const row = (name: string, verdict: string, f: VariantFigures) =>
    `| ${tableCell(markdownText(name))} | ${tableCell(verdict)} | ${tableCell(rateText(f))} | ${tableCell(markdownText(rubricsText(f) || "–"))} | ${latencyText(f)} |`;
  return [
    `### ${h.mark} agent-iac try ${markdownText(part.agent)} ${codeSpan(part.version_id)}: ${h.word}`,
    "",
    "| side | verdict against the base | pass rate [95 %] | judged rubrics | latency |",
    "| --- | --- | --- | --- | --- |",
    row("base", "–", part.base),
    ...part.variants.map((v) => row(v.name, `${verdictWord(v.verdict)} ${verdictReasonText(v, part)}`, v)),
    "",
    `**Ranking:** ${markdownText(part.ranking.text)}`,
    ...report.notes.map((n) => `- ${markdownText(n)}`),
    "",
  ].join("\n");
}

const EXTRA_STYLE = `.grid{display:grid;grid-auto-flow:column;grid-auto-columns:minmax(18rem,1fr);gap:.5rem;overflow-x:auto}.grid>div{min-width:18rem}.sides th,.sides td{padding:.25rem .5rem;border-bottom:1px solid #ddd;text-align:left}`;

/** The page: the sides as columns (verdict, pass rate, rubrics, latency), then each round's calls side by side. */
export function tryHtml(report: Report): string {
  const part = partOf(report);
  const h = headlineOf(report);
  const sides = ["base", ...part.variants.map((v) => v.name)];
  const figures = [part.base, ...part.variants];
  const cell = (f: (x: VariantFigures, i: number) => string) => figures.map((x, i) => html`<td>${f(x, i)}</td>`);
  const verdicts = ["–", ...part.variants.map((v) => `${verdictWord(v.verdict)} ${verdictReasonText(v, part)}`)];
  const calls = report.results as (CallResult & { variant?: string; round?: number })[];
  const rows = new Map<string, Map<string, CallResult>>();
  for (const c of calls) {
    const key = `${c.scenario} · round ${c.round ?? c.iteration}`;
    const row = rows.get(key) ?? new Map<string, CallResult>();
    row.set(c.variant ?? "base", c);
    rows.set(key, row);
  }
  const doc = html`${documentStart(`agent-iac · try ${part.agent}`, "try", [STYLE, EXTRA_STYLE])}
<header class="top"><h1>agent-iac · Variants of ${part.agent}</h1>
<p class="meta">${report.stack ? `stack ${report.stack} · ` : ""}against ${part.version_id} · ${report.format} v${report.version}</p></header>
<main>
<p class="headline" data-exit-code="${String(h.code)}" data-mark="${h.mark}">${h.mark} <strong>${h.word}</strong></p>
<table class="sides"><thead><tr><th scope="col"></th>${sides.map((s) => html`<th scope="col" data-side="${s}">${s}</th>`)}</tr></thead>
<tbody>
<tr><th scope="row">verdict against the base</th>${verdicts.map((v) => html`<td>${v}</td>`)}</tr>
<tr><th scope="row">pass rate [95 %]</th>${cell((f) => rateText(f))}</tr>
<tr><th scope="row">judged rubrics</th>${cell((f) => rubricsText(f) || "–")}</tr>
<tr><th scope="row">latency (mean response)</th>${cell((f) => latencyText(f))}</tr>
<tr><th scope="row">override_config</th><td>–</td>${part.variants.map((v) => html`<td>${v.sections.join(", ")}</td>`)}</tr>
</tbody></table>
<p class="ranking"><strong>Ranking:</strong> ${part.ranking.text}</p>
${report.notes.length > 0 ? html`<ul class="notes">${report.notes.map((n) => html`<li>${n}</li>`)}</ul>` : null}
<h2>Calls, side by side</h2>
${[...rows].map(([key, row], i) => roundRow(key, row, sides, i))}
</main>
</body>
</html>
`;
  return doc.value;
}

function roundRow(key: string, row: Map<string, CallResult>, sides: string[], index: number): Html {
  return html`<section><h3>${key}</h3><div class="grid">${sides.map((side, j) => {
    const call = row.get(side);
    return html`<div data-side="${side}"><h4>${side}</h4>${call ? callArticle(call, `r${index}-${j}`) : html`<p class="empty">not placed (decided)</p>`}</div>`;
  })}</div></section>`;
}
