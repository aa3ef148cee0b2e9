// `agent-iac validate [dir] [--stack NAME] [--policy FILE]`: checks agent files offline, every error
// as file:line; with --policy, also the org rules (src/policy: the same code as the policy pack).
import { checkAgentFiles } from "../checks/index.ts";
import { parseCommand } from "./args.ts";
import type { CommandIO } from "./lifecycle.ts";

const SPEC = {
  name: "validate",
  synopsis: "[dir] [--stack NAME] [--policy FILE]",
  about: `Checks the agent files in dir (default: agents) without any network access: YAML syntax, fields
and types, references between agents, prompt files and smoke scenarios. Each problem is printed
to stderr as file:line:column: field: reason.

With --stack NAME, agents/<key>.NAME.yaml overlays are merged over their base files (as a
deploy of that stack would); without it, every overlay is checked against its base file.

With --policy FILE, the org rules of agent-iac's policy pack run on the valid agents, offline:
FILE is the policy config JSON that \`pulumi preview --policy-pack policy --policy-pack-config FILE\`
takes ({} for the defaults). Each violation is printed as file:line:column: field: [level] rule:
the pack's message. Mandatory violations fail; advisory ones are warnings.`,
  flags: {
    stack: { type: "string", arg: "NAME", help: "merge this stack's overlays" },
    policy: {
      type: "string",
      arg: "FILE",
      help: "check the org rules with this policy config JSON ('{}' for the defaults)",
    },
  },
  footer:
    "exit codes: 0 the files are valid (advisory violations only), 1 they are not or a mandatory rule is\nviolated, 2 usage error or an unreadable policy config.",
  positionals: { max: 1, what: "a directory" },
} as const;

export async function run(argv: string[], io: CommandIO): Promise<number> {
  const parsed = parseCommand(SPEC, argv, io.stdout);
  if (!parsed) return 0;
  const dir = parsed.positionals[0] ?? "agents";
  const { stack, policy } = parsed.values;
  const check = await checkAgentFiles({ project: io.project, dir, stack, policy });
  if (check.errors.length > 0) {
    for (const error of check.errors) io.stderr.write(`${error}\n`);
    io.stderr.write(`${check.errors.length} error${check.errors.length === 1 ? "" : "s"} in ${dir}\n`);
    return 1;
  }
  for (const warning of check.warnings) io.stderr.write(`${warning}\n`);
  const applied = check.overlays.length > 0 ? ` (overlays for stack ${stack}: ${check.overlays.join(", ")})` : "";
  const agents = `${check.agents} agent${check.agents === 1 ? "" : "s"}`;
  if (!check.policy) {
    io.stdout.write(`${agents} OK${applied}\n`);
    return 0;
  }
  const { rules, violations, mandatory, advisory } = check.policy;
  for (const violation of violations) io.stderr.write(`${violation}\n`);
  const found = mandatory + advisory === 0 ? "OK" : `${mandatory} mandatory, ${advisory} advisory violation(s)`;
  const summary = `${agents}, ${rules} rule(s) from ${policy}: ${found}${applied}\n`;
  if (mandatory > 0) {
    io.stderr.write(summary);
    return 1;
  }
  io.stdout.write(summary);
  return 0;
}
