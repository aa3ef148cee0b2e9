// `report merge` of a sharded comparison (`smoke --compare OLD --shard I/N`): the shards' calls on
// both sides joined, then compared again as one run compares them — the fixed rule's Holm correction
// across every scenario of the run (a shard saw only its own), each sequential scenario's pairs
// (whole in one shard) under the rule its shard recorded — so the merged verdicts are an unsharded
// run's. Shards that disagree on how the comparison is judged are refused.
import { InvalidInputError } from "../errors/index.ts";
import type { Report } from "../results/index.ts";
import { type MergedCalls, type ScenarioGate, type ShardReport, scenarioKey } from "../smoke/index.ts";
import type { PairedRule } from "../stats/index.ts";
import type { FailOn } from "./reports.ts";
import { baselineNotes, compareCalls } from "./run.ts";
import { DEFAULT_ALPHA } from "./significance.ts";

/** The one value every shard holds; shards that hold different ones are refused, naming `what`. */
function agreed<T>(inputs: readonly ShardReport[], what: string, value: (report: Report) => T): T {
  const seen = new Map(inputs.map(({ file, report }) => [JSON.stringify(value(report)), file]));
  if (seen.size > 1) {
    throw new InvalidInputError(
      `the comparison reports disagree on ${what} (${[...seen].map(([v, file]) => `${file}: ${v}`).join("; ")}): were the shards run with different flags?`,
    );
  }
  return value((inputs[0] as ShardReport).report);
}

export function mergeComparisons(inputs: readonly ShardReport[], merged: MergedCalls): Report {
  const key = (agent: string, scenario: string) => `${agent}\u0000${scenario}`;
  const oldVersions: Record<string, string> = {};
  const sequential = new Map<string, PairedRule>();
  const alphas = new Set<number>();
  for (const { file, report } of inputs) {
    for (const [agent, version] of Object.entries(report.old_versions)) {
      if (oldVersions[agent] && oldVersions[agent] !== version) {
        throw new InvalidInputError(
          `${file}: compares ${agent} with ${version}, another report with ${oldVersions[agent]}: the shards were run against different old versions`,
        );
      }
      oldVersions[agent] = version;
    }
    for (const s of report.scenarios) {
      const rule = s.comparison?.sequential;
      if (rule)
        sequential.set(key(s.agent, s.scenario), { alpha: rule.alpha, margin: rule.margin, maxPairs: rule.max_pairs });
      const alpha = s.comparison?.evidence?.alpha ?? rule?.alpha;
      if (alpha !== undefined) alphas.add(alpha);
    }
  }
  if (alphas.size > 1) {
    throw new InvalidInputError(`the comparison reports were judged at different α (${[...alphas].join(", ")})`);
  }
  // The old side is judged by its scenario's threshold, on its own version.
  const oldGates = new Map<string, ScenarioGate>();
  for (const gate of merged.gates.values()) {
    const versionId = oldVersions[gate.agent];
    if (versionId) oldGates.set(scenarioKey(gate.agent, gate.scenario, versionId), { ...gate, versionId });
  }
  const { report } = compareCalls(
    {
      newCalls: merged.newCalls,
      oldCalls: merged.oldCalls,
      newGates: merged.gates,
      oldGates,
      // The notes are said again of the whole run (a shard's notes speak of its part).
      notes: [
        ...baselineNotes(
          [...merged.gates.values()].map((g) => g.agent),
          oldVersions,
        ),
        ...merged.notes,
      ],
    },
    {
      old: { versions: oldVersions, source: "report" },
      failOn: agreed(inputs, "--fail-on", (r) => r.fail_on ?? "failure") as FailOn,
      alpha: [...alphas][0] ?? DEFAULT_ALPHA,
      requireBaseline: agreed(inputs, "--require-baseline", (r) => r.require_baseline),
      allowInconclusive: agreed(inputs, "--allow-inconclusive", (r) => r.allow_inconclusive),
      sequential,
      ...(merged.stack ? { stack: merged.stack } : {}),
      // As a smoke merge: a stopped shard's calls say it (interrupted, not run), and the verdicts follow.
      interrupted: false,
    },
  );
  return report;
}
