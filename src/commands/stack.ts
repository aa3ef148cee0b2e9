// Shared by the commands that work on a stack: the stack itself, its config, the agent files it
// deploys (the directory the program reads: the stack's agents:dir), and its connection settings.
import { existsSync } from "node:fs";
import { readFile } from "node:fs/promises";
import path from "node:path";
import { parse } from "yaml";
import { AGENT_DIRECTORY_TYPE } from "../component/index.ts";
import { loadAgents } from "../definitions/index.ts";
import { AgentIacError, CliError } from "../errors/index.ts";
import { type HeldAgent, type StateResource, stateAgents } from "../provider/index.ts";
import { type Connection, configMapReader, resolveConnection, resolveJudge } from "../settings/index.ts";
import {
  createStackHint,
  openStack,
  pulumiEnvironment,
  pulumiErrorSummary,
  type Stack,
  StackNotFoundError,
} from "../workspace/index.ts";

export type StackConfig = Record<string, { value: string; secret?: boolean } | undefined>;

function missingStack(stack: string): StackNotFoundError {
  return new StackNotFoundError(stack, { hint: createStackHint(stack) });
}

/** A failure of the Pulumi CLI (backend, toolchain), said with the CLI's own lines: exit 3. */
export function pulumiFailure(what: string, error: unknown): unknown {
  if (error instanceof AgentIacError) return error;
  return new CliError(`${what}: ${pulumiErrorSummary(error)}`, 3, { cause: error });
}

/**
 * Never creates a stack: a mistyped name must not plan every agent as new or find no outputs.
 * `what` names the failure of a Pulumi call ("the preview failed").
 */
export async function existingStack(stackName: string, what: string) {
  const env = pulumiEnvironment();
  let stack: Stack;
  let config: StackConfig;
  try {
    stack = await openStack({ stackName, workDir: process.cwd(), create: false, env });
    config = await stack.getAllConfig();
  } catch (error) {
    throw pulumiFailure(what, error);
  }
  const dir = path.resolve(config["agents:dir"]?.value ?? "agents");
  // A project that declares its agents in TypeScript only (no agents/ and no agents:dir) has no agent files.
  const noFiles = config["agents:dir"] === undefined && !existsSync(dir);
  const { agents, errors } = noFiles ? { agents: [], errors: [] } : await loadAgents(dir, { stack: stackName });
  const reader = configMapReader(config);
  return {
    stack,
    env,
    config,
    dir,
    agents,
    errors,
    connection: resolveConnection(reader),
    judge: resolveJudge(reader),
  };
}

/**
 * The connection of a stack for the commands that only talk to the service (lists, events). Where
 * the stack has not been created on this backend yet (a fresh clone running `npm run service`),
 * the plain values of its Pulumi.<stack>.yaml stand in (a secret there cannot be read without it).
 */
export async function stackConnection(stackName: string, overrides: { baseUrl?: string } = {}): Promise<Connection> {
  if (overrides.baseUrl) return resolveConnection(() => undefined, process.env, overrides);
  return resolveConnection(configMapReader(await stackConfigOrFile(stackName)), process.env, overrides);
}

/** A stack's config (secrets decrypted); where the stack is not created yet, its Pulumi.<stack>.yaml's plain values. */
export async function stackConfigOrFile(stackName: string): Promise<StackConfig> {
  try {
    const stack: Stack = await openStack({
      stackName,
      workDir: process.cwd(),
      create: false,
      env: pulumiEnvironment(),
    });
    return await stack.getAllConfig();
  } catch (error) {
    if (!(error instanceof StackNotFoundError)) throw pulumiFailure(`reading stack ${stackName} failed`, error);
    return await stackFileConfig(stackName);
  }
}

/** The plain values of Pulumi.<stack>.yaml (secrets there cannot be read without Pulumi). */
export async function stackFileConfig(stackName: string): Promise<StackConfig> {
  const file = path.join(process.cwd(), `Pulumi.${stackName}.yaml`);
  const text = await readFile(file, "utf8").catch(() => undefined);
  if (text === undefined) throw missingStack(stackName);
  const values = (parse(text) as { config?: Record<string, unknown> } | null)?.config ?? {};
  return Object.fromEntries(
    Object.entries(values).flatMap(([key, value]) => (typeof value === "string" ? [[key, { value }]] : [])),
  );
}

/**
 * The agents the stack's state holds (what the last update, even a failed or interrupted one,
 * created), and which of them the stack outputs (written by the last successful update only) pin
 * differently.
 */
export async function stackAgents(
  stack: Stack,
): Promise<{ agents: Record<string, HeldAgent>; stale: string[]; directories: string[] }> {
  const state = await stack.exportStack();
  const agents = stateAgents(state.deployment);
  // The agent-file directories of the program's AgentDirectory components (their `dir` output).
  const directories: string[] = [];
  for (const resource of (state.deployment?.resources ?? []) as StateResource[]) {
    if (resource.type === AGENT_DIRECTORY_TYPE && typeof resource.outputs?.dir === "string") {
      directories.push(resource.outputs.dir);
    }
  }
  // Agents a program declares without listing them in an `agents` output are not stale.
  const outputs = ((await stack.outputs()).agents?.value ?? {}) as Record<string, { version_id?: string } | undefined>;
  const stale = Object.keys(agents).filter(
    (key) => outputs[key] !== undefined && outputs[key]?.version_id !== agents[key]?.version_id,
  );
  return { agents, stale, directories };
}

/** Said when the outputs lag the state: smoke calls what the stack holds. */
export function staleOutputsNote(stack: string, stale: string[]): string {
  return (
    `note: the outputs of stack ${stack} are from an earlier update (the last one failed or was interrupted); ` +
    `the stack holds other versions of ${stale.join(", ")}: calling the versions the stack holds.\n`
  );
}
