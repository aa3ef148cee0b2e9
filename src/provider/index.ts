// Pulumi dynamic providers for the service's two agent kinds.
//
// The provider objects below are serialized by Pulumi into the state of every resource, so they
// stay tiny and capture nothing: no client, no schema, no key. Their one method loads the real
// implementation (./runtime.ts) by module name when it runs, from the project directory the
// provider host runs in; the stack config given to `configure` is kept there. `delete` (and a
// refresh) run with the provider stored in the OLD state: the runtime's `handle` is a stable entry.
import * as pulumi from "@pulumi/pulumi";
import { readFileUrlFrames } from "../pulumi-seams/index.ts";
import type { ConversationalAgentArgs, ProceduralAgentArgs } from "./args.ts";

export type * from "./args.ts";
export { agentKeyOf, type HeldAgent, type StateResource, stateAgent, stateAgents, stateBodies } from "./state.ts";

export type AgentKind = "conversational" | "procedural";

// Each resource's creating code goes into the state by source position, which the SDK reads from
// stack frames that name a file: URL in an ES module (this package's): read them as paths (the seam
// says why). Here, because every program that declares agents loads this module: a TypeScript
// program, `start`'s inline agents program, the component provider.
readFileUrlFrames();

/** The Pulumi type tokens of agent resources start with this (`…ConversationalAgent`, `…ProceduralAgent`). */
export const AGENT_TYPE_PREFIX = "pulumi-nodejs:dynamic/agents:";

/** What `configure` is given: the stack's config (kept and read by the runtime). */
export type ConfiguredProvider = { config?: { get(key: string): string | undefined } };

// The checkout runs its TypeScript sources, an installed copy its compiled JavaScript (Node strips
// no types under node_modules): package.json exports both, and the serialized provider captures
// which one as a string.
const RUNTIME = import.meta.url.endsWith(".ts") ? "agent-iac/source/provider-runtime" : "agent-iac/provider-runtime";

// The serialized provider is stored twice per agent (inputs and outputs), and the engine rewrites
// the state after every step: one function serves every method (the serializer writes a function
// once however many properties name it), it captures nothing, and `handle` in the runtime tells the
// methods apart by their arguments. No comments or type annotations inside it: the serialized text
// keeps both (annotations as spaces). There is no `read`: without one the provider host answers a
// refresh with the stored state, which is all there is to know (the service has no read endpoint).
// The method runs inside the provider host's CommonJS module (where `require` exists), never here.
// Its parameter is typed by context: an annotation would stay in the state as spaces.
function agentProvider(method: (...args: unknown[]) => Promise<unknown>): pulumi.dynamic.ResourceProvider {
  return { configure: method, check: method, diff: method, create: method, delete: method } as never;
}

const conversationalProvider = agentProvider((...args) =>
  require("node:module").createRequire(`${process.cwd()}/`)(RUNTIME).handle("conversational", args),
);

const proceduralProvider = agentProvider((...args) =>
  require("node:module").createRequire(`${process.cwd()}/`)(RUNTIME).handle("procedural", args),
);

/** The provider objects as the state stores them (serialized): for measuring and testing them. */
export const agentProviders: Record<AgentKind, pulumi.dynamic.ResourceProvider> = {
  conversational: conversationalProvider,
  procedural: proceduralProvider,
};

/**
 * A conversational agent on the service. Every change to its inputs creates a new agent (the
 * service has no update): the new one is created first, and the old one stays on the service.
 * A wrong value (a model without its vendor, an empty prompt) fails the preview with this
 * resource's name and the field's path. The resource's name is the agent's key for `agent-iac
 * smoke` (scenarios in `smoke/<name>.yaml`).
 */
export class ConversationalAgent extends pulumi.dynamic.Resource {
  /** The agent's id (`ca_…`): what conversations name to reach its released version. */
  declare readonly agentId: pulumi.Output<string>;
  /** The version this resource created (`ca_…@vN`): what smoke calls pin. */
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

/**
 * A procedural (post-call) agent on the service. Every change to its inputs creates a new agent
 * with a new id, which replaces the conversational agents that link it.
 */
export class ProceduralAgent extends pulumi.dynamic.Resource {
  /** The agent's id (`pa_…`): what a conversational agent's `postprocess_agents` takes. */
  declare readonly agentId: pulumi.Output<string>;
  /** The version this resource created (`pa_…@vN`). */
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
