// `agent-iac report merge`: shard reports → one report with the verdicts an unsharded run gives.
// Verdicts are rebuilt from the calls (never copied from a shard, which saw only its part); the
// gates come from the shards' scenario entries, which every shard writes for every planned scenario.
import { InvalidInputError } from "../errors/index.ts";
import { type CallResult, callResultSchema, countScenarios, endedOnItsOwn, type Report } from "../results/index.ts";
import { gateDecision, scenarioKey, summarizeScenarios } from "./gates.ts";
import { OUTCOME_CODES } from "./outcome.ts";
import { reportFromCalls, type ScenarioGate } from "./reports.ts";

export type ShardReport = { file: string; report: Report };

/** The shards' calls joined: the new side's in planned order (a missing shard's as failed iterations), the old side's apart. */
export type MergedCalls = {
  kind: "smoke" | "compare";
  newCalls: CallResult[];
  oldCalls: CallResult[];
  /** Each planned scenario's gate (of its new side). */
  gates: Map<string, ScenarioGate>;
  notes: string[];
  stack?: string;
};

export function mergeReports(inputs: readonly ShardReport[]): Report {
  return mergedSmokeReport(mergeShardCalls(inputs));
}

/** The merged report of smoke shards (a comparison's shards are compared again, in src/compare). */
export function mergedSmokeReport(merged: MergedCalls): Report {
  if (merged.kind !== "smoke") throw new InvalidInputError("comparison reports are merged by the comparison");
  const { newCalls, gates, stack, notes } = merged;
  return reportFromCalls(newCalls, gates, { kind: "merged", ...(stack ? { stack } : {}), notes });
}

/** Every call of the shards' reports, each once, with the gates that judge them and what is missing. */
export function mergeShardCalls(inputs: readonly ShardReport[]): MergedCalls {
  if (inputs.length === 0) throw new InvalidInputError("report merge needs at least one report");
  const { kind, count, missing } = checkShards(inputs);
  for (const input of inputs) checkStated(input);
  const notes: string[] = [];
  const lostWhy =
    count > 1 && missing.length > 0
      ? `no report of shard(s) ${missing.map((i) => `${i}/${count}`).join(", ")}`
      : undefined;
  if (lostWhy) notes.push(`${lostWhy}: their calls count as failed iterations`);
  const { gates, unlisted } = mergedGates(inputs);
  const calls = [...mergedCalls(inputs).values()];
  const newCalls = calls.filter((c) => c.side === "new");
  const lost = lostWhy
    ? lostCalls(gates, new Map(newCalls.map((c) => [callKey(c), c])), `${lostWhy}: counted as a failed iteration`)
    : [];
  // Planned order: by scenario as the gates list them, then by iteration.
  const order = [...gates.keys()];
  const sorted = [...newCalls, ...lost].sort((a, b) => {
    const ka = order.indexOf(scenarioKey(a.agent, a.scenario, a.version_id));
    const kb = order.indexOf(scenarioKey(b.agent, b.scenario, b.version_id));
    return ka - kb || a.iteration - b.iteration;
  });
  notes.push(...missingIterationNotes(gates, sorted, unlisted));
  const stack = inputs.find((i) => i.report.stack)?.report.stack;
  const oldCalls = calls.filter((c) => c.side === "old");
  return { kind, newCalls: sorted, oldCalls, gates, notes, ...(stack ? { stack } : {}) };
}

/** One sharding, reports of one kind (smoke or comparison), each shard once: the shard count and the shards no report holds. */
function checkShards(inputs: readonly ShardReport[]): {
  kind: MergedCalls["kind"];
  count: number;
  missing: number[];
} {
  const counts = new Set(inputs.map((i) => i.report.shard?.count ?? 1));
  if (counts.size > 1)
    throw new InvalidInputError(`the reports come from different shardings (${[...counts].join(", ")} shards)`);
  const kind = inputs[0]?.report.kind === "compare" ? "compare" : "smoke";
  const seenShards = new Map<number, string>();
  for (const { file, report } of inputs) {
    if (report.kind !== kind) {
      throw new InvalidInputError(
        `${file}: a ${report.kind} report; only smoke reports, or only comparison reports, are merged (the first is a ${kind} report)`,
      );
    }
    const index = report.shard?.index;
    if (index === undefined) continue;
    const other = seenShards.get(index);
    if (other) throw new InvalidInputError(`${file} and ${other} are both shard ${index}/${report.shard?.count}`);
    seenShards.set(index, file);
  }
  const count = [...counts][0] ?? 1;
  const missing = Array.from({ length: count }, (_, i) => i + 1).filter((i) => !seenShards.has(i));
  return { kind, count, missing };
}

