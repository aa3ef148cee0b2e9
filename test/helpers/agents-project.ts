// A work directory holding the real agents program with a copy of agents/ and prompts/, and a
// stack on a temp file backend pointed at a simulator.
import { cp, readdir, readFile, writeFile } from "node:fs/promises";
import path from "node:path";
import type * as pulumi from "@pulumi/pulumi";
import { parseDocument } from "yaml";
import { inlineAgentsProgram } from "../../src/component/program.ts";
import { exportState, openStack, projectRoot, type Stack, upStack } from "../../src/workspace/index.ts";
import { SIMULATOR_SHAPES } from "./caller.ts";
import { type PulumiSandbox, projectCopy } from "./pulumi.ts";
import { testProfile } from "./simulator.ts";

export type AgentsProject = { dir: string; stack: Stack; cleanup(): Promise<void> };

export async function agentsProject(
  sandbox: PulumiSandbox,
  options: {
    stackName?: string;
    baseUrl: string;
    apiKey?: string;
    secretKey?: boolean;
    agentsFrom?: string;
    /** Another program (its source, as index.ts), which the Pulumi CLI runs, instead of the agents program run inline. */
    program?: string;
  },
): Promise<AgentsProject> {
  const project = await projectCopy(path.join(projectRoot, "test", "fixtures", "agents-project"));
  if (options.program !== undefined) await useProgram(project.dir, options.program);
  await cp(options.agentsFrom ?? path.join(projectRoot, "agents"), path.join(project.dir, "agents"), {
    recursive: true,
  });
  await cp(path.join(projectRoot, "prompts"), path.join(project.dir, "prompts"), { recursive: true });
  const env = { ...sandbox.env };
  if (options.apiKey && !options.secretKey) env.AGENT_IAC_API_KEY = options.apiKey;
  // A new stack in a new directory: `stack init` alone, and the settings in one `config set-all`
  // (plain ones written into the stack file `stack init` left: no CLI run for them).
  const stackName = options.stackName ?? "test";
  const program = inlineAgentsProgram(project.dir, { ...process.env, ...env });
  const stack = await openStack({
    stackName,
    workDir: project.dir,
    env,
    create: false,
    ...(program ? { program } : {}),
  });
  await stack.workspace.createStack(stackName);
  const config: pulumi.automation.ConfigMap = { "agents:baseUrl": { value: options.baseUrl } };
  // The examples' callers speak in the simulator's shape: the variant profile's must be configured.
  if (testProfile() === "variant") {
    const { callerMessage, callerEnd } = SIMULATOR_SHAPES.variant.config;
    config["agents:callerMessage"] = { value: callerMessage };
    config["agents:callerEnd"] = { value: callerEnd };
  }
  if (options.apiKey && options.secretKey) {
    config["agents:apiKey"] = { value: options.apiKey, secret: true };
    await stack.setAllConfig(config);
  } else {
    const file = path.join(project.dir, `Pulumi.${stackName}.yaml`);
    const doc = parseDocument(await readFile(file, "utf8").catch(() => ""));
    for (const [key, { value }] of Object.entries(config)) doc.setIn(["config", key], value);
    await writeFile(file, doc.toString());
  }
  return { dir: project.dir, stack, cleanup: project.cleanup };
}

/** Makes the project run `source` (as index.ts) through the Pulumi CLI instead of the agents program. */
export async function useProgram(dir: string, source: string): Promise<void> {
  await writeFile(path.join(dir, "index.ts"), source);
  const file = path.join(dir, "Pulumi.yaml");
  const doc = parseDocument(await readFile(file, "utf8"));
  doc.set("main", "index.ts");
  await writeFile(file, doc.toString());
}

/** Appends smoke scenarios to a project's agents/<agent>.yaml, its comments and layout kept. */
export async function addScenarios(dir: string, agent: string, ...scenarios: Record<string, unknown>[]) {
  const file = path.join(dir, "agents", `${agent}.yaml`);
  const doc = parseDocument(await readFile(file, "utf8"));
  for (const scenario of scenarios) doc.addIn(["smoke"], doc.createNode(scenario));
  await writeFile(file, doc.toString());
}

/** The stack's state file on the file backend (its checkpoint JSON). */
export async function stateFile(sandbox: PulumiSandbox, stackName: string): Promise<string> {
  const root = path.join(sandbox.backendDir, ".pulumi", "stacks");
  for (const entry of await readdir(root, { recursive: true })) {
    if (path.basename(entry) === `${stackName}.json`) return readFile(path.join(root, entry), "utf8");
  }
  throw new Error(`no state file for stack ${stackName} under ${root}`);
}

export type StepOp = { name: string; op: string; type: string };

/** Collects each resource's step (create, same, replace, delete…) from an operation's events. */
export function stepRecorder() {
  const steps: StepOp[] = [];
  const onEvent = (event: pulumi.automation.EngineEvent) => {
    const metadata = event.resourcePreEvent?.metadata;
    if (!metadata || metadata.type === "pulumi:pulumi:Stack" || metadata.type.startsWith("pulumi:providers:")) return;
    steps.push({ name: metadata.urn.split("::").at(-1) ?? metadata.urn, op: metadata.op, type: metadata.type });
  };
  const namesWith = (...ops: string[]) =>
    [...new Set(steps.filter((s) => ops.includes(s.op)).map((s) => s.name))].sort();
  return { steps, onEvent, namesWith };
}

/**
 * `pulumi up` of a test stack: the Automation API's update without the three CLI runs its `up()`
 * makes after it (two of them decrypt secrets). It throws when the update fails, as `up()` does.
 */
export async function deployStack(stack: Stack): Promise<void> {
  await upStack(stack, {});
}

/**
 * `pulumi up` with what `stack.up()` returns that tests read (the CLI's output, what changed, the
 * outputs), the outputs from one export of the state instead of those three runs.
 */
export async function deployAndRead(stack: Stack) {
  const { changes, stdout, stderr } = await upStack(stack, {});
  return {
    stdout,
    stderr,
    summary: { result: "succeeded", resourceChanges: changes },
    outputs: await stackOutputs(stack),
  };
}

/**
 * The stack's outputs in the shape of `stack.outputs()`, read from one export of its state (the
 * root Stack resource's outputs) instead of two `stack output` runs that decrypt secrets. A secret
 * output stays encrypted: for the plain outputs (the version ids) the tests read.
 */
export async function stackOutputs(stack: Stack): Promise<pulumi.automation.OutputMap> {
  const state = await exportState(stack);
  const root = (state.deployment?.resources ?? []).find(
    (resource: { type: string }) => resource.type === "pulumi:pulumi:Stack",
  );
  const outputs = (root?.outputs ?? {}) as Record<string, unknown>;
  return Object.fromEntries(Object.entries(outputs).map(([key, value]) => [key, { value, secret: false }]));
}
