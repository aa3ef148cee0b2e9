// `agent-iac validate [dir] [--stack NAME]`: checks agent files offline, every error as file:line.
import { parseArgs } from "node:util";
import { formatDiagnostic, loadAgents } from "../definitions/index.ts";

const HELP = `usage: agent-iac validate [dir] [--stack NAME]

Checks the agent files in dir (default: agents) without any network access: YAML syntax, fields
and types, references between agents, prompt files and smoke scenarios. Each problem is printed
to stderr as file:line:column: field: reason.

With --stack NAME, agents/<key>.NAME.yaml overlays are merged over their base files (as a
deploy of that stack would); without it, every overlay is checked against its base file.

exit codes: 0 the files are valid, 1 they are not, 2 usage error.
`;

export async function run(argv: string[]): Promise<number> {
  let parsed: { values: { stack?: string; help: boolean }; positionals: string[] };
  try {
    parsed = parseArgs({
      args: argv,
      allowPositionals: true,
      options: { stack: { type: "string" }, help: { type: "boolean", short: "h", default: false } },
    });
  } catch (error) {
    process.stderr.write(`agent-iac validate: ${(error as Error).message}\n\n${HELP}`);
    return 2;
  }
  if (parsed.values.help) {
    process.stdout.write(HELP);
    return 0;
  }
  if (parsed.positionals.length > 1) {
    process.stderr.write(`agent-iac validate: expected at most one directory\n\n${HELP}`);
    return 2;
  }
  const dir = parsed.positionals[0] ?? "agents";
  const stack = parsed.values.stack;
  const { agents, errors } = await loadAgents(dir, stack === undefined ? {} : { stack });
  if (errors.length > 0) {
    for (const error of errors) process.stderr.write(`${formatDiagnostic(error)}\n`);
    process.stderr.write(`${errors.length} error${errors.length === 1 ? "" : "s"} in ${dir}\n`);
    return 1;
  }
  const overlays = agents.flatMap((a) => (a.overlay ? [a.overlay] : []));
  const applied = overlays.length > 0 ? ` (overlays for stack ${stack}: ${overlays.join(", ")})` : "";
  process.stdout.write(`${agents.length} agent${agents.length === 1 ? "" : "s"} OK${applied}\n`);
  return 0;
}
