// Old versus new: every planned call is placed on the new version and, with the same inputs, on
// the old one (both pinned; the smoke job places them); the same scenario's two sides are then compared. An agent without an
// old version (a first deploy, a new agent) runs as plain smoke and the run says so; an agent whose
// version did not change is called once and serves both sides.

import { type CallResult, comparedVerdict, type Report, unknownVersion, type Verdict } from "../results/index.ts";
import {
  callResult,
  gatesOf,
  type PlannedCall,
  type ScenarioGate,
  type ScenarioResult,
  summarizeScenarios,
} from "../smoke/index.ts";
import type { PairedRule } from "../stats/index.ts";
import { compareScenario } from "./compare.ts";
import type { OldVersions } from "./old-versions.ts";
import { type ComparedScenario, compareReport, type FailOn } from "./reports.ts";
import { type CompareRule, type PairedPlan, pairedPlan, sequentialEvidence } from "./sequential.ts";
import { DEFAULT_ALPHA, regressionEvidence } from "./significance.ts";

/** The old side's call: the same scenario and inputs on the old version; procedures found by name (it links older procedural agents). */
function oldCall(call: PlannedCall, versionId: string): PlannedCall {
  const procedural = Object.fromEntries(
    Object.entries(call.procedural).map(([key, target]) => [key, { ...target, matchBy: "name" as const }]),
  );
  return { ...call, versionId, procedural };
}

/**
 * The pairs of a comparison: each planned call beside the same call on its agent's old version (the
 * same plan, so the same shard), none where the version did not change (see sequential.ts for the
 * sequential scenarios' pairs); and the notes on agents with no old version.
 */
export function comparisonPlan(
  newCalls: readonly PlannedCall[],
  old: OldVersions,
  options: { rule?: CompareRule | undefined; alpha?: number | undefined } = {},
): PairedPlan & { notes: string[] } {
  const oldVersions = old.versions;
  const notes = baselineNotes(
    newCalls.map((c) => c.agent),
    oldVersions,
  );
  const oldFor = (call: PlannedCall) => {
    const version = oldVersions[call.agent];
    return version && version !== call.versionId ? oldCall(call, version) : undefined;
  };
  return { ...pairedPlan(newCalls, oldFor, { rule: options.rule, alpha: options.alpha ?? DEFAULT_ALPHA }), notes };
}

/** What the run says of agents with no old version to compare with. */
export function baselineNotes(agents: readonly string[], oldVersions: Record<string, string>): string[] {
  const missing = [...new Set(agents)].filter((a) => !oldVersions[a]);
  if (Object.keys(oldVersions).length === 0) return ["first deploy: no old versions to compare with, plain smoke"];
  if (missing.length === 0) return [];
  return [`no old version of ${missing.join(", ")} (new agent${missing.length > 1 ? "s" : ""}): plain smoke`];
}

/** The options of a comparison, whether its calls were just placed or read from shard reports. */
export type CompareOptions = {
  old: OldVersions;
  failOn: FailOn;
  alpha?: number | undefined;
  requireBaseline?: boolean | undefined;
  allowInconclusive?: boolean | undefined;
  /** The scenarios compared sequentially (agent, scenario → their rule); the others by the fixed rule. */
  sequential?: ReadonlyMap<string, PairedRule>;
  stack?: string;
  interrupted: boolean;
  /** The calls are one shard's: each side's thresholds are judged only where already missed. */
  partial?: boolean;
  /** The shard the calls are, so `report merge` can join the shards' comparisons. */
  shard?: { index: number; count: number } | undefined;
};

/** Both sides' results compared per scenario, and the report value of the comparison. */
export function compareSides(
  sides: { newResults: ScenarioResult[]; oldResults: ScenarioResult[]; notes: string[] },
  options: CompareOptions,
): { scenarios: ComparedScenario[]; report: Report } {
  return compareCalls(
    {
      newCalls: sides.newResults.map((r) => callResult(r, "new")),
      oldCalls: sides.oldResults.map((r) => callResult(r, "old")),
      newGates: gatesOf(sides.newResults),
      oldGates: gatesOf(sides.oldResults),
      notes: sides.notes,
    },
    options,
  );
}

/** Both sides' calls (each side's scenarios judged by its gates) compared per scenario, and the report value. */
export function compareCalls(
  sides: {
    newCalls: CallResult[];
    oldCalls: CallResult[];
    newGates: ReadonlyMap<string, ScenarioGate>;
    oldGates: ReadonlyMap<string, ScenarioGate>;
    notes: string[];
  },
  options: CompareOptions,
): { scenarios: ComparedScenario[]; report: Report } {
  const oldVersions = options.old.versions;
  const notes: string[] = [];
  const scenarios = compared(sides, oldVersions, {
    alpha: options.alpha ?? DEFAULT_ALPHA,
    partial: options.partial ?? false,
    sequential: options.sequential ?? new Map(),
    notes,
  });
  const report = compareReport(scenarios, {
    ...(options.stack ? { stack: options.stack } : {}),
    ...(options.shard ? { shard: options.shard } : {}),
    gates: sides.newGates,
    oldVersions,
    notes: [...sides.notes, ...notes],
    failOn: options.failOn,
    requireBaseline: options.requireBaseline ?? false,
    allowInconclusive: options.allowInconclusive ?? false,
    interrupted: options.interrupted,
  });
  return { scenarios, report };
}

