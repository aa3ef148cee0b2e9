// watch and audit results as the report value of kind "watch" / "audit" (src/results; src/report
// renders it for people and scripts). Every figure keeps its counts.
import { REPORT_FORMAT, REPORT_VERSION, type Report, reportSchema } from "../results/index.ts";
import { type Attribution, attributionRule, attributionText } from "./attribute.ts";
import type { AuditResult } from "./audit.ts";
import type { ReadCount } from "./read.ts";
import type { WatchResult } from "./watch.ts";
import type { Window } from "./window.ts";

const attributionJson = (a: Attribution) => ({ rule: attributionRule(a), ...a, text: attributionText(a) });
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
      attribution: attributionJson(r.attribution),
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

export function auditReport(
  r: AuditResult,
  createdAt: Date,
  versions: Record<string, string>,
  options: { failOnUnknown?: boolean } = {},
): Report {
  const rows = [...r.current, ...r.old, ...r.oldTests, ...r.unknown];
  return reportSchema.parse({
    format: REPORT_FORMAT,
    version: REPORT_VERSION,
    kind: "audit",
    created_at: createdAt.toISOString(),
    stack: r.stack,
    versions,
    summary: { calls: rows.reduce((n, row) => n + row.calls, 0) },
    notes: r.history.available ? [] : [`stack history: ${r.history.source}`],
    fail_on: options.failOnUnknown ? "unknown" : null,
    traffic: {
      window: windowJson(r.window),
      ...totals(r.reads),
      versions: rows,
      idle: r.idle,
      history: r.history,
      attribution: attributionJson(r.attribution),
    },
  });
}
