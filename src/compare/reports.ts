// The comparison's report value (kind "compare": both sides' calls, each scenario's comparison, the
// old versions, the policy in `fail_on`); src/report renders it (JUnit names a regression's flipped
// expectations; the comparison is in system-out and on the terminal).
import {
  type CallResult,
  comparedVerdict,
  type Report,
  runReport,
  type ScenarioComparison,
  type Verdict,
} from "../results/index.ts";
import { type ScenarioGate, summarizeScenarios } from "../smoke/index.ts";

export type FailOn = "regression" | "failure";

/** One scenario's calls on both sides; `old` is absent when the agent had no old version. */
export type ComparedScenario = {
  agent: string;
  scenario: string;
  newCalls: CallResult[];
  oldCalls?: CallResult[];
  /** The old and the new version are the same (the agent was not replaced): one set of calls serves both. */
  sameVersion: boolean;
  /** The new side's scenario verdict under its threshold (flaky passes). */
  newVerdict: Verdict;
  comparison?: ScenarioComparison;
};

export function compareReport(
  scenarios: ComparedScenario[],
  meta: {
    stack?: string;
    shard?: { index: number; count: number };
    /** The new side's scenario gates (the thresholds its verdicts are judged by). */
    gates: ReadonlyMap<string, ScenarioGate>;
    oldVersions: Record<string, string>;
    notes: string[];
    failOn?: FailOn;
    /** A scenario left without a baseline fails the run (exit 3). */
    requireBaseline?: boolean;
    /** A sequential comparison left inconclusive does not fail the run. */
    allowInconclusive?: boolean;
    interrupted?: boolean;
  },
): Report {
  const newCalls = scenarios.flatMap((s) => s.newCalls);
  const oldCalls = scenarios.flatMap((s) => (s.sameVersion ? [] : (s.oldCalls ?? [])));
  const comparisons = new Map(scenarios.map((s) => [`${s.agent}\u0000${s.scenario}`, s.comparison]));
  const summaries = summarizeScenarios(newCalls, meta.gates, false).map((summary) => {
    const comparison = comparisons.get(`${summary.agent}\u0000${summary.scenario}`);
    if (!comparison) return summary;
    return { ...summary, verdict: comparedVerdict(summary.verdict, summary.min_pass, comparison), comparison };
  });
  const compared = new Set(scenarios.filter((s) => s.comparison).map((s) => s.agent));
  return runReport({
    kind: "compare",
    stack: meta.stack ?? null,
    versions: Object.fromEntries(newCalls.map((c) => [c.agent, c.version_id])),
    shard: meta.shard ?? null,
    old_versions: Object.fromEntries(Object.entries(meta.oldVersions).filter(([agent]) => compared.has(agent))),
    scenarios: summaries,
    results: [...newCalls, ...oldCalls],
    notes: meta.notes,
    fail_on: meta.failOn ?? "failure",
    require_baseline: meta.requireBaseline ?? false,
    allow_inconclusive: meta.allowInconclusive ?? false,
    interrupted: meta.interrupted ?? false,
  });
}