const key = (agent: string, scenario: string) => `${agent}\u0000${scenario}`;

/** Groups both sides by scenario (planned order) and compares those that have an old side. */
function compared(
  sides: {
    newCalls: CallResult[];
    oldCalls: CallResult[];
    newGates: ReadonlyMap<string, ScenarioGate>;
    oldGates: ReadonlyMap<string, ScenarioGate>;
  },
  oldVersions: Record<string, string>,
  {
    alpha,
    partial,
    sequential,
    notes,
  }: { alpha: number; partial: boolean; sequential: ReadonlyMap<string, PairedRule>; notes: string[] },
): ComparedScenario[] {
  // Each side's verdicts under the scenarios' thresholds, as plain smoke judges them.
  const summaries = (calls: CallResult[], gates: ReadonlyMap<string, ScenarioGate>) =>
    new Map(summarizeScenarios(calls, gates, partial).map((s) => [key(s.agent, s.scenario), s]));
  const verdictsOf = (summaries: Map<string, { verdict: Verdict }>) =>
    new Map([...summaries].map(([k, s]) => [k, s.verdict]));
  const newSummaries = summaries(sides.newCalls, sides.newGates);
  const newVerdicts = verdictsOf(newSummaries);
  const oldVerdicts = verdictsOf(summaries(sides.oldCalls, sides.oldGates));
  const groups = new Map<string, ComparedScenario>();
  for (const c of sides.newCalls) {
    const k = key(c.agent, c.scenario);
    const group = groups.get(k) ?? {
      agent: c.agent,
      scenario: c.scenario,
      newCalls: [],
      sameVersion: false,
      newVerdict: newVerdicts.get(k) ?? "error",
    };
    group.newCalls.push(c);
    groups.set(k, group);
  }
  for (const c of sides.oldCalls) {
    const group = groups.get(key(c.agent, c.scenario));
    if (group) group.oldCalls = [...(group.oldCalls ?? []), c];
  }
  const withOld = [...groups.entries()].filter(([, group]) => oldVersions[group.agent]);
  for (const [, group] of withOld) {
    if (oldVersions[group.agent] === group.newCalls[0]?.version_id) {
      group.sameVersion = true;
      group.oldCalls = group.newCalls;
    }
  }
  // An old side that could not run (its calls errors, or never placed) is no baseline: no
  // comparison, the scenario's verdict is its new side's, and the report says why.
  const compare = withOld.filter(([k, group]) => {
    if (group.sameVersion) return true;
    const oldVerdict = oldVerdicts.get(k) ?? "not_run";
    if (oldVerdict !== "error" && oldVerdict !== "not_run") return true;
    const oldCalls = group.oldCalls ?? [];
    const version = JSON.stringify(oldVersions[group.agent]);
    if (oldCalls.some(unknownVersion)) {
      notes.push(
        `no comparison for ${group.agent}/${group.scenario}: the baseline was not found, the service does not know the old version ${version} (404); the verdict is the new side's`,
      );
      return false;
    }
    const why = oldCalls.map((r) => r.error).find((e) => e);
    const reason = why ? `: ${why.length > 200 ? `${why.slice(0, 199)}…` : why}` : "";
    notes.push(
      `no comparison for ${group.agent}/${group.scenario}: the old version ${version} could not run (${oldVerdict === "error" ? "its call could not complete" : "its call was not placed"}${reason}), so it is no baseline; the verdict is the new side's`,
    );
    return false;
  });
  // The evidence of the scenarios that ran on two versions by the fixed rule, Holm-adjusted across them.
  const tested = compare.filter(([k, group]) => !group.sameVersion && !sequential.has(k));
  const evidence = regressionEvidence(
    tested.map(([, g]) => ({ old: g.oldCalls ?? [], new: g.newCalls })),
    alpha,
  );
  const evidenceOf = new Map(tested.map(([k], i) => [k, evidence[i]]));
  for (const [k, group] of compare) {
    const oldVerdict = group.sameVersion ? group.newVerdict : oldVerdicts.get(k);
    const [oldCalls, newCalls] = [group.oldCalls ?? [], group.newCalls];
    const rule = group.sameVersion ? undefined : sequential.get(k);
    const evidence = rule ? sequentialEvidence(oldCalls, newCalls, rule) : undefined;
    // Without a threshold of its own, the sequential comparison is the new side's verdict.
    const minPass = newSummaries.get(k)?.min_pass ?? -1;
    const newVerdict = comparedVerdict(
      group.newVerdict,
      minPass,
      evidence && { outcome: evidence.outcome, sequential: evidence.test },
    );
    group.newVerdict = newVerdict;
    group.comparison = compareScenario(
      oldCalls,
      newCalls,
      { new: newVerdict, ...(oldVerdict ? { old: oldVerdict } : {}) },
      evidenceOf.get(k),
      evidence,
    );
  }
  return [...groups.values()];
}
