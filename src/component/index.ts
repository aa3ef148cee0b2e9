// AgentDirectory: a folder of agent files (agents/<key>.yaml with the stack's overlays) deployed
// inside any Pulumi program, as one component resource with an agent resource per file. The same
// loader, validation and file:line errors as `agent-iac validate`; the same outputs as this
// project's own stack (`versions`, `agents`).
import { realpathSync } from "node:fs";
import path from "node:path";
import * as pulumi from "@pulumi/pulumi";
import { type AgentDefinition, formatDiagnostic, loadAgents } from "../definitions/index.ts";
import { ConversationalAgent, ProceduralAgent } from "../provider/index.ts";
import { requireConnection, resolveConnection } from "../settings/index.ts";
import { componentOutputsBefore, previousVersions, versionsBeforeIn } from "./previous.ts";

export { PREVIOUS_VERSIONS_OUTPUT, previousVersionsOf, versionsBeforeIn } from "./previous.ts";

/** The component's Pulumi type token: `smoke` finds a stack's agent directories by it. */
export const AGENT_DIRECTORY_TYPE = "agent-iac:index:AgentDirectory";

export interface AgentDirectoryArgs {
  /**
   * The directory of agent files, relative to the Pulumi project (the directory of Pulumi.yaml; in
   * a component provider, the program's directory), e.g. `"agents"`. Every `<key>.yaml` in it is one agent; `<key>.<stack>.yaml` is merged over
   * it on that stack. The key is the agent resource's name, so keys must be unique in a stack.
   */
  dir: string;
}

/** One deployed agent, as the stack outputs show it. */
export interface DeployedAgent {
  /** The agent's id (`ca_…` or `pa_…`). */
  id: string;
  /** The version this deployment created (`ca_…@vN`). */
  version_id: string;
  kind: "conversational" | "procedural";
  /** The agent's name on the service. */
  name: string;
}

type Loaded = {
  versions: Record<string, pulumi.Output<string>>;
  agents: Record<string, pulumi.Output<DeployedAgent>>;
};

type LoadedDirectory = Loaded & { previous_versions: pulumi.Output<Record<string, string>> };

/**
 * Deploys a folder of agent YAML files: procedural agents first, conversational agents linking
 * them by id. Invalid files fail the preview with every problem at its file:line, before anything
 * is created.
 */
export class AgentDirectory extends pulumi.ComponentResource<LoadedDirectory> {
  /** `{key: version_id}` of every agent in the directory: what smoke calls pin. */
  readonly versions: pulumi.Output<Record<string, string>>;
  /** `{key: {id, version_id, kind, name}}` of every agent in the directory. */
  readonly agents: pulumi.Output<Record<string, DeployedAgent>>;
  /** `{key: version_id}`: the version each agent held before its current one (what its last replace left). */
  readonly previous_versions: pulumi.Output<Record<string, string>>;

  constructor(name: string, args: AgentDirectoryArgs, opts: pulumi.ComponentResourceOptions = {}) {
    // The state (inputs and outputs) holds the directory relative to the program, never a machine's path.
    super(AGENT_DIRECTORY_TYPE, name, { dir: withinProgram(args.dir) }, opts);
    const loaded = this.getData();
    this.versions = pulumi.output(loaded.then((data) => data.versions)) as pulumi.Output<Record<string, string>>;
    this.agents = pulumi.output(loaded.then((data) => data.agents)) as pulumi.Output<Record<string, DeployedAgent>>;
    this.previous_versions = pulumi.output(loaded.then((data) => data.previous_versions));
  }

  /** Runs inside the base constructor: loads the files and declares one resource per agent. */
  protected override async initialize(props: pulumi.Inputs): Promise<LoadedDirectory> {
    // Keeps the program running until the agents are declared (reading files awaits no Pulumi call).
    const done = pulumi.runtime.rpcKeepAlive();
    try {
      const { dir } = props as AgentDirectoryArgs;
      // What the component's last update registered, read before its agents are declared.
      const [definitions, before] = await Promise.all([agentDirectoryFiles(dir), componentOutputsBefore(this)]);
      const loaded = declareAgents(definitions, this);
      const previous_versions = previousVersions(loaded.versions, versionsBeforeIn(before));
      this.registerOutputs({ dir, versions: loaded.versions, agents: loaded.agents, previous_versions });
      return { ...loaded, previous_versions };
    } finally {
      done();
    }
  }
}

/**
 * The agents of an AgentDirectory's `dir`, or a RunError: a `dir` outside the program's directory,
 * one holding no agent file (`/etc`, a mistyped folder), or any problem of its files at file:line.
 * A component provider calls it before it declares the component, so the error is the construct's own.
 */
export async function agentDirectoryFiles(dir: string): Promise<AgentDefinition[]> {
  const relative = withinProgram(dir);
  // Runs in the component provider's own process (the engine starts it in the program's directory
  // with the stack's environment): its environment is the run's.
  const definitions = await readAgentDirectory(relative, { env: process.env });
  if (definitions.length === 0) {
    throw new pulumi.RunError(
      `AgentDirectory: ${JSON.stringify(relative)} holds no agent files (<key>.yaml): \`dir\` names the directory of the agent files, relative to the program's directory`,
    );
  }
  return definitions;
}

