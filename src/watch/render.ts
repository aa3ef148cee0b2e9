// watch and audit results for people (a plain-text table, Markdown) and for scripts (the JSON
// report of kind "watch" / "audit", src/report). Every figure shows its counts.
import { REPORT_FORMAT, REPORT_VERSION, type Report, reportSchema } from "../report/index.ts";
import type { AuditResult, VersionRow } from "./audit.ts";
import type { Figures } from "./figures.ts";
import type { ReadCount } from "./read.ts";
import { type AgentWatch, pct, type WatchResult } from "./watch.ts";
import { describeLength, type Window } from "./window.ts";

const when = (d: Date) => d.toISOString().replace(/\.\d{3}Z$/, "Z");
const span = (w: Window) => `${when(w.from)} … ${when(w.to)} (${describeLength(w)})`;
const seconds = (v: number | null) => (v === null ? "–" : `${Number.isInteger(v) ? v : v.toFixed(1)}`);
const durations = (f: Figures) =>
  f.duration_sec.measured === 0
    ? "–"
    : `${seconds(f.duration_sec.median)} / ${seconds(f.duration_sec.p95)} s (${f.duration_sec.measured} calls)`;

/** The figure rows of one agent: name, current, previous. */
function figureRows(a: AgentWatch): [string, string, string][] {
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

export function readsLine(reads: ReadCount[]): string {
  const pages = reads.reduce((n, r) => n + r.pages, 0);
  const items = reads.reduce((n, r) => n + r.items, 0);
  const resumed = reads.reduce((n, r) => n + r.resumed, 0);
  const each = reads.map(
    (r) => `${r.what}: ${r.pages} page(s), ${r.items} item(s)${r.resumed ? `, resumed ${r.resumed}×` : ""}`,
  );
  return `read ${pages} page(s), ${items} item(s)${resumed ? `, resumed ${resumed}× after the client's retries` : ""}:\n${each.map((l) => `  ${l}`).join("\n")}`;
}

export function watchText(r: WatchResult): string {
  const out = [
    `watch ${r.stack}: calls created ${span(r.window)}; previous versions over ${r.baseline_window === r.window ? "the same window" : span(r.baseline_window)}`,
    r.test_calls_excluded
      ? `test calls (livemode: false) left out: ${r.test_calls_excluded} (--include-test-calls counts them)`
      : "",
  ].filter(Boolean);
  for (const a of r.agents) {
    const base = a.baseline ? `${a.baseline.version_id} (from ${a.baseline.source})` : "no previous version";
    out.push("", `${a.key}: ${a.version_id} vs ${base}`);
    out.push(aligned([["", "current", "previous"], ...figureRows(a)]));
    const said = a.message.replace(`${a.key}: `, "");
    out.push(`  → ${a.status === "regressed" || a.status === "ok" ? `${a.status}: ` : ""}${said}`);
  }
  out.push("", readsLine(r.reads), ...r.notes.map((n) => `note: ${n}`));
  return `${out.join("\n")}\n`;
}

const cell = (text: string) => text.replaceAll("|", "\\|");

export function watchMarkdown(r: WatchResult): string {
  const out = [
    `# Live traffic of stack \`${r.stack}\``,
    "",
    `Calls created ${span(r.window)}; previous versions over ${r.baseline_window === r.window ? "the same window" : span(r.baseline_window)}.`,
  ];
  for (const a of r.agents) {
    const base = a.baseline ? `\`${a.baseline.version_id}\` (from ${a.baseline.source})` : "no previous version";
    out.push(
      "",
      `## ${a.key}: ${a.status === "regressed" ? "❌" : a.status === "ok" ? "✅" : "⚠️"} ${a.status.replaceAll("_", " ")}`,
    );
    out.push("", `\`${a.version_id}\` vs ${base}`, "", "| figure | current | previous |", "|---|---|---|");
    for (const [name, now, then] of figureRows(a)) out.push(`| ${name} | ${cell(now)} | ${cell(then)} |`);
    if (a.status !== "ok") out.push("", cell(a.message));
    if (a.status === "regressed" && a.rollback) out.push("", `**Rollback:** ${a.rollback}.`);
  }
  out.push("", "<details><summary>What was read</summary>", "", "```", readsLine(r.reads), "```", "", "</details>");
  for (const note of r.notes) out.push("", `> ${note}`);
  return `${out.join("\n")}\n`;
}

function rowsOf(rows: VersionRow[]): string[][] {
  return rows.map((r) => [r.agent_id, String(r.calls), `${r.live} / ${r.test}`, r.note]);
}

export function auditText(r: AuditResult): string {
  const header = ["AGENT ID", "CALLS", "LIVE / TEST", "WHAT"];
  const out = [`audit ${r.stack}: calls created ${span(r.window)}`, `stack history: ${r.history.source}`];
  const section = (title: string, rows: VersionRow[]) => {
    out.push("", `${title}: ${rows.length === 0 ? "none" : ""}`.trimEnd());
    if (rows.length > 0) out.push(aligned([header, ...rowsOf(rows)]));
  };
  section("current versions taking calls", r.current);
  section("older versions of this stack's agents still taking calls", r.old);
  section("agent ids not in this stack's outputs or history", r.unknown);
  out.push("", `current versions with no calls: ${r.idle.length === 0 ? "none" : ""}`.trimEnd());
  for (const idle of r.idle) out.push(`  ${idle.version_id}  (${idle.key})`);
  out.push("", readsLine(r.reads));
  return `${out.join("\n")}\n`;
}

export function auditMarkdown(r: AuditResult): string {
  const out = [`# Which versions take calls: stack \`${r.stack}\``, "", `Calls created ${span(r.window)}.`];
  const section = (title: string, rows: VersionRow[]) => {
    out.push("", `## ${title} (${rows.length})`);
    if (rows.length === 0) return;
    out.push("", "| agent id | calls | live / test | what |", "|---|---|---|---|");
    for (const row of rowsOf(rows)) out.push(`| \`${row[0]}\` | ${row[1]} | ${row[2]} | ${cell(row[3] ?? "")} |`);
  };
  section("Current versions taking calls", r.current);
  section("Older versions of this stack's agents still taking calls", r.old);
  section("Agent ids not in this stack's outputs or history", r.unknown);
  out.push("", `## Current versions with no calls (${r.idle.length})`);
  if (r.idle.length > 0) out.push("", ...r.idle.map((i) => `- \`${i.version_id}\` (${i.key})`));
  out.push("", `> stack history: ${r.history.source}`);
  out.push("", "<details><summary>What was read</summary>", "", "```", readsLine(r.reads), "```", "", "</details>");
  return `${out.join("\n")}\n`;
}

const windowJson = (w: Window) => ({ from: w.from.toISOString(), to: w.to.toISOString() });
const totals = (reads: ReadCount[]) => ({
  reads,
  pages_read: reads.reduce((n, r) => n + r.pages, 0),
  items_read: reads.reduce((n, r) => n + r.items, 0),
});

export function watchReport(r: WatchResult, createdAt: Date): Report {
  return reportSchema.parse({
    format: REPORT_FORMAT,
    version: REPORT_VERSION,
    kind: "watch",
    created_at: createdAt.toISOString(),
    stack: r.stack,
    versions: Object.fromEntries(r.agents.map((a) => [a.key, a.version_id])),
    old_versions: Object.fromEntries(r.agents.flatMap((a) => (a.baseline ? [[a.key, a.baseline.version_id]] : []))),
    summary: {
      calls: r.agents.reduce((n, a) => n + a.current.calls, 0),
      regressions: r.agents.filter((a) => a.status === "regressed").length,
    },
    notes: r.notes,
    traffic: {
      window: windowJson(r.window),
      baseline_window: windowJson(r.baseline_window),
      ...totals(r.reads),
      test_calls_excluded: r.test_calls_excluded,
      agents: r.agents.map((a) => ({
        key: a.key,
        version_id: a.version_id,
        baseline_version_id: a.baseline?.version_id ?? null,
        baseline_source: a.baseline?.source ?? null,
        status: a.status,
        current: a.current,
        previous: a.previous,
        breaches: a.breaches,
        message: a.message,
        rollback: a.rollback,
      })),
    },
  });
}

export function auditReport(r: AuditResult, createdAt: Date, versions: Record<string, string>): Report {
  const rows = [...r.current, ...r.old, ...r.unknown];
  return reportSchema.parse({
    format: REPORT_FORMAT,
    version: REPORT_VERSION,
    kind: "audit",
    created_at: createdAt.toISOString(),
    stack: r.stack,
    versions,
    summary: { calls: rows.reduce((n, row) => n + row.calls, 0) },
    notes: r.history.available ? [] : [`stack history: ${r.history.source}`],
    traffic: { window: windowJson(r.window), ...totals(r.reads), versions: rows, idle: r.idle, history: r.history },
  });
}
