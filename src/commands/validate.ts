// `agent-iac validate [dir] [--stack NAME] [--policy FILE]`: checks agent files offline, every error
// as file:line; with --policy, also the org rules (src/policy: the same code as the policy pack).
import { readFile } from "node:fs/promises";
import {
  type Diagnostic,
  formatDiagnostic,
  type LoadResult,
  loadAgents,
  simulationWarnings,
} from "../definitions/index.ts";
import { ConfigError } from "../errors/index.ts";
import {
  type AgentViolation,
  definitionAgents,
  evaluateAgents,
  fieldPath,
  PolicyConfigError,
  ruleSetups,
  violationMessage,
} from "../policy/index.ts";
import { isLoopbackUrl } from "../settings/index.ts";
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
  const setups = policy === undefined ? undefined : await policySetups(policy);
  const loaded = await loadAgents(dir, stack === undefined ? {} : { stack });
  const { agents, errors } = loaded;
  if (errors.length > 0) {
    for (const error of errors) io.stderr.write(`${formatDiagnostic(error)}\n`);
    io.stderr.write(`${errors.length} error${errors.length === 1 ? "" : "s"} in ${dir}\n`);
    return 1;
  }
  // A stack on a real service: its scenarios' simulator conventions are worth a warning. The use
  // cases load the Pulumi SDK and the simulator (a second of CPU): only a --stack run needs them.
  let address: string | undefined;
  if (stack !== undefined) {
    const { movingModels, openSession } = await import("../usecases/index.ts");
    // Offline: the stack file's address, else the environment's.
    const offline = await openSession(stack, { project: io.project, source: "file", optional: true }).catch(
      () => undefined,
    );
    address = offline?.connection.baseUrl;
    const scenarios = agents.flatMap((a) => a.smoke);
    for (const warning of offline ? movingModels(scenarios, offline.judge, offline.caller) : [])
      io.stderr.write(`warning: ${warning}
`);
  }
  if (address !== undefined && !isLoopbackUrl(address)) {
    for (const warning of simulationWarnings(loaded, address)) io.stderr.write(`${formatDiagnostic(warning)}\n`);
  }
  const overlays = agents.flatMap((a) => (a.overlay ? [a.overlay] : []));
  const applied = overlays.length > 0 ? ` (overlays for stack ${stack}: ${overlays.join(", ")})` : "";
  if (!setups) {
    io.stdout.write(`${agents.length} agent${agents.length === 1 ? "" : "s"} OK${applied}\n`);
    return 0;
  }
  const violations = evaluateAgents(definitionAgents(agents), setups);
  for (const violation of violations) io.stderr.write(`${formatDiagnostic(policyDiagnostic(loaded, violation))}\n`);
  const mandatory = violations.filter((v) => v.level === "mandatory").length;
  const advisory = violations.length - mandatory;
  const rules = setups.filter((s) => s.level !== "disabled").length;
  const summary = `${agents.length} agent${agents.length === 1 ? "" : "s"}, ${rules} rule(s) from ${policy}: ${mandatory} mandatory, ${advisory} advisory violation(s)${applied}\n`;
  if (mandatory > 0) {
    io.stderr.write(summary);
    return 1;
  }
  io.stdout.write(mandatory + advisory === 0 ? `${summary.replace(/: 0 mandatory.*violation\(s\)/, ": OK")}` : summary);
  return 0;
}

/** FILE, or the literal `{}` (the defaults, as the docs say, without a file to hold them). */
async function policySetups(file: string) {
  let text = "{}";
  try {
    if (file.trim() !== "{}") text = await readFile(file, "utf8");
  } catch (error) {
    throw new ConfigError(`cannot read the policy config ${file}: ${(error as NodeJS.ErrnoException).code ?? error}`);
  }
  try {
    return ruleSetups(JSON.parse(text));
  } catch (error) {
    if (error instanceof SyntaxError) throw new ConfigError(`${file}: not JSON: ${error.message}`);
    // The message names the file; the error keeps its class and code.
    if (error instanceof PolicyConfigError) throw new PolicyConfigError(`${file}: ${error.message}`, { cause: error });
    throw error;
  }
}

function policyDiagnostic(loaded: LoadResult, { agent, level, finding }: AgentViolation): Diagnostic {
  const where = loaded.locate?.(agent, finding.path, finding.offset);
  return {
    file: where?.file ?? "(unknown)",
    line: where?.line ?? 1,
    column: where?.column ?? 1,
    field: fieldPath(finding.path),
    message: `[${level}] ${finding.rule}: ${violationMessage(agent, finding)}`,
  };
}
