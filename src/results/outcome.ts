// The one rule from results to counts, exit code and verdict mark. Every surface (terminal, job
// summary, HTML, JUnit, JSON) counts through `countScenarios` and marks through `headline`, and
// every run ends with `reportExitCode`, so the same run tells the same story everywhere: a run that
// exits 0 never shows a failure mark. The words they say it in are words.ts'.

import type { Plan } from "./plan.ts";
import {
  type CallOutcomeKind,
  type CallResult,
  REPORT_FORMAT,
  REPORT_VERSION,
  type Report,
  type ReportSummary,
  type ScenarioComparison,
  type ScenarioSummary,
  type Verdict,
} from "./schema.ts";
import { tryExitCode } from "./variants.ts";

type Policy = Pick<Report, "fail_on"> & Partial<Pick<Report, "allow_inconclusive">>;

/** A sequential comparison that ended undecided and that `--allow-inconclusive` lets through. */
const allowedUndecided = (report: Policy, s: ScenarioSummary) =>
  s.comparison?.outcome === "inconclusive" && (report.allow_inconclusive ?? false);

/** An inconclusive scenario that fails the run (every one but an undecided comparison `--allow-inconclusive` lets through). */
export const failingInconclusive = (report: Policy, s: ScenarioSummary) =>
  s.verdict === "inconclusive" && !allowedUndecided(report, s);

/** A sequential comparison that ended undecided, not let through by `--allow-inconclusive`. */
const inconclusiveComparison = (report: Policy, s: ScenarioSummary) =>
  s.comparison?.outcome === "inconclusive" && !report.allow_inconclusive;

/**
 * Whether a failed scenario is let through by the report's `fail_on` (a comparison under `--fail-on
 * regression`). A sequential comparison lets it through only as earned: "no worse" (or, with
 * `--allow-inconclusive`, inconclusive).
 */
export function tolerated(report: Policy, s: ScenarioSummary): boolean {
  // Without an old version there is no baseline: a failure fails the run under any policy.
  if (report.fail_on !== "regression" || s.verdict !== "failed" || !s.comparison) return false;
  return s.comparison.outcome !== "regression" && !inconclusiveComparison(report, s);
}

/**
 * Whether a scenario fails the run: a failure its `fail_on` does not let through, or a regression
 * (a significantly lower pass rate, or a single call's flip) even where the new side still met its
 * threshold, or a sequential comparison left inconclusive (unless `--allow-inconclusive`).
 */
export function failsRun(report: Policy, s: ScenarioSummary): boolean {
  if (s.verdict === "failed") return !tolerated(report, s);
  const passed = s.verdict === "passed" || s.verdict === "flaky";
  return passed && (s.comparison?.outcome === "regression" || inconclusiveComparison(report, s));
}

/**
 * A scenario compared sequentially with no threshold of its own (`min_pass` 0: its comparison
 * decides it): a regression is its failure, an undecided comparison its inconclusive verdict. Its
 * passes alone would call it flaky whenever a call failed, whatever the comparison said.
 */
export function comparedVerdict(
  verdict: Verdict,
  minPass: number,
  comparison: Pick<ScenarioComparison, "outcome" | "sequential"> | undefined,
): Verdict {
  if (!comparison?.sequential || minPass !== 0 || verdict === "error" || verdict === "not_run") return verdict;
  if (comparison.outcome === "regression") return "failed";
  return comparison.outcome === "inconclusive" ? "inconclusive" : verdict;
}

/** The calls a sequential comparison did not place: both sides' pairs after it decided (none when it did not). */
export function comparisonCallsSaved(
  comparison: Pick<ScenarioComparison, "outcome" | "sequential"> | undefined,
): number {
  const q = comparison?.sequential;
  if (!q || comparison.outcome === "inconclusive") return 0;
  return 2 * Math.max(0, q.max_pairs - q.pairs);
}

/** Whether a call ended on its own (its expectations evaluated, or an error of its own): not cut short, not unplaced. */
export function endedOnItsOwn(kind: CallOutcomeKind): boolean {
  return kind === "passed" || kind === "failed" || kind === "error";
}

/** Whether a call's expectations were evaluated (it passed or failed them). */
export function evaluated(kind: CallOutcomeKind): boolean {
  return kind === "passed" || kind === "failed";
}

/** A call the service answered 404 to creating: it does not know the pinned version. */
export function unknownVersion(call: {
  outcome: Pick<CallResult["outcome"], "kind" | "stage" | "http_status">;
}): boolean {
  const { kind, stage, http_status } = call.outcome;
  return kind === "error" && stage === "create" && http_status === 404;
}

/**
 * The scenarios of a comparison left without a baseline: their old version was called and none of
 * those calls could run, so they were not compared (a scenario whose agent has no old version is
 * plain smoke, not one of these).
 */