/**
 * Each planned scenario's gate, from the shards' scenario entries (which must agree), and per
 * scenario the reports that do not list it (every shard of one run lists every planned scenario).
 */
function mergedGates(inputs: readonly ShardReport[]): {
  gates: Map<string, ScenarioGate>;
  unlisted: Map<string, string[]>;
} {
  const gates = new Map<string, ScenarioGate>();
  const listedBy = new Map<string, Set<string>>();
  for (const { file, report } of inputs) {
    for (const s of report.scenarios) {
      const key = scenarioKey(s.agent, s.scenario, s.version_id);
      const gate: ScenarioGate = {
        agent: s.agent,
        scenario: s.scenario,
        versionId: s.version_id,
        plannedIterations: s.planned_iterations ?? s.iterations,
        minPass: s.min_pass,
        bounds: s.latency?.bounds ?? {},
        ...(s.sequential
          ? {
              sequential: {
                passRate: s.sequential.pass_rate,
                confidence: s.sequential.confidence,
                margin: s.sequential.margin,
                maxIterations: s.sequential.max_iterations,
              },
            }
          : {}),
        ...(s.pass_k_required ? { passK: { k: s.pass_k_required.k, min: s.pass_k_required.min } } : {}),
      };
      const known = gates.get(key);
      if (known && (known.minPass !== gate.minPass || known.plannedIterations !== gate.plannedIterations)) {
        throw new InvalidInputError(
          `${file}: ${s.agent}/${s.scenario} plans ${gate.plannedIterations} iterations with min_pass ${gate.minPass}, another report ${known.plannedIterations} with ${known.minPass}: were the shards run on different agent files?`,
        );
      }
      if (!known) gates.set(key, gate);
      listedBy.set(key, (listedBy.get(key) ?? new Set()).add(file));
    }
  }
  const unlisted = new Map<string, string[]>();
  for (const key of gates.keys()) {
    const missing = inputs.map((i) => i.file).filter((file) => !listedBy.get(key)?.has(file));
    if (missing.length > 0) unlisted.set(key, missing);
  }
  return { gates, unlisted };
}

/** The counts a shard states that its own scenarios and calls must give (those every report version counts alike). */
const STATED_COUNTS = [
  "passed",
  "failed",
  "errors",
  "not_run",
  "calls_passed",
  "calls_failed",
  "calls_errors",
] as const;

/**
 * A shard is evidence only as its own calls say: no call beyond the iterations its plan states, each
 * scenario's verdict the one its calls give under its stated threshold (a smoke shard; a comparison's
 * are compared again), and its summary the count of its scenarios and calls. A shard edited in one
 * place (a verdict, the summary, 20,000 calls of a scenario planned once) is refused, not merged.
 */
function checkStated({ file, report }: ShardReport): void {
  const { gates } = mergedGates([{ file, report }]);
  // A comparison's old side is planned as its new side is (same scenario, another version).
  const plannedOf = new Map([...gates.values()].map((g) => [`${g.agent}\u0000${g.scenario}`, g.plannedIterations]));
  for (const call of report.results) {
    const planned = plannedOf.get(`${call.agent}\u0000${call.scenario}`) ?? 0;
    if (call.iteration > planned) {
      throw new InvalidInputError(
        `${file}: ${call.agent}/${call.scenario}#${call.iteration} is beyond the ${planned} iteration(s) the report plans for it: not what a run writes`,
      );
    }
  }
  if (report.kind === "smoke") {
    const partial = report.shard !== null;
    const derived = summarizeScenarios(
      report.results.filter((c) => c.side !== "old"),
      gates,
      partial,
    );
    const stated = new Map(report.scenarios.map((s) => [scenarioKey(s.agent, s.scenario, s.version_id), s.verdict]));
    for (const s of derived) {
      const said = stated.get(scenarioKey(s.agent, s.scenario, s.version_id));
      if (said !== s.verdict) {
        throw new InvalidInputError(
          `${file}: ${s.agent}/${s.scenario} is stated "${said}" but its own calls give "${s.verdict}": the report was edited, not written by a run`,
        );
      }
    }
  }
  const counted = countScenarios(report);
  for (const name of STATED_COUNTS) {
    if (report.summary[name] !== counted[name]) {
      throw new InvalidInputError(
        `${file}: its summary states ${name} ${report.summary[name]}, its own scenarios and calls give ${counted[name]}: the report was edited, not written by a run`,
      );
    }
  }
}

