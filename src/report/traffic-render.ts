// Reports of kind "watch" and "audit" (live traffic per version, traffic.ts) for people: a
// plain-text table for the terminal and Markdown for a file or the job summary. Every figure shows
// its counts. Text from the service (ids, notes) goes through the Markdown escapers.
import { codeSpan, markdownText, tableCell } from "../escape/index.ts";
import { headline, pct, type Report, type TrafficReport } from "../results/index.ts";

type Figures = TrafficReport["agents"][number]["current"];
type Window = { from: string; to: string };
type VersionRow = TrafficReport["versions"][number];

const traffic = (report: Report): TrafficReport =>
  report.traffic ?? {
    window: { from: "", to: "" },
    baseline_window: null,
    reads: [],
    pages_read: 0,
    items_read: 0,
    test_calls_excluded: 0,
    agents: [],
    versions: [],
    idle: [],
    history: null,
    attribution: null,
  };

const when = (iso: string) => iso.replace(/\.\d{3}Z$/, "Z");

function describeLength(w: Window): string {
  const ms = Date.parse(w.to) - Date.parse(w.from);
  for (const [unit, size] of [
    ["d", 86_400_000],
    ["h", 3_600_000],
    ["min", 60_000],
  ] as const) {
    if (ms >= size && ms % size === 0) return `${ms / size} ${unit}`;
  }
  return `${Math.round(ms / 1000)} s`;
}

const span = (w: Window) => `${when(w.from)} … ${when(w.to)} (${describeLength(w)})`;
const seconds = (v: number | null) => (v === null ? "–" : `${Number.isInteger(v) ? v : v.toFixed(1)}`);
const durations = (f: Figures) =>
  f.duration_sec.measured === 0
    ? "–"
    : `${seconds(f.duration_sec.median)} / ${seconds(f.duration_sec.p95)} s (${f.duration_sec.measured} calls)`;

/** The figure rows of one agent: name, current, previous. */
function figureRows(a: TrafficReport["agents"][number]): [string, string, string][] {
  const p = a.previous;
  const pending = (f: Figures) => (f.procedure_errors.pending ? `, ${f.procedure_errors.pending} pending` : "");
  return [
    ["calls (finished)", `${a.current.calls} (${a.current.finished})`, p ? `${p.calls} (${p.finished})` : "–"],
    ["failure rate", pct(a.current.failure_rate), p ? pct(p.failure_rate) : "–"],
    ["duration p50 / p95", durations(a.current), p ? durations(p) : "–"],
    ["negative feedback", pct(a.current.negative_feedback), p ? pct(p.negative_feedback) : "–"],
    ["negative sentiment", pct(a.current.negative_sentiment), p ? pct(p.negative_sentiment) : "–"],
    [
      "procedure errors",
      `${pct(a.current.procedure_errors)}${pending(a.current)}`,
      p ? `${pct(p.procedure_errors)}${pending(p)}` : "–",
    ],
  ];
}

function aligned(rows: string[][], indent = "  "): string {
  const widths = rows[0]?.map((_, i) => Math.max(...rows.map((r) => (r[i] ?? "").length))) ?? [];
  return rows.map((r) => `${indent}${r.map((c, i) => c.padEnd(widths[i] ?? 0)).join("   ")}`.trimEnd()).join("\n");
}

function readsLine(reads: TrafficReport["reads"]): string {
  const pages = reads.reduce((n, r) => n + r.pages, 0);
  const items = reads.reduce((n, r) => n + r.items, 0);
  const resumed = reads.reduce((n, r) => n + r.resumed, 0);
  const each = reads.map(
    (r) => `${r.what}: ${r.pages} page(s), ${r.items} item(s)${r.resumed ? `, resumed ${r.resumed}×` : ""}`,
  );
  return `read ${pages} page(s), ${items} item(s)${resumed ? `, resumed ${resumed}× after the client's retries` : ""}:\n${each.map((l) => `  ${l}`).join("\n")}`;
}

function baselineSpan(t: TrafficReport): string {
  const b = t.baseline_window;
  return !b || (b.from === t.window.from && b.to === t.window.to) ? "the same window" : span(b);
}

export function watchText(report: Report): string {
  const t = traffic(report);
  const out = [
    `watch ${report.stack}: calls created ${span(t.window)}; previous versions over ${baselineSpan(t)}`,
    t.test_calls_excluded
      ? `test calls (livemode: false) left out: ${t.test_calls_excluded} (--include-test-calls counts them)`
      : "",
  ].filter(Boolean);
  for (const a of t.agents) {
    const base = a.baseline_version_id ? `${a.baseline_version_id} (from ${a.baseline_source})` : "no previous version";
    out.push("", `${a.key}: ${a.version_id} vs ${base}`);
    out.push(aligned([["", "current", "previous"], ...figureRows(a)]));
    const said = a.message.replace(`${a.key}: `, "");
    out.push(`  → ${a.status === "regressed" || a.status === "ok" ? `${a.status}: ` : ""}${said}`);
  }
  out.push("", ...attributionLine(t), readsLine(t.reads), ...report.notes.map((n) => `note: ${n}`));
  return `${out.join("\n")}\n`;
}

