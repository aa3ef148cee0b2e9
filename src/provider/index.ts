// Pulumi dynamic providers for the service's two agent kinds.
//
// The provider objects below are serialized by Pulumi into the state of every resource, so they
// stay tiny and capture nothing but a kind name: no client, no schema, no key. Each method loads
// the real implementation (./runtime.ts) by module name when it runs, from the project directory
// the provider host runs in. Settings read in `configure` live on the provider object (`this`):
// a module-level variable would not survive serialization. `delete` (and a refresh) run with the
// provider stored in the OLD state, so there is no client code in them.
import * as pulumi from "@pulumi/pulumi";
import type { ConversationalAgentConfig, ProceduralAgentConfig } from "../contract/index.ts";

export type AgentKind = "conversational" | "procedural";

/** The Pulumi type tokens of agent resources start with this (`…ConversationalAgent`, `…ProceduralAgent`). */
export const AGENT_TYPE_PREFIX = "pulumi-nodejs:dynamic/agents:";

/** What `configure` keeps on the provider object: the stack's config (read by the runtime). */
export type ConfiguredProvider = { config?: { get(key: string): string | undefined } };

// The text of these methods is what the state stores, twice per agent (inputs and outputs), and
// the engine rewrites the state after every step: keep them short and comment-free inside.
// There is no `read`: without one the provider host answers a refresh with the stored state, which
// is all there is to know (the service has no read endpoint). `delete` calls nothing: a removed
// agent stays on the service.
function agentProvider(kind: AgentKind): pulumi.dynamic.ResourceProvider {
  const load = () =>
    process.getBuiltinModule("node:module").createRequire(`${process.cwd()}/package.json`)(
      "agent-iac/provider-runtime",
    );
  return {
    async configure(request) {
      Object.assign(this, { config: request.config });
    },
    async check(olds, news) {
      return load().checkAgent(kind, olds, news);
    },
    async diff(_id, olds, news) {
      return load().diffAgent(kind, olds, news);
    },
    async create(inputs) {
      return load().createAgent(kind, this, inputs);
    },
    async delete(id, props) {
      console.error(`agent ${id} (${props?.name}) is no longer managed by this stack; the service keeps it.`);
    },
  };
}

const conversationalProvider = agentProvider("conversational");
const proceduralProvider = agentProvider("procedural");

export type ConversationalAgentArgs = {
  name: pulumi.Input<string>;
  description: pulumi.Input<string>;
  config: pulumi.Input<ConversationalAgentConfig>;
  postprocess_agents?: pulumi.Input<pulumi.Input<string>[]>;
};

export type ProceduralAgentArgs = {
  name: pulumi.Input<string>;
  description: pulumi.Input<string>;
  config: pulumi.Input<ProceduralAgentConfig>;
};

/** A conversational agent. Every change to its inputs creates a new agent (there is no update). */
export class ConversationalAgent extends pulumi.dynamic.Resource {
  declare readonly agentId: pulumi.Output<string>;
  declare readonly versionId: pulumi.Output<string>;
  constructor(name: string, args: ConversationalAgentArgs, opts?: pulumi.CustomResourceOptions) {
    super(
      conversationalProvider,
      name,
      { ...args, agentId: undefined, versionId: undefined },
      opts,
      "agents",
      "ConversationalAgent",
    );
  }
}

/** A procedural (post-call) agent. Every change to its inputs creates a new agent. */
export class ProceduralAgent extends pulumi.dynamic.Resource {
  declare readonly agentId: pulumi.Output<string>;
  declare readonly versionId: pulumi.Output<string>;
  constructor(name: string, args: ProceduralAgentArgs, opts?: pulumi.CustomResourceOptions) {
    super(
      proceduralProvider,
      name,
      { ...args, agentId: undefined, versionId: undefined },
      opts,
      "agents",
      "ProceduralAgent",
    );
  }
}
