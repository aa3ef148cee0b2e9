// `smoke --compare`: every planned call is placed on the new version and, with the same inputs, on
// the old one (both pinned); the same scenario's two sides are then compared. An agent without an
// old version (a first deploy, a new agent) runs as plain smoke and the run says so; an agent whose
// version did not change is called once and serves both sides.
import { type ClientOptions, createClient } from "../api/index.ts";
import type { AgentDefinition } from "../definitions/index.ts";
import type { HeldAgent } from "../provider/index.ts";
import { type Report, type ReportFiles, writeReports } from "../report/index.ts";
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
import {
  type ComparedScenario,
  compareJunit,
  compareReport,
  comparisonText,
  type FailOn,
  failsRun,
  newVerdictPassed,
} from "./reports.ts";

type Output = { write(text: string): unknown; isTTY?: boolean; columns?: number };

export type CompareOptions = {
  definitions: AgentDefinition[];
  outputs: Record<string, HeldAgent> | undefined;
  selection: Parameters<typeof planCalls>[2];
  connection: { baseUrl: string; apiKey: string; serviceVersion?: string; onRetry?: ClientOptions["onRetry"] };
  old: OldVersions;
  failOn: FailOn;
  concurrency: number;
  stack?: string;
  /** The report files (JSON, HTML; the JUnit names regressions as failures). */
  files?: ReportFiles;
  out: Output;
  signal?: AbortSignal;
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
): Promise<{ scenarios: ComparedScenario[]; exitCode: number; notes: string[]; report: Report }> {
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

  const scenarios = compared(newResults, oldResults, oldVersions);
  const report = compareReport(scenarios, {
    ...(options.stack ? { stack: options.stack } : {}),
    oldVersions,
    notes,
  });
  await writeReports(report, options.files ?? {}, { junit: () => compareJunit(scenarios, options.failOn) });
  printComparison(options.out, scenarios, options.failOn);
  const exitCode = newResults.some((r) => r.status === "error")
    ? 3
    : scenarios.some((s) => failsRun(s, options.failOn))
      ? 1
      : 0;
  return { scenarios, exitCode, notes, report };
}

/** Groups both sides by scenario (planned order) and compares those that have an old side. */
function compared(
  newResults: ScenarioResult[],
  oldResults: ScenarioResult[],
  oldVersions: Record<string, string>,
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
  for (const [k, group] of groups) {
    const old = oldVersions[group.agent];
    if (!old) continue;
    if (old === group.newResults[0]?.versionId) {
      group.sameVersion = true;
      group.oldResults = group.newResults;
    }
    const sideOf = (list: ScenarioResult[], side: "new" | "old") => list.map((r) => callResult(r, side));
    const oldVerdict = group.sameVersion ? group.newVerdict : oldVerdicts.get(k);
    group.comparison = compareScenario(sideOf(group.oldResults ?? [], "old"), sideOf(group.newResults, "new"), {
      new: group.newVerdict,
      ...(oldVerdict ? { old: oldVerdict } : {}),
    });
  }
  return [...groups.values()];
}

const MARK = { regression: "✗", fixed: "✓", still_failing: "~", unchanged: "=" } as const;

function printComparison(out: Output, scenarios: ComparedScenario[], failOn: FailOn) {
  const lines = ["", "comparison with the old versions:"];
  const count = { regression: 0, fixed: 0, still_failing: 0, unchanged: 0 };
  for (const s of scenarios) {
    const c = s.comparison;
    if (!c) {
      lines.push(
        `  · ${s.agent}/${s.scenario}: no old version, plain smoke (${newVerdictPassed(s) ? "passed" : "failed"})`,
      );
      continue;
    }
    count[c.outcome]++;
    const versions = s.sameVersion ? `same version ${c.new_version_id}` : `${c.old_version_id} → ${c.new_version_id}`;
    const flipped = c.expectations.filter((e) => e.outcome === "regression" || e.outcome === "fixed");
    const what = flipped.map((e) => `${e.description} ${e.outcome === "regression" ? "now fails" : "now passes"}`);
    const policy =
      c.outcome === "still_failing" && failOn === "regression" ? " (does not fail the run: --fail-on regression)" : "";
    // An old side that could not be called is no baseline: say so next to the outcome.
    const oldError = s.sameVersion ? undefined : s.oldResults?.find((r) => r.status === "error")?.error;
    const caveat = oldError ? ` (the old version's call could not complete: ${oldError})` : "";
    lines.push(
      `  ${MARK[c.outcome]} ${c.outcome.replace("_", " ")} ${s.agent}/${s.scenario} (${versions})${what.length ? `: ${what.join("; ")}` : ""}${policy}${caveat}`,
    );
    if (c.outcome === "regression")
      lines.push(
        ...comparisonText(s)
          .slice(1)
          .map((l) => (l ? `      ${l}` : "")),
      );
  }
  lines.push(
    `${count.regression} regression(s), ${count.fixed} fixed, ${count.still_failing} still failing, ${count.unchanged} unchanged`,
  );
  // The last line, as in plain smoke: the new versions' scenarios (a flaky one passed).
  const verdicts = scenarios.map((s) => s.newVerdict);
  const flaky = verdicts.filter((v) => v === "flaky").length;
  const passed = verdicts.filter((v) => v === "passed" || v === "flaky").length;
  const failed = verdicts.filter((v) => v === "failed" || v === "error").length;
  lines.push(`${passed} passed, ${failed} failed${flaky > 0 ? `, ${flaky} flaky` : ""}`);
  out.write(`${lines.join("\n")}\n`);
}
