// The offline checks behind `validate` and `schema`: the agent files checked (with a policy config,
// against the org rules too, the same code as the policy pack) and the agent file's JSON Schema,
// with no Pulumi, no simulator and no network. Apart from src/usecases so that these commands load
// neither the Pulumi SDK nor the simulator (about a second of CPU each time).

import { readFile } from "node:fs/promises";
import path from "node:path";
import {
  type Diagnostic,
  formatDiagnostic,
  type LoadResult,
  loadAgents,
  simulationWarnings,
} from "../definitions/index.ts";
import { ConfigError } from "../errors/index.ts";
import { movingModels } from "../judge/index.ts";
import {
  type AgentViolation,
  definitionAgents,
  evaluateAgents,
  fieldPath,
  PolicyConfigError,
  ruleSetups,
  violationMessage,
} from "../policy/index.ts";
import { type ProjectContext, stackFileRunSettings } from "../settings/index.ts";

export { agentJsonSchema } from "../definitions/index.ts";

export type FileCheckRequest = {
  project: ProjectContext;
  /** The agent files' folder. */
  dir: string;
  /** Merge this stack's overlays (and warn of simulator conventions when its service is not loopback). */
  stack?: string | undefined;
  /** The policy config JSON (or the literal `{}`): check the org rules too. */
  policy?: string | undefined;
};

export type FileCheck = {
  agents: number;
  /** Every problem, as file:line:column: field: reason. */
  errors: string[];
  /** Moving judge or persona model names, and scenario conventions of the simulator on a stack whose service is not loopback. */
  warnings: string[];
  /** The overlays merged for the stack. */
  overlays: string[];
  /** With a policy: the rules in force and each violation as file:line:column: field: [level] rule: message. */
  policy?: { rules: number; violations: string[]; mandatory: number; advisory: number };
};

export async function checkAgentFiles(request: FileCheckRequest): Promise<FileCheck> {
  const { stack } = request;
  const setups = request.policy === undefined ? undefined : await policySetups(request.policy, request.project.dir);
  const from = request.project.dir;
  // A relative folder is the project's, never the process's cwd.
  const dir = path.resolve(from, request.dir);
  const loaded = await loadAgents(dir, stack === undefined ? { from } : { stack, from });
  const { agents, errors } = loaded;
  const overlays = agents.flatMap((a) => (a.overlay ? [a.overlay] : []));
  const check: FileCheck = { agents: agents.length, errors: errors.map(formatDiagnostic), warnings: [], overlays };
  if (errors.length > 0) return check;
  const settings =
    stack === undefined ? undefined : await stackFileRunSettings(request.project, stack).catch(() => undefined);
  if (settings) {
    // A gate measured today does not hold for whatever a moving model name serves tomorrow.
    const scenarios = agents.flatMap((a) => a.smoke);
    const moving = movingModels(scenarios, settings.judge, settings.caller);
    check.warnings.push(...moving.map((warning) => `warning: ${warning}`));
  }
  // A stack on a real service: its scenarios' simulator conventions are worth a warning.
  const { connection } = settings ?? {};
  if (connection?.baseUrl !== undefined && !connection.loopback) {
    check.warnings.push(...simulationWarnings(loaded, connection.baseUrl).map(formatDiagnostic));
  }
  if (!setups) return check;
  const violations = evaluateAgents(definitionAgents(agents), setups);
  const mandatory = violations.filter((v) => v.level === "mandatory").length;
  check.policy = {
    rules: setups.filter((s) => s.level !== "disabled").length,
    violations: violations.map((violation) => formatDiagnostic(policyDiagnostic(loaded, violation))),
    mandatory,
    advisory: violations.length - mandatory,
  };
  return check;
}

/** FILE, or the literal `{}` (the defaults, as the docs say, without a file to hold them). */
async function policySetups(file: string, within: string) {
  let text = "{}";
  try {
    if (file.trim() !== "{}") text = await readFile(path.resolve(within, file), "utf8");
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
