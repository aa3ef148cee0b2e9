// `smoke --compare`: every planned call is placed on the new version and, with the same inputs, on
// the old one (both pinned); the same scenario's two sides are then compared. An agent without an
// old version (a first deploy, a new agent) runs as plain smoke and the run says so; an agent whose
// version did not change is called once and serves both sides.

import { type ClientOptions, createClient } from "../api/index.ts";
import type { AgentDefinition } from "../definitions/index.ts";
import type { Judge } from "../judge/index.ts";
import type { HeldAgent } from "../provider/index.ts";
import type { Report } from "../report/index.ts";
import {
  callResult,
  type PlannedCall,
  planCalls,
  runCalls,
  type ScenarioResult,
  scenarioSummaries,
} from "../smoke/index.ts";
import { compareScenario } from "./compare.ts";
import type { OldVersions } from "./old-versions.ts";
import { type ComparedScenario, compareReport, type FailOn } from "./reports.ts";
import { DEFAULT_ALPHA, judgeScenarios } from "./significance.ts";

type Output = { write(text: string): unknown; isTTY?: boolean; columns?: number };

export type CompareOptions = {
  definitions: AgentDefinition[];
  outputs: Record<string, HeldAgent> | undefined;
  selection: Parameters<typeof planCalls>[2];
  connection: { baseUrl: string; apiKey: string; serviceVersion?: string; onRetry?: ClientOptions["onRetry"] };
  old: OldVersions;
  failOn: FailOn;
  /** The family-wise error rate of the run's regression tests (default 0.05). */
  alpha?: number;
  concurrency: number;
  stack?: string;
  out: Output;
  signal?: AbortSignal;
  /** Judges `expect.judge` rubrics on both sides (the same cache: an unchanged transcript is not asked twice). */
  judge?: Judge | undefined;
};

/** The old side's call: the same scenario and inputs on the old version; procedures found by name (it links older procedural agents). */
function oldCall(call: PlannedCall, versionId: string): PlannedCall {
  const procedural = Object.fromEntries(
    Object.entries(call.procedural).map(([key, target]) => [key, { ...target, matchBy: "name" as const }]),
  );
  return { ...call, versionId, procedural };
}

export async function runCompare(
  options: CompareOptions,
): Promise<{ scenarios: ComparedScenario[]; notes: string[]; report: Report }> {
  const newCalls = planCalls(options.definitions, options.outputs, options.selection);
  const oldVersions = options.old.versions;
  const notes: string[] = [];
  const agents = [...new Set(newCalls.map((c) => c.agent))];
  const missing = agents.filter((a) => !oldVersions[a]);
  if (Object.keys(oldVersions).length === 0) {
    notes.push("first deploy: no old versions to compare with, plain smoke");
  } else if (missing.length > 0) {
    notes.push(`no old version of ${missing.join(", ")} (new agent${missing.length > 1 ? "s" : ""}): plain smoke`);
  }
  for (const note of notes) options.out.write(`note: ${note}\n`);
  const oldCalls = newCalls.flatMap((call) => {
    const old = oldVersions[call.agent];
    return old && old !== call.versionId ? [oldCall(call, old)] : [];
  });

  const client = createClient(options.connection);
  let newResults: ScenarioResult[] = [];
  let oldResults: ScenarioResult[] = [];
  try {
    const run = (calls: PlannedCall[]) =>
      runCalls(client, calls, {
        concurrency: options.concurrency,
        out: options.out,
        // The test of old against new needs every planned call of fixed repeats on both sides.
        earlyDecisions: false,
        judge: options.judge,
        ...(options.signal ? { signal: options.signal } : {}),
      });
    if (oldCalls.length > 0) {
      options.out.write(`old versions (before the deploy), for comparison:\n`);
      oldResults = await run(oldCalls);
      options.out.write(`new versions:\n`);
    }
    newResults = await run(newCalls);
  } finally {
    await client.close();
  }

  const scenarios = compared(newResults, oldResults, oldVersions, options.alpha ?? DEFAULT_ALPHA);
  const report = compareReport(scenarios, {
    ...(options.stack ? { stack: options.stack } : {}),
    oldVersions,
    notes,
    failOn: options.failOn,
    interrupted: options.signal?.aborted ?? false,
  });
  return { scenarios, notes, report };
}

/** Groups both sides by scenario (planned order) and compares those that have an old side. */
function compared(
  newResults: ScenarioResult[],
  oldResults: ScenarioResult[],
  oldVersions: Record<string, string>,
  alpha: number,
): ComparedScenario[] {
  const key = (agent: string, scenario: string) => `${agent}\u0000${scenario}`;
  // Each side's verdicts under the scenarios' thresholds, as plain smoke judges them.
  const verdicts = (results: ScenarioResult[]) =>
    new Map(scenarioSummaries(results).map((s) => [key(s.agent, s.scenario), s.verdict]));
  const newVerdicts = verdicts(newResults);
  const oldVerdicts = verdicts(oldResults);
  const groups = new Map<string, ComparedScenario>();
  for (const r of newResults) {
    const k = key(r.agent, r.scenario);
    const group = groups.get(k) ?? {
      agent: r.agent,
      scenario: r.scenario,
      newResults: [],
      sameVersion: false,
      newVerdict: newVerdicts.get(k) ?? "error",
    };
    group.newResults.push(r);
    groups.set(k, group);
  }
  for (const r of oldResults) {
    const group = groups.get(key(r.agent, r.scenario));
    if (group) group.oldResults = [...(group.oldResults ?? []), r];
  }
  const sideOf = (list: ScenarioResult[], side: "new" | "old") => list.map((r) => callResult(r, side));
  const withOld = [...groups.entries()].filter(([, group]) => oldVersions[group.agent]);
  for (const [, group] of withOld) {
    if (oldVersions[group.agent] === group.newResults[0]?.versionId) {
      group.sameVersion = true;
      group.oldResults = group.newResults;
    }
  }
  // The evidence of the scenarios that ran on two versions, Holm-adjusted across them.
  const tested = withOld.filter(([, group]) => !group.sameVersion);
  const evidence = judgeScenarios(
    tested.map(([, g]) => ({ old: sideOf(g.oldResults ?? [], "old"), new: sideOf(g.newResults, "new") })),
    alpha,
  );
  const evidenceOf = new Map(tested.map(([k], i) => [k, evidence[i]]));
  for (const [k, group] of withOld) {
    const oldVerdict = group.sameVersion ? group.newVerdict : oldVerdicts.get(k);
    group.comparison = compareScenario(
      sideOf(group.oldResults ?? [], "old"),
      sideOf(group.newResults, "new"),
      { new: group.newVerdict, ...(oldVerdict ? { old: oldVerdict } : {}) },
      evidenceOf.get(k),
    );
  }
  return [...groups.values()];
}
