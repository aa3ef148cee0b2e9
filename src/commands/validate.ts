// `agent-iac validate [dir] [--stack NAME]`: checks agent files offline, every error as file:line.
import { formatDiagnostic, loadAgents } from "../definitions/index.ts";
import { parseCommand } from "./args.ts";

const SPEC = {
  name: "validate",
  synopsis: "[dir] [--stack NAME]",
  about: `Checks the agent files in dir (default: agents) without any network access: YAML syntax, fields
and types, references between agents, prompt files and smoke scenarios. Each problem is printed
to stderr as file:line:column: field: reason.

With --stack NAME, agents/<key>.NAME.yaml overlays are merged over their base files (as a
deploy of that stack would); without it, every overlay is checked against its base file.`,
  flags: { stack: { type: "string", arg: "NAME", help: "merge this stack's overlays" } },
  footer: "exit codes: 0 the files are valid, 1 they are not, 2 usage error.",
  positionals: { max: 1, what: "a directory" },
} as const;

export async function run(argv: string[]): Promise<number> {
  const parsed = parseCommand(SPEC, argv);
  if (!parsed) return 0;
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