/** How the calls were attributed to versions (a line, or none in an older report). */
const attributionLine = (t: TrafficReport) => (t.attribution ? [`attribution: ${t.attribution.text}`] : []);

const readDetails = (t: TrafficReport) => [
  "<details><summary>What was read</summary>",
  "",
  "```",
  readsLine(t.reads),
  "```",
  "",
  "</details>",
];

export function watchMarkdown(report: Report): string {
  const t = traffic(report);
  const h = headline(report);
  const out = [
    `# ${h.mark} Live traffic of stack ${codeSpan(report.stack ?? "")}`,
    "",
    `Calls created ${span(t.window)}; previous versions over ${baselineSpan(t)}.`,
  ];
  for (const a of t.agents) {
    const base = a.baseline_version_id
      ? `${codeSpan(a.baseline_version_id)} (from ${markdownText(a.baseline_source ?? "")})`
      : "no previous version";
    const mark = a.status === "regressed" ? "❌" : a.status === "ok" ? "✅" : "⚠️";
    out.push("", `## ${markdownText(a.key)}: ${mark} ${a.status.replaceAll("_", " ")}`);
    out.push("", `${codeSpan(a.version_id)} vs ${base}`, "", "| figure | current | previous |", "|---|---|---|");
    for (const [name, now, then] of figureRows(a)) out.push(`| ${name} | ${tableCell(now)} | ${tableCell(then)} |`);
    if (a.status !== "ok") out.push("", tableCell(a.message));
    if (a.status === "regressed" && a.rollback) out.push("", `**Rollback:** ${tableCell(a.rollback)}.`);
  }
  for (const line of attributionLine(t)) out.push("", markdownText(line, 2000));
  out.push("", ...readDetails(t));
  for (const note of report.notes) out.push("", `> ${markdownText(note, 2000)}`);
  return `${out.join("\n")}\n`;
}

const rowsOf = (rows: VersionRow[]) => rows.map((r) => [r.agent_id, String(r.calls), `${r.live} / ${r.test}`, r.note]);
const byCategory = (t: TrafficReport, category: string) => t.versions.filter((v) => v.category === category);
const SECTIONS = [
  ["current", "current versions taking calls"],
  ["old", "older versions of this stack's agents still taking calls"],
  ["old_tests", "older versions called only by test calls (agent-iac's own smoke and comparison calls are test calls)"],
  ["unknown", "agent ids not in this stack's outputs or history"],
] as const;

export function auditText(report: Report): string {
  const t = traffic(report);
  const header = ["AGENT ID", "CALLS", "LIVE / TEST", "WHAT"];
  const out = [`audit ${report.stack}: calls created ${span(t.window)}`, `stack history: ${t.history?.source ?? "–"}`];
  for (const [category, title] of SECTIONS) {
    const rows = byCategory(t, category);
    out.push("", `${title}: ${rows.length === 0 ? "none" : ""}`.trimEnd());
    if (rows.length > 0) out.push(aligned([header, ...rowsOf(rows)]));
  }
  out.push("", `current versions with no calls: ${t.idle.length === 0 ? "none" : ""}`.trimEnd());
  for (const idle of t.idle) out.push(`  ${idle.version_id}  (${idle.key})`);
  out.push("", ...attributionLine(t), readsLine(t.reads));
  return `${out.join("\n")}\n`;
}

export function auditMarkdown(report: Report): string {
  const t = traffic(report);
  const out = [
    `# ${headline(report).mark} Which versions take calls: stack ${codeSpan(report.stack ?? "")}`,
    "",
    `Calls created ${span(t.window)}.`,
  ];
  for (const [category, title] of SECTIONS) {
    const rows = byCategory(t, category);
    out.push("", `## ${title[0]?.toUpperCase()}${title.slice(1)} (${rows.length})`);
    if (rows.length === 0) continue;
    out.push("", "| agent id | calls | live / test | what |", "|---|---|---|---|");
    for (const row of rowsOf(rows)) {
      out.push(`| ${codeSpan(row[0] ?? "")} | ${row[1]} | ${row[2]} | ${markdownText(row[3] ?? "", 2000)} |`);
    }
  }
  out.push("", `## Current versions with no calls (${t.idle.length})`);
  if (t.idle.length > 0) out.push("", ...t.idle.map((i) => `- ${codeSpan(i.version_id)} (${markdownText(i.key)})`));
  out.push("", `> stack history: ${markdownText(t.history?.source ?? "–", 2000)}`);
  for (const line of attributionLine(t)) out.push("", `> ${markdownText(line, 2000)}`);
  out.push("", ...readDetails(t));
  return `${out.join("\n")}\n`;
}
