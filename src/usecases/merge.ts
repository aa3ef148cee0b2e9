// `report merge`: the JSON reports of a sharded smoke or comparison run joined into the one report
// an unsharded run gives (each scenario's verdict rebuilt from all its calls). A report that is not evidence
// (foreign, newer, inconsistent) is refused before anything is written; a missing shard is said.

import { mergeComparisons } from "../compare/index.ts";
import { InvalidInputError } from "../errors/index.ts";
import { notEvidence, type Report, readReport } from "../results/index.ts";
import { mergedSmokeReport, mergeShardCalls } from "../smoke/index.ts";

export type MergedShards = {
  report: Report;
  /** The shards (`I/N`) of the sharding that no input holds: their calls count as failed iterations. */
  missing: string[];
};

/** The largest shard report a merge reads (a shard of a run's calls is well under it; parsing a larger one costs gigabytes). */
const MAX_SHARD_REPORT_BYTES = 32 * 1024 * 1024;

/** Merges the shard reports `files` (a relative one is the run's project's, `within`). */
export async function mergeShardReports(files: readonly string[], within: string): Promise<MergedShards> {
  const inputs = await Promise.all(
    files.map(async (file) => ({ file, report: await readReport(file, within, MAX_SHARD_REPORT_BYTES) })),
  );
  for (const { file, report } of inputs) {
    const problem = notEvidence(report);
    if (problem) throw new InvalidInputError(`${file}: not evidence a merge can count: ${problem}`);
  }
  const merged = mergeShardCalls(inputs);
  const report = merged.kind === "compare" ? mergeComparisons(inputs, merged) : mergedSmokeReport(merged);
  return { report, missing: missingShards(inputs.map((i) => i.report)) };
}

/** The shards (`I/N`) of a sharding that no report holds. */
function missingShards(reports: readonly Report[]): string[] {
  const count = reports[0]?.shard?.count ?? 1;
  const seen = new Set(reports.map((r) => r.shard?.index));
  return Array.from({ length: count }, (_, i) => i + 1)
    .filter((i) => count > 1 && !seen.has(i))
    .map((i) => `${i}/${count}`);
}
