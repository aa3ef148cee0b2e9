// The package's component provider: agents declared from a Pulumi program in any language (YAML,
// Python, Go, .NET). Its `construct` creates the package's own resources (the same dynamic agent
// resources and AgentDirectory as a TypeScript program), so `config` is written exactly as in an
// agent file and fails the preview with the same errors; the stack settings are the same too
// (`agents:baseUrl`, the secret `agents:apiKey`). pulumi-plugin/ in the package starts it.
import { readFileSync } from "node:fs";
import path from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import * as pulumi from "@pulumi/pulumi";
import { AgentDirectory, agentDirectoryFiles } from "../component/index.ts";
import { agentInputProblems } from "../definitions/index.ts";
import { ConversationalAgent, ProceduralAgent } from "../provider/index.ts";
import { projectRoot } from "../workspace/index.ts";
import { componentSchema, PACKAGE, TOKENS } from "./schema.ts";

type AgentInputs = { name: pulumi.Input<string>; description: pulumi.Input<string>; config: pulumi.Input<object> };
type ConversationalInputs = AgentInputs & { postprocess_agents?: pulumi.Input<unknown[]> };

/** A procedural agent as a component: the dynamic agent resource of the same name is its child. */
class ProceduralAgentComponent extends pulumi.ComponentResource {
  declare readonly agentId: pulumi.Output<string>;
  declare readonly versionId: pulumi.Output<string>;
  constructor(name: string, inputs: AgentInputs | undefined, opts: pulumi.ComponentResourceOptions) {
    // With `opts.urn` (a reference another resource was given) the engine fills the outputs in.
    super(TOKENS.procedural, name, inputs ? {} : { agentId: undefined, versionId: undefined }, opts);
    if (!inputs) return;
    const agent = new ProceduralAgent(name, agentArgs(inputs), { parent: this });
    this.agentId = agent.agentId;
    this.versionId = agent.versionId;
    this.registerOutputs({ agentId: agent.agentId, versionId: agent.versionId });
  }
}

/** A conversational agent as a component, linking procedural agents given as resources or ids. */
class ConversationalAgentComponent extends pulumi.ComponentResource {
  readonly agentId: pulumi.Output<string>;
  readonly versionId: pulumi.Output<string>;
  constructor(name: string, inputs: ConversationalInputs, opts: pulumi.ComponentResourceOptions) {
    super(TOKENS.conversational, name, {}, opts);
    const links = inputs.postprocess_agents;
    const agent = new ConversationalAgent(
      name,
      {
        ...agentArgs(inputs),
        ...(links === undefined ? {} : { postprocess_agents: pulumi.output(links).apply(linkedIds) }),
      },
      { parent: this },
    );
    this.agentId = agent.agentId;
    this.versionId = agent.versionId;
    this.registerOutputs({ agentId: this.agentId, versionId: this.versionId });
  }
}

/** A value with no output in it (nothing waits for another resource or is unknown at preview). */
function isPlain(value: unknown, depth = 0): boolean {
  if (pulumi.Output.isInstance(value) || value instanceof Promise || depth > 64) return false;
  if (Array.isArray(value)) return value.every((item) => isPlain(item, depth + 1));
  if (value && typeof value === "object") return Object.values(value).every((item) => isPlain(item, depth + 1));
  return true;
}

/**
 * Refuses an agent's inputs as an agent file's would be refused, before anything of it is
 * registered: `config.langauge: unknown key "langauge" (did you mean "language"?)`, one line per
 * problem (the engine prefixes the resource). Inputs that hold another resource's outputs are left
 * to the agent resource's own check, which says the same once they are known.
 */
function refuseInvalid(kind: "conversational" | "procedural", inputs: AgentInputs): void {
  const given = { name: inputs.name, description: inputs.description, config: inputs.config };
  if (!isPlain(given)) return;
  const problems = agentInputProblems(kind, given);
  if (problems.length > 0) {
    throw new pulumi.RunError(problems.map((problem) => `${problem.field}: ${problem.message}`).join("\n"));
  }
}

function agentArgs(inputs: AgentInputs) {
  return { name: inputs.name, description: inputs.description, config: inputs.config as never };
}

