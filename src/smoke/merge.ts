// `agent-iac report merge`: shard reports → one report with the verdicts an unsharded run gives.
// Verdicts are rebuilt from the calls (never copied from a shard, which saw only its part); the
// gates come from the shards' scenario entries, which every shard writes for every planned scenario.
import { InvalidInputError } from "../errors/index.ts";
import { type CallResult, callResultSchema, endedOnItsOwn, type Report } from "../report/index.ts";
import { gateDecision, scenarioKey } from "./gates.ts";
import { reportFromCalls, type ScenarioGate } from "./reports.ts";

export type ShardReport = { file: string; report: Report };

export function mergeReports(inputs: readonly ShardReport[]): Report {
  if (inputs.length === 0) throw new InvalidInputError("report merge needs at least one report");
  const notes: string[] = [];
  const counts = new Set(inputs.map((i) => i.report.shard?.count ?? 1));
  if (counts.size > 1)
    throw new InvalidInputError(`the reports come from different shardings (${[...counts].join(", ")} shards)`);
  const seenShards = new Map<number, string>();
  for (const { file, report } of inputs) {
    if (report.kind !== "smoke")
      throw new InvalidInputError(`${file}: a ${report.kind} report; only smoke reports are merged`);
    const index = report.shard?.index;
    if (index === undefined) continue;
    const other = seenShards.get(index);
    if (other) throw new InvalidInputError(`${file} and ${other} are both shard ${index}/${report.shard?.count}`);
    seenShards.set(index, file);
  }
  const count = [...counts][0] ?? 1;
  const missingShards = Array.from({ length: count }, (_, i) => i + 1).filter((i) => !seenShards.has(i));
  if (count > 1 && missingShards.length > 0) {
    notes.push(
      `no report of shard(s) ${missingShards.map((i) => `${i}/${count}`).join(", ")}: their calls count as failed iterations`,
    );
  }

  const gates = new Map<string, ScenarioGate>();
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
    }
  }

  const calls = new Map<string, { file: string; call: CallResult }>();
  for (const { file, report } of inputs) {
    for (const call of report.results) {
      const key = `${scenarioKey(call.agent, call.scenario, call.version_id)}\u0000${call.iteration}\u0000${call.side}`;
      const other = calls.get(key);
      if (other) {
        throw new InvalidInputError(
          `${call.agent}/${call.scenario}#${call.iteration} is in both ${other.file} and ${file}`,
        );
      }
      calls.set(key, { file, call });
    }
  }
  // A missing shard's calls are failed iterations (never "not run", never "not needed"): the
  // planned iterations no report holds.
  const lost: CallResult[] = [];
  if (count > 1 && missingShards.length > 0) {
    const why = `no report of shard(s) ${missingShards.map((i) => `${i}/${count}`).join(", ")}: counted as a failed iteration`;
    for (const gate of gates.values()) {
      for (let iteration = 1; iteration <= gate.plannedIterations; iteration++) {
        if (calls.has(`${scenarioKey(gate.agent, gate.scenario, gate.versionId)}\u0000${iteration}\u0000new`)) continue;
        lost.push(
          callResultSchema.parse({
            agent: gate.agent,
            scenario: gate.scenario,
            iteration,
            status: "failed",
            version_id: gate.versionId,
            error: why,
            assertions: [{ description: "its shard's report is merged", passed: false, detail: why }],
            timings: { duration_ms: 0 },
            outcome: { kind: "failed", code: "shard_missing" },
          }),
        );
      }
    }
  }
  // Planned order: by scenario as the gates list them, then by iteration.
  const order = [...gates.keys()];
  const sorted = [...[...calls.values()].map(({ call }) => call), ...lost].sort((a, b) => {
    const ka = order.indexOf(scenarioKey(a.agent, a.scenario, a.version_id));
    const kb = order.indexOf(scenarioKey(b.agent, b.scenario, b.version_id));
    return ka - kb || a.iteration - b.iteration;
  });
  for (const gate of gates.values()) {
    const mine = sorted.filter(
      (c) => c.agent === gate.agent && c.scenario === gate.scenario && c.version_id === gate.versionId,
    );
    // Only calls that ended on their own settle a verdict; an unplaced or cut-short one is missing.
    const ended = mine.filter((c) => endedOnItsOwn(c.outcome.kind));
    const have = ended.length;
    const passes = ended.filter((c) => c.outcome.kind === "passed").length;
    // Calls a settled verdict did not need are not missing.
    if (have < gate.plannedIterations && gateDecision(gate, passes, have - passes) === "continue") {
      notes.push(
        `${gate.agent}/${gate.scenario}: ${have} of ${gate.plannedIterations} planned iterations in the reports`,
      );
    }
  }
  const stack = inputs.find((i) => i.report.stack)?.report.stack;
  return reportFromCalls(sorted, gates, { kind: "merged", ...(stack ? { stack } : {}), notes });
}