/**
 * Where a program runs when the Pulumi CLI did not start it (an inline program of the Automation
 * API runs in the process that asked for the update): its project directory and environment.
 */
/** Where the program runs: its project (default: the program's directory) and its environment (the run's). */
export type ProgramContext = { projectDir?: string; env: NodeJS.ProcessEnv };

/**
 * The agents of a directory (relative to the project) for this stack, with the stack's overlays,
 * or a RunError listing every problem at its file:line. Also fails, before anything is created,
 * when the provider would have no service address or key.
 */
export async function readAgentDirectory(dir: string, where: ProgramContext): Promise<AgentDefinition[]> {
  if (typeof dir !== "string" || dir.trim() === "") {
    throw new pulumi.RunError("AgentDirectory: `dir` must name a directory of agent files, relative to the project");
  }
  const projectDir = where.projectDir ?? programDirectory();
  const absolute = path.resolve(projectDir, dir);
  const { agents, errors } = await loadAgents(absolute, { stack: pulumi.getStack(), from: projectDir });
  if (errors.length > 0) {
    // RunError: a clean failure with our file:line messages, no stack trace.
    throw new pulumi.RunError(
      `${errors.length} error(s) in ${path.relative(projectDir, absolute) || "."}:\n${errors.map(formatDiagnostic).join("\n")}`,
    );
  }
  // Fail at preview, before anything is created, when the provider would have no address or key:
  // the same resolver as the provider's. The key is not used here and goes nowhere.
  try {
    requireConnection(resolveConnection((key) => pulumi.runtime.getConfig(key), where.env));
  } catch (error) {
    throw new pulumi.RunError((error as Error).message);
  }
  return agents;
}

/**
 * `dir` relative to the program's directory, or a RunError where it names no directory or one
 * outside it (`../agents`, `/etc`, a link leading out): agent files belong to the program, and
 * the state must hold no path of the machine that deployed it.
 */
function withinProgram(dir: unknown): string {
  if (typeof dir !== "string" || dir.trim() === "") {
    throw new pulumi.RunError("AgentDirectory: `dir` must name a directory of agent files, relative to the project");
  }
  const root = programDirectory();
  const absolute = path.resolve(root, dir);
  const outside = (from: string, to: string) => {
    const relative = path.relative(from, to);
    return relative === ".." || relative.startsWith(`..${path.sep}`) || path.isAbsolute(relative);
  };
  const real = (file: string) => {
    try {
      return realpathSync(file);
    } catch {
      return file; // not there: loading it says so
    }
  };
  if (outside(root, absolute) || outside(real(root), real(absolute))) {
    throw new pulumi.RunError(
      `AgentDirectory: dir ${JSON.stringify(dir)} is outside the program's directory: keep the agent files in it and name their directory relative to it (e.g. "agents")`,
    );
  }
  return path.relative(root, absolute) || ".";
}

/**
 * The program's directory. A Node.js program is told it (`getRootDirectory`, absolute); a component
 * provider is not (the SDK answers a placeholder there), but the engine starts it in that directory.
 */
function programDirectory(): string {
  const root = pulumi.runtime.getRootDirectory();
  // A process entry: the component provider's own working directory is the program's.
  return path.isAbsolute(root) ? root : process.cwd();
}

/**
 * One resource per agent, named by its key: procedural agents first, conversational agents
 * linking them by id. This project's own program declares them at the stack's root (no parent),
 * as it always has, so its stacks keep their URNs.
 */
export function declareAgents(definitions: AgentDefinition[], parent?: pulumi.Resource): Loaded {
  const created = new Map<string, { definition: AgentDefinition; resource: ProceduralAgent | ConversationalAgent }>();
  const options = (definition: AgentDefinition) => ({ protect: definition.protect, ...(parent ? { parent } : {}) });
  for (const definition of definitions.filter((agent) => agent.kind === "procedural")) {
    const resource = new ProceduralAgent(
      definition.key,
      { name: definition.name, description: definition.description, config: definition.config },
      options(definition),
    );
    created.set(definition.key, { definition, resource });
  }
  for (const definition of definitions.filter((agent) => agent.kind === "conversational")) {
    // The procedural resources' ids make the dependency real: a replaced procedural agent has a
    // new id, which replaces every conversational agent that links it. The loader has checked
    // that every key names a procedural agent of this directory, declared above.
    const linked = definition.postprocessAgents.flatMap((key) => {
      const target = created.get(key);
      return target ? [target.resource.agentId] : [];
    });
    const resource = new ConversationalAgent(
      definition.key,
      {
        name: definition.name,
        description: definition.description,
        config: definition.config,
        ...(linked.length > 0 ? { postprocess_agents: linked } : {}),
      },
      options(definition),
    );
    created.set(definition.key, { definition, resource });
  }
  const entries = [...created];
  return {
    versions: Object.fromEntries(entries.map(([key, { resource }]) => [key, resource.versionId])),
    agents: Object.fromEntries(
      entries.map(([key, { definition, resource }]) => [
        key,
        pulumi.output({
          id: resource.agentId,
          version_id: resource.versionId,
          kind: definition.kind,
          name: definition.name,
        }),
      ]),
    ),
  };
}