const callKey = (c: Pick<CallResult, "agent" | "scenario" | "version_id" | "iteration" | "side">) =>
  `${scenarioKey(c.agent, c.scenario, c.version_id)}\u0000${c.iteration}\u0000${c.side}`;

/** Every call of every report, by scenario, iteration and side; a call in two reports is refused. */
function mergedCalls(inputs: readonly ShardReport[]): Map<string, CallResult> {
  const calls = new Map<string, CallResult>();
  const from = new Map<string, string>();
  for (const { file, report } of inputs) {
    for (const call of report.results) {
      const key = callKey(call);
      const other = from.get(key);
      if (other) {
        throw new InvalidInputError(`${call.agent}/${call.scenario}#${call.iteration} is in both ${other} and ${file}`);
      }
      calls.set(key, call);
      from.set(key, file);
    }
  }
  return calls;
}

/**
 * A missing shard's calls are failed iterations (never "not run", never "not needed"): the
 * planned iterations no report holds.
 */
function lostCalls(gates: Map<string, ScenarioGate>, calls: Map<string, CallResult>, why: string): CallResult[] {
  const lost: CallResult[] = [];
  for (const gate of gates.values()) {
    for (let iteration = 1; iteration <= gate.plannedIterations; iteration++) {
      const planned = { agent: gate.agent, scenario: gate.scenario, version_id: gate.versionId, iteration };
      if (calls.has(callKey({ ...planned, side: "new" }))) continue;
      lost.push(
        callResultSchema.parse({
          agent: gate.agent,
          scenario: gate.scenario,
          iteration,
          status: "failed",
          version_id: gate.versionId,
          error: why,
          assertions: [
            { kind: "shard", key: "merged", description: "its shard's report is merged", passed: false, detail: why },
          ],
          timings: { duration_ms: 0 },
          outcome: { kind: "failed", code: OUTCOME_CODES.shardMissing },
        }),
      );
    }
  }
  return lost;
}

/**
 * Scenarios whose reports hold fewer ended calls than their verdict needs; for one that some
 * reports do not list, why: the shards come from runs with different scenario lists.
 */
function missingIterationNotes(
  gates: Map<string, ScenarioGate>,
  sorted: readonly CallResult[],
  unlisted: ReadonlyMap<string, string[]>,
): string[] {
  const notes: string[] = [];
  for (const [key, gate] of gates) {
    const mine = sorted.filter(
      (c) => c.agent === gate.agent && c.scenario === gate.scenario && c.version_id === gate.versionId,
    );
    // Only calls that ended on their own settle a verdict; an unplaced or cut-short one is missing.
    const ended = mine.filter((c) => endedOnItsOwn(c.outcome.kind));
    const have = ended.length;
    const passes = ended.filter((c) => c.outcome.kind === "passed").length;
    // Calls a settled verdict did not need are not missing.
    if (have < gate.plannedIterations && gateDecision(gate, passes, have - passes) === "continue") {
      const others = unlisted.get(key);
      const why = others
        ? `; ${others.join(", ")} ${others.length === 1 ? "does" : "do"} not plan it: the reports come from runs with different scenario lists (agent files or --agent/--scenario), so its calls there were never placed${mine.length === 0 ? " and it is not run (exit 3)" : ""}`
        : "";
      notes.push(
        `${gate.agent}/${gate.scenario}: ${have} of ${gate.plannedIterations} planned iterations in the reports${why}`,
      );
    }
  }
  return notes;
}
