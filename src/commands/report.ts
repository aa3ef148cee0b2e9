// `agent-iac report merge A.json B.json … [--junit F] [--json F] [--html F]`: shard reports → one report whose
// verdicts are those an unsharded run gives (rebuilt from the calls, thresholds and latency bounds).
import { CliError, InvalidInputError } from "../errors/index.ts";
import { emitReport } from "../report/index.ts";
import { mergeShardReports } from "../usecases/index.ts";
import { parseCommand } from "./args.ts";
import { RUN_REPORT_FLAGS, reportFiles } from "./flags.ts";
import type { CommandIO } from "./lifecycle.ts";

const MAX_INPUTS = 1000;

const SPEC = {
  name: "report",
  synopsis: "merge REPORT.json… [--junit FILE] [--json FILE] [--html FILE]",
  about: `merge: reads the JSON reports of a sharded smoke run (\`smoke --shard I/N --json …\`, one per job)
and writes one report with every call and each scenario's verdict judged on all its iterations, as
an unsharded run would: the threshold (min_pass/pass_rate), flaky, the latency percentiles. The
shards of a comparison (\`smoke --compare OLD --shard I/N\`) are compared again as one run: the
pairs as placed, the fixed rule corrected across all scenarios, each sequential scenario's pairs.
A bare output file name is written under reports/.`,
  flags: RUN_REPORT_FLAGS,
  footer: `exit codes: 0 every scenario passed (flaky ones too), 1 a scenario failed, 2 usage error or not
evidence (an unreadable or foreign report, one larger than 32 MB, one with no scenario or of a
newer version, a call whose verdict does not follow from its expectations, a scenario's verdict or
the summary its own calls do not give, a call beyond the iterations its report plans, two reports
of one shard, a call in two reports, a missing shard: the reports are still written, its calls as
failed iterations), 3 a call could not complete.`,
  positionals: { min: 1, max: MAX_INPUTS + 1, what: "a subcommand (merge)" },
} as const;

export async function run(argv: string[], io: CommandIO): Promise<number> {
  const parsed = parseCommand(SPEC, argv, io.stdout);
  if (!parsed) return 0;
  const [subcommand, ...files] = parsed.positionals;
  if (subcommand !== "merge") throw new CliError(`unknown subcommand "${subcommand}" (subcommands: merge)`);
  if (files.length === 0) throw new CliError("report merge needs the shard reports to merge");
  const { report: merged, missing } = await mergeShardReports(files, io.project.dir);
  for (const note of merged.notes) io.stderr.write(`${note}\n`);
  const code = await emitReport(merged, {
    env: io.env,
    within: io.project.dir,
    files: reportFiles(RUN_REPORT_FLAGS, parsed.values),
    out: io.stdout,
  });
  // The reports are written (a missing shard's calls as failed iterations), but the merge is refused.
  if (missing.length > 0) {
    throw new InvalidInputError(
      `report merge: no report of shard(s) ${missing.join(", ")} among ${files.join(", ")}: a merge with a missing shard is not a result; its calls were counted as failed iterations`,
    );
  }
  return code;
}
