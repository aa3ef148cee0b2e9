// The package's component provider: agents declared from a Pulumi program in any language (YAML,
// Python, Go, .NET). Its `construct` creates the package's own resources (the same dynamic agent
// resources and AgentDirectory as a TypeScript program), so `config` is written exactly as in an
// agent file and fails the preview with the same errors; the stack settings are the same too
// (`agents:baseUrl`, the secret `agents:apiKey`). pulumi-plugin/ in the package starts it.
import { readFileSync } from "node:fs";
import path from "node:path";
import * as pulumi from "@pulumi/pulumi";
import { AgentDirectory } from "../component/index.ts";
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

function agentArgs(inputs: AgentInputs) {
  return { name: inputs.name, description: inputs.description, config: inputs.config as never };
}

/** A link is a ProceduralAgent resource (its `agentId`) or an id as it is. */
function linkedIds(links: unknown[]): pulumi.Output<string[]> {
  return pulumi.all(
    links.map((link) => (link instanceof ProceduralAgentComponent ? link.agentId : pulumi.output(link as string))),
  );
}

// Each resource's creating code goes into the state by source position. @pulumi/pulumi reads a
// stack frame's file and makes it a file: URL, but an ES module's frame (this package's) names a
// file: URL already: it became `file:///<cwd>/file:/<absolute path>`, which the engine cannot make
// relative to the project, so the state held this machine's paths. Read such frames as paths.
// (The SDK's own regexp, private in its types, with an optional `file://`.)
(pulumi.Resource as unknown as { framePositionRegExp: RegExp }).framePositionRegExp =
  /^\s*at .* \((?:file:\/\/)?(?<file>.*):(?<line>[0-9]+):(?<column>[0-9]+)\)$/;

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

const provider: pulumi.provider.Provider = {
  version,
  schema: JSON.stringify(componentSchema(version)),
  async construct(name, type, inputs, options) {
    switch (type) {
      case TOKENS.procedural: {
        const agent = new ProceduralAgentComponent(name, inputs as AgentInputs, options);
        return { urn: agent.urn, state: { agentId: agent.agentId, versionId: agent.versionId } };
      }
      case TOKENS.conversational: {
        const agent = new ConversationalAgentComponent(name, inputs as ConversationalInputs, options);
        return { urn: agent.urn, state: { agentId: agent.agentId, versionId: agent.versionId } };
      }
      case TOKENS.directory: {
        const directory = new AgentDirectory(name, { dir: inputs.dir as string }, options);
        const { versions, agents, previous_versions } = directory;
        return { urn: directory.urn, state: { versions, agents, previous_versions } };
      }
      default:
        throw new pulumi.RunError(`agent-iac has no component ${type}`);
    }
  },
};

/** Serves the provider to the engine (the plugin runner gives the engine's address as the first argument). */
export function serve(args: string[] = process.argv.slice(2)): Promise<void> {
  return pulumi.provider.main(provider, args);
}
