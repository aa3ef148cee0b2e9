// POST /conversational_agents, POST /procedural_agents: every create makes a new agent at version 1.
import { createConversationalAgentRequest, createProceduralAgentRequest } from "../../contract/index.ts";
import type { SimContext, SimPlugin } from "../context.ts";
import { answer } from "../gate.ts";
import { HttpError, validate } from "../http.ts";
import { type AgentVersion, randomSuffix, type StoredAgent } from "../store.ts";

function createAgent(
  ctx: SimContext,
  kind: StoredAgent["kind"],
  version: Omit<AgentVersion, "version" | "version_id" | "created_at">,
) {
  const { store, options } = ctx;
  const id = `${kind === "conversational" ? "ca" : "pa"}_${randomSuffix()}`;
  const created_at = options.profile.now();
  const agent: StoredAgent = {
    kind,
    id,
    seq: store.nextSeq(),
    created_at,
    versions: [{ ...version, version: 1, version_id: `${id}@v1`, created_at }],
  };
  store.addAgent(agent);
  const extras = options.profile.createExtras(`${kind}_agent`, created_at);
  return { id, version_id: `${id}@v1`, ...extras };
}

export const agentRoutes: SimPlugin = async (app, { sim }) => {
  app.post("/conversational_agents", async (request, reply) => {
    const ctx = sim.ctx;
    const body = validate(createConversationalAgentRequest, request.body, "body");
    const seen = new Set<string>();
    body.postprocess_agents?.forEach((id, i) => {
      const field = `postprocess_agents.${i}`;
      if (seen.has(id)) throw new HttpError(400, `${field}: ${id} is named twice`, { field });
      seen.add(id);
      if (ctx.store.agents.get(id)?.kind !== "procedural") {
        throw new HttpError(400, `${field}: no procedural agent ${id}`, { field });
      }
    });
    return answer(request, reply, createAgent(ctx, "conversational", body), ctx.options.profile.createStatus);
  });

  app.post("/procedural_agents", async (request, reply) => {
    const ctx = sim.ctx;
    const body = validate(createProceduralAgentRequest, request.body, "body");
    return answer(request, reply, createAgent(ctx, "procedural", body), ctx.options.profile.createStatus);
  });
};