export function withoutBaseline(report: Pick<Report, "scenarios" | "results">): ScenarioSummary[] {
  return report.scenarios.filter(
    (s) =>
      !s.comparison && report.results.some((r) => r.side === "old" && r.agent === s.agent && r.scenario === s.scenario),
  );
}

/** How many of the calls ended on their own (by outcome kind): not interrupted, not left unplaced. */
export function finishedCalls(calls: readonly { outcome: { kind: CallOutcomeKind } }[]): number {
  return calls.filter((c) => endedOnItsOwn(c.outcome.kind)).length;
}

/** The calls the report's verdicts stand on (the new side of a comparison). */
export function judgedCalls(report: Pick<Report, "results">): CallResult[] {
  return report.results.filter((c) => c.side !== "old");
}

type Stoppable = Pick<Report, "scenarios" | "results"> & Partial<Pick<Report, "interrupted">>;

/**
 * A scenario the run's stop cut short: no call of its own could not complete, but the stop left
 * calls of it unended (interrupted, or never placed). Named "interrupted", never "could not complete".
 */
export function stoppedScenario(report: Stoppable, s: ScenarioSummary): boolean {
  if (s.verdict !== "error") return false;
  const calls = judgedCalls(report).filter(
    (c) => c.agent === s.agent && c.scenario === s.scenario && c.version_id === s.version_id,
  );
  if (calls.some((c) => c.outcome.kind === "error")) return false;
  return calls.some((c) => c.outcome.kind === "interrupted") || (report.interrupted ?? false);
}

/** The headline counts (scenarios; calls as the second figure), from the scenarios and calls alone. */
export function countScenarios(report: Stoppable & Policy): ReportSummary {
  const verdicts = report.scenarios.map((s) => s.verdict);
  const n = (v: string) => verdicts.filter((x) => x === v).length;
  const stopped = report.scenarios.filter((s) => stoppedScenario(report, s)).length;
  const letThrough = report.scenarios.filter((s) => tolerated(report, s)).length;
  const failing = report.scenarios.filter((s) => failsRun(report, s)).length;
  const regressedPasses = failing - (n("failed") - letThrough);
  const flaky = report.scenarios.filter((s) => s.verdict === "flaky" && !failsRun(report, s)).length;
  const judged = judgedCalls(report);
  const kind = (k: CallOutcomeKind) => judged.filter((c) => c.outcome.kind === k).length;
  const durationMs = report.results.reduce((sum, c) => sum + c.timings.duration_ms, 0);
  const noBaseline = withoutBaseline(report).length;
  return {
    scenarios: report.scenarios.length,
    passed: n("passed") + n("flaky") - regressedPasses,
    failed: failing,
    flaky,
    errors: n("error") - stopped,
    ...(stopped > 0 ? { interrupted: stopped } : {}),
    not_run: n("not_run"),
    tolerated: letThrough,
    regressions: report.scenarios.filter((s) => s.comparison?.outcome === "regression").length,
    // An undecided comparison that --allow-inconclusive lets through is counted apart (allowedInconclusive).
    inconclusive: report.scenarios.filter((s) => failingInconclusive(report, s)).length,
    ...(noBaseline > 0 ? { no_baseline: noBaseline } : {}),
    calls_saved: report.scenarios.reduce(
      (sum, s) => sum + (s.calls_saved ?? 0) + comparisonCallsSaved(s.comparison),
      0,
    ),
    // `calls` are those the verdicts stand on, as `calls_passed`… are; the old side is counted apart.
    calls: judged.filter((c) => c.outcome.kind !== "not_run").length,
    // An old call the service made no conversation of (a version it does not know) was never placed.
    calls_old: report.results.filter((c) => c.side === "old" && c.conversation_id !== null).length,
    calls_passed: kind("passed"),
    calls_failed: kind("failed"),
    calls_errors: kind("error"),
    calls_not_run: kind("not_run"),
    calls_interrupted: kind("interrupted"),
    call_minutes: Math.round((durationMs / 60_000) * 1000) / 1000,
    duration_ms: durationMs,
  };
}

export type RunReportParts = Pick<Report, "kind" | "scenarios" | "results"> &
  Partial<
    Pick<
      Report,
      | "stack"
      | "versions"
      | "old_versions"
      | "shard"
      | "notes"
      | "fail_on"
      | "require_baseline"
      | "allow_inconclusive"
      | "interrupted"
    >
  >;

/** A run's report (smoke, compare, behave, merged, replay) with its summary counted by the one rule. */
export function runReport(parts: RunReportParts): Report {
  const report: Report = {
    format: REPORT_FORMAT,
    version: REPORT_VERSION,
    kind: parts.kind,
    created_at: new Date().toISOString(),
    stack: parts.stack ?? null,
    versions: parts.versions ?? {},
    old_versions: parts.old_versions ?? {},
    shard: parts.shard ?? null,
    summary: {} as ReportSummary,
    scenarios: parts.scenarios,
    results: parts.results,
    notes: parts.notes ?? [],
    fail_on: parts.fail_on ?? null,
    require_baseline: parts.require_baseline ?? false,
    allow_inconclusive: parts.allow_inconclusive ?? false,
    interrupted: parts.interrupted ?? false,
  };
  report.summary = countScenarios(report);
  return report;
}

