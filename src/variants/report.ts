// The report value of a try (kind "try"): every call with its side, round and place in its round;
// each side's figures; each variant's verdict; the ranking.
import {
  type CallResult,
  countScenarios,
  endedOnItsOwn,
  REPORT_FORMAT,
  REPORT_VERSION,
  type Report,
  type ReportSummary,
  type VariantFigures,
  type VariantsReport,
} from "../results/index.ts";
import { callResult } from "../smoke/index.ts";
import { round4, wilsonInterval } from "../stats/index.ts";
import type { Standing } from "./decide.ts";
import { rank } from "./ranking.ts";
import { BASE, type TriedCall, type TryPlan } from "./rounds.ts";

type Tagged = CallResult & { variant: string; round: number; position: number };

function figures(calls: readonly Tagged[]): VariantFigures {
  const ended = calls.filter((c) => endedOnItsOwn(c.outcome.kind));
  const passes = ended.filter((c) => c.outcome.kind === "passed").length;
  const interval = wilsonInterval(passes, ended.length);
  const rubrics = new Map<string, { passes: number; calls: number }>();
  for (const call of ended) {
    for (const a of call.assertions.filter((x) => x.judgement)) {
      const r = rubrics.get(a.description) ?? { passes: 0, calls: 0 };
      r.calls++;
      if (a.passed) r.passes++;
      rubrics.set(a.description, r);
    }
  }
  const turns = calls.flatMap((c) => c.latency.response_ms);
  return {
    calls: calls.filter((c) => c.outcome.kind !== "not_run").length,
    evaluated: ended.length,
    passes,
    pass_rate: interval
      ? { value: round4(passes / ended.length), low: round4(interval.low), high: round4(interval.high) }
      : null,
    rubrics: [...rubrics].map(([rubric, r]) => ({ rubric, ...r })),
    latency_ms: turns.length > 0 ? Math.round(turns.reduce((a, b) => a + b, 0) / turns.length) : null,
  };
}

export function tryReport(
  plan: TryPlan,
  played: { calls: TriedCall[]; standings: Standing[]; rounds: number },
  options: { stack: string; failOn: "worse" | null; interrupted: boolean; notes: string[] },
): Report {
  const results: Tagged[] = played.calls.map((c) => ({
    ...callResult(c.result),
    livemode: false,
    variant: c.side,
    round: c.round,
    position: c.position,
  }));
  const of = (side: string) => results.filter((r) => r.variant === side);
  const base = figures(of(BASE));
  const variants = plan.variants.map((v, i) => {
    const s = played.standings[i] as Standing;
    return {
      name: v.name,
      source: v.source,
      sections: Object.keys(v.override),
      override: v.override,
      ...figures(of(v.name)),
      verdict: s.verdict,
      pairs: s.pairs.length,
      decided_after: s.decidedAfter ?? null,
      level: s.level ?? null,
      wealth: { worse: round4(s.best.worse), better: round4(s.best.better), no_worse: round4(s.best.noWorse) },
    };
  });
  const outcomes = (side: string) =>
    new Map(
      of(side)
        .filter((c) => endedOnItsOwn(c.outcome.kind))
        .map((c) => [`${c.scenario}\u0000${c.round}`, c.outcome.kind === "passed"]),
    );
  const ranking = rank(
    [BASE, ...plan.variants.map((v) => v.name)].map((name, i) => ({
      name,
      passRate: (i === 0 ? base : variants[i - 1])?.pass_rate?.value ?? null,
      outcomes: outcomes(name),
    })),
    plan.rule,
  );
  const part: VariantsReport = {
    agent: plan.agent,
    version_id: plan.versionId,
    scenarios: plan.scenarios.map((s) => s.scenario.name),
    alpha: plan.rule.alpha,
    margin: plan.rule.margin,
    max_pairs: plan.rule.maxPairs,
    rounds: played.rounds,
    base,
    variants,
    ranking: { order: ranking.order, first: ranking.first, not_told_apart: ranking.notToldApart, text: ranking.text },
    fail_on: options.failOn,
  };
  const report: Report = {
    format: REPORT_FORMAT,
    version: REPORT_VERSION,
    kind: "try",
    created_at: new Date().toISOString(),
    stack: options.stack,
    versions: { [plan.agent]: plan.versionId },
    old_versions: {},
    shard: null,
    summary: {} as ReportSummary,
    scenarios: [],
    results,
    notes: options.notes,
    fail_on: options.failOn,
    require_baseline: false,
    allow_inconclusive: false,
    interrupted: options.interrupted,
    variants: part,
  };
  report.summary = countScenarios(report);
  return report;
}
