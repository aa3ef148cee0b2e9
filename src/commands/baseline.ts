// `agent-iac baseline bless REPORT… --stack S`: smoke reports of the versions the stack holds →
// baselines/<stack>.json, the one writer of a baseline (a file a pull request commits and a person
// approves; `plan` names a pull request that changes one).
import { CliError } from "../errors/index.ts";
import { blessReports } from "../usecases/index.ts";
import { parseCommand, STACK_FLAG } from "./args.ts";
import type { CommandIO } from "./lifecycle.ts";

const SPEC = {
  name: "baseline",
  synopsis: "bless REPORT.json… --stack S",
  about: `bless: reads the JSON reports of smoke runs of the versions the stack holds (\`smoke --json\`;
several reports merge into one baseline: more evidence) and writes baselines/<stack>.json: per agent
version, scenario and expectation (by its kind and key) the calls, the passes, the judge's votes,
the response latency's p50 and p95, and what produced them (the scenario's text hash, the judge's
and the caller's models as their endpoints answered, this tool's version). Commit it in a pull
request: \`agent-iac drift\` decides against it, and \`plan\` names a pull request that changes it.`,
  flags: { stack: STACK_FLAG },
  footer: `exit codes: 0 written, 2 usage error or not evidence (a report of another stack, of other versions
than the stack holds, interrupted, with no finished call of a scenario), 3 the stack or the file
could not be read or written.`,
  positionals: { min: 1, max: 1001, what: "a subcommand (bless)" },
} as const;

export async function run(argv: string[], io: CommandIO): Promise<number> {
  const parsed = parseCommand(SPEC, argv, io.stdout);
  if (!parsed) return 0;
  const [subcommand, ...reports] = parsed.positionals;
  if (subcommand !== "bless") throw new CliError(`unknown subcommand "${subcommand}" (subcommands: bless)`);
  if (reports.length === 0) throw new CliError("baseline bless needs the smoke reports to bless (smoke --json FILE)");
  const { file, baseline } = await blessReports({ stack: parsed.values.stack, project: io.project, reports }, (text) =>
    io.stderr.write(text),
  );
  const scenarios = Object.values(baseline.agents).reduce((n, a) => n + Object.keys(a.scenarios).length, 0);
  const versions = Object.entries(baseline.agents).map(([agent, a]) => `${agent} ${a.version_id}`);
  io.stdout.write(
    `blessed ${file}: ${scenarios} scenario(s) of ${versions.join(", ")} from ${reports.length} report(s); commit it in a pull request\n`,
  );
  return 0;
}
