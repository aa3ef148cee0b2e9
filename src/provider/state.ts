// Reading an agent resource back from a stack's state (`pulumi stack export`, or a checkpoint of its
// history). Since the fleet layout the outputs keep only the ids and a digest per field, and the
// request body (name, postprocess_agents, …) lives in the resource's inputs; a stack deployed
// before it kept the body in the outputs. Both are read, the outputs first.
import { type Props, requestBody } from "./body.ts";
import { AGENT_TYPE_PREFIX, type AgentKind } from "./index.ts";

/** An agent resource's key: its name, the last part of its URN (`urn:pulumi:stack::project::type::key`). */
export const agentKeyOf = (urn: string): string => urn.split("::").at(-1) ?? urn;

/** One resource of a deployment, as far as reading agents needs it. */
export type StateResource = {
  urn?: string;
  type?: string;
  delete?: boolean;
  inputs?: Record<string, unknown>;
  outputs?: Record<string, unknown>;
};

/**
 * An agent the stack holds: its resource name (the key), ids, and what it was created with. The one
 * type for it, read from the state by `stateAgents` and used by smoke, compare, plan, watch, audit
 * and the recovery commands.
 */
export type HeldAgent = {
  key: string;
  kind: AgentKind;
  id: string;
  version_id: string;
  name: string;
  /** Linked procedural agents' ids (conversational agents; empty for procedural ones). */
  postprocess_agents: string[];
  urn: string;
};

/** The agent a resource holds, or undefined for other resources, deletions and failed creates. */
export function stateAgent(resource: StateResource): HeldAgent | undefined {
  if (!resource.type?.startsWith(AGENT_TYPE_PREFIX) || resource.delete) return undefined;
  const fields = { ...resource.inputs, ...resource.outputs };
  const { agentId, versionId, name, postprocess_agents: links } = fields;
  if (typeof versionId !== "string" || typeof agentId !== "string") return undefined;
  const urn = resource.urn ?? "";
  return {
    key: agentKeyOf(urn) || agentId,
    kind: resource.type.endsWith("ConversationalAgent") ? "conversational" : "procedural",
    id: agentId,
    version_id: versionId,
    name: typeof name === "string" ? name : "",
    postprocess_agents: Array.isArray(links) ? links.filter((id): id is string => typeof id === "string") : [],
    urn,
  };
}

/** Every agent a deployment (`pulumi stack export`, a history checkpoint) holds, by key. */
export function stateAgents(deployment: unknown): Record<string, HeldAgent> {
  const resources = (deployment as { resources?: unknown } | undefined)?.resources;
  const agents: Record<string, HeldAgent> = {};
  for (const resource of Array.isArray(resources) ? (resources as StateResource[]) : []) {
    const agent = stateAgent(resource);
    if (agent) agents[agent.key] = agent;
  }
  return agents;
}

/**
 * The request body (name, description, config, postprocess_agents) each agent of a deployment was
 * created with, by key, as its state holds it (the inputs; a stack deployed before the fleet layout:
 * the outputs): what `try` compares the agent file with. Kept apart from HeldAgent, which is copied
 * into reports and version history.
 */
export function stateBodies(deployment: unknown): Record<string, Props> {
  const resources = (deployment as { resources?: unknown } | undefined)?.resources;
  const bodies: Record<string, Props> = {};
  for (const resource of Array.isArray(resources) ? (resources as StateResource[]) : []) {
    const agent = stateAgent(resource);
    if (agent) bodies[agent.key] = requestBody(agent.kind, { ...resource.inputs, ...resource.outputs });
  }
  return bodies;
}