/** A link is a ProceduralAgent resource (its `agentId`) or an id as it is. */
function linkedIds(links: unknown[]): pulumi.Output<string[]> {
  return pulumi.all(
    links.map((link) => (link instanceof ProceduralAgentComponent ? link.agentId : pulumi.output(link as string))),
  );
}

const version = (JSON.parse(readFileSync(path.join(projectRoot, "package.json"), "utf8")) as { version: string })
  .version;

// A ProceduralAgent passed to another resource arrives as a reference: this makes it a component
// whose outputs (its `agentId`) the engine reads from the stack.
pulumi.runtime.registerResourceModule(PACKAGE, "index", {
  version,
  construct: (name, type, urn) => {
    if (type !== TOKENS.procedural) throw new pulumi.RunError(`${type} cannot be passed as a procedural agent`);
    return new ProceduralAgentComponent(name, undefined, { urn });
  },
});

/** One component of this package: its URN and outputs, once registered. */
async function constructed(
  name: string,
  type: string,
  inputs: pulumi.Inputs,
  options: pulumi.ComponentResourceOptions,
): Promise<pulumi.provider.ConstructResult> {
  switch (type) {
    case TOKENS.procedural: {
      refuseInvalid("procedural", inputs as AgentInputs);
      const agent = new ProceduralAgentComponent(name, inputs as AgentInputs, options);
      return { urn: agent.urn, state: { agentId: agent.agentId, versionId: agent.versionId } };
    }
    case TOKENS.conversational: {
      refuseInvalid("conversational", inputs as AgentInputs);
      const agent = new ConversationalAgentComponent(name, inputs as ConversationalInputs, options);
      return { urn: agent.urn, state: { agentId: agent.agentId, versionId: agent.versionId } };
    }
    case TOKENS.directory: {
      // Read first: a failing component fails its outputs, unhandled, and the provider's server then
      // fails every construct under way with that error.
      await agentDirectoryFiles(inputs.dir as string);
      const directory = new AgentDirectory(name, { dir: inputs.dir as string }, options);
      const { versions, agents, previous_versions } = directory;
      return { urn: directory.urn, state: { versions, agents, previous_versions } };
    }
    default:
      throw new pulumi.RunError(`agent-iac has no component ${type}`);
  }
}

/** The constructs under way whose outcome is not known yet, and how many have begun. */
const underWay = new Set<Promise<unknown>>();
let begun = 0;

/**
 * How long a failed construct waits for the engine's next construct before it reports: the engine
 * sends a program's independent resources together, but a request may arrive just after another
 * one has failed.
 */
const QUIET_MS = 500;

/**
 * The engine stops at a construct's error and closes its connection to this provider: every other
 * construct under way then fails as "grpc: the client connection is closing", named on a valid
 * resource. A failed construct waits until no other is under way, nor begins within QUIET_MS.
 */
async function othersDone(): Promise<void> {
  for (;;) {
    while (underWay.size > 0) await Promise.allSettled([...underWay]);
    const seen = begun;
    await sleep(QUIET_MS);
    if (begun === seen && underWay.size === 0) return;
  }
}

/**
 * Waits until a component's registration and outputs have settled (known, unknown at preview, or
 * failed): `isSecret` is the SDK's public promise that settles with an output.
 */
function settled(result: pulumi.provider.ConstructResult): Promise<unknown> {
  const outputs = [result.urn, ...Object.values(result.state)].map((value) => pulumi.output(value));
  return Promise.all(outputs.map((output) => pulumi.isSecret(output)));
}

const provider: pulumi.provider.Provider = {
  version,
  schema: JSON.stringify(componentSchema(version)),
  async construct(name, type, inputs, options) {
    begun++;
    let outcome: Promise<unknown> = Promise.resolve();
    try {
      const result = await constructed(name, type, inputs, options);
      outcome = settled(result);
      underWay.add(outcome);
      await outcome;
      return result;
    } catch (error) {
      underWay.delete(outcome);
      await othersDone();
      throw error;
    } finally {
      underWay.delete(outcome);
    }
  },
};

/** Serves the provider to the engine (the plugin runner gives the engine's address as the first argument). */
export function serve(args: string[] = process.argv.slice(2)): Promise<void> {
  return pulumi.provider.main(provider, args);
}