/**
 * The exit code of a report: 130 interrupted; 3 a scenario could not complete, or a judged call was
 * never placed or cut short (its outcome `not_run` / `interrupted`: it is never a pass), or in merged
 * shards a scenario has no call (a shard's report is missing); 1 a scenario failed (not one its
 * `fail_on` lets through) or a sequential test ended inconclusive, or a comparison that requires
 * its baseline (`require_baseline`) left a scenario without one; 1 an agent's live traffic
 * regressed (watch), an unknown agent id took calls (audit with fail_on "unknown"); else 0 (flaky
 * scenarios passed).
 */
export function exitCode(report: Report): number {
  if (report.interrupted) return 130;
  if (report.kind === "watch") return report.summary.regressions > 0 ? 1 : 0;
  if (report.kind === "try") return tryExitCode(report.variants);
  if (report.kind === "audit") {
    const unknown = report.traffic?.versions.some((v) => v.category === "unknown") ?? false;
    return report.fail_on === "unknown" && unknown ? 1 : 0;
  }
  if (nothingChecked(report)) return 3;
  const counts = countScenarios(report);
  const unfinished = counts.calls_not_run + counts.calls_interrupted;
  if (counts.errors > 0 || unfinished > 0 || (report.kind === "merged" && counts.not_run > 0)) return 3;
  if (report.require_baseline && (counts.no_baseline ?? 0) > 0) return 3;
  return counts.failed + (counts.inconclusive ?? 0) > 0 ? 1 : 0;
}

/** Any kind's report value: a run's or live traffic's Report, or the plan. */
export type AnyReport = Report | Plan;

export const isPlan = (value: AnyReport): value is Plan => value.kind === undefined || value.kind === "plan";

/**
 * The exit code of any kind's report, by `exitCode`: what emitReport returns. A plan's is its behaviour preview's, and at
 * least 1 when the plan fails on its own account (a guarded setting changed, a mandatory violation).
 */
export function reportExitCode(value: AnyReport): number {
  if (!isPlan(value)) return exitCode(value);
  const mandatory = (value.policy?.mandatory ?? 0) > 0;
  const behaviour = value.behave_report;
  // A preview a mandatory violation blocked placed no call: its calls are "not run" by the plan's
  // own failure (1), not calls that could not complete (3).
  const blocked = mandatory && behaviour && !behaviour.interrupted && behaviour.results.every(notPlaced);
  const preview = behaviour && !blocked ? exitCode(behaviour) : 0;
  const held = (value.settings?.changes ?? []).some((c) => c.guarded) || mandatory;
  return held ? Math.max(preview, 1) : preview;
}

const notPlaced = (call: Report["results"][number]) => call.outcome.kind === "not_run";

/**
 * A smoke, replay, merge or comparison in which no scenario was evaluated (none listed, or every
 * one not run): nothing checked is never passed (exit 3, said on the terminal). A shard's own
 * report is exempt (the merge judges it).
 */
export function nothingChecked(report: Pick<Report, "kind" | "scenarios" | "shard">): boolean {
  if (!["smoke", "replay", "merged", "compare"].includes(report.kind)) return false;
  // One shard may hold no call (the others' calls are the merge's to judge).
  if (report.kind !== "merged" && report.shard) return false;
  return report.scenarios.every((s) => s.verdict === "not_run");
}

export type Headline = { exitCode: number; mark: "✅" | "⚠️" | "❌"; word: string };

/** The verdict mark follows the exit code: ❌ only for a run that fails; ⚠️ for a pass with flaky or tolerated scenarios. */
export function headline(report: Report): Headline {
  const code = exitCode(report);
  if (code === 130) return { exitCode: code, mark: "❌", word: "interrupted" };
  if (code === 3 && nothingChecked(report)) return { exitCode: code, mark: "❌", word: "nothing checked" };
  if (code === 3) return { exitCode: code, mark: "❌", word: "could not complete" };
  if (code !== 0) return { exitCode: code, mark: "❌", word: report.kind === "watch" ? "regressed" : "failed" };
  const s = countScenarios(report);
  const caveat =
    s.flaky + s.tolerated + allowedInconclusive(report) > 0 ||
    (report.kind === "watch" && report.traffic?.agents.some((a) => a.status !== "ok"));
  return { exitCode: code, mark: caveat ? "⚠️" : "✅", word: "passed" };
}

/** Comparisons left inconclusive that `--allow-inconclusive` lets pass. */
export function allowedInconclusive(report: Pick<Report, "scenarios"> & Policy): number {
  return report.allow_inconclusive
    ? report.scenarios.filter((s) => s.comparison?.outcome === "inconclusive").length
    : 0;
}
