// POST /conversations, GET /conversations.
import { conversationListQuery, createConversationRequest, deepMerge } from "../../contract/index.ts";
import { pagingOf, type SimContext, type SimPlugin } from "../context.ts";
import { answer } from "../gate.ts";
import { HttpError, validate } from "../http.ts";
import { dateFilter, inRange, page } from "../paging.ts";
import { hashToken, randomSuffix, type StoredConversation } from "../store.ts";

export function conversationOr404(ctx: SimContext, id: string | undefined): StoredConversation {
  const conversation = id === undefined ? undefined : ctx.store.conversations.get(id);
  if (!conversation) throw new HttpError(404, `conversation_id: no conversation ${id}`, { field: "conversation_id" });
  return conversation;
}

export const conversationIdOf = (params: unknown) => (params as { conversation_id?: string }).conversation_id;

/**
 * POST /conversations. Seeded traffic (routes/traffic.ts) comes through here too, with `offsetMs`
 * dating the conversation (and everything it produces) that far from now.
 */
export function createConversation(ctx: SimContext, baseUrl: string, body: unknown, offsetMs = 0) {
  const { store, options } = ctx;
  const request = validate(createConversationRequest, body, "body");
  const [agentId = "", versionText] = request.agent_id.split("@v");
  const agent = store.agents.get(agentId);
  const version = versionText === undefined ? agent?.versions.at(-1) : agent?.versions[Number(versionText) - 1];
  if (agent?.kind !== "conversational" || !version) {
    throw new HttpError(404, `agent_id: no conversational agent ${request.agent_id}`, { field: "agent_id" });
  }
  const id = `conv_${randomSuffix()}`;
  const created_at = options.profile.now(Date.now() + offsetMs);
  const objects = options.profile.nullableObjects;
  const conversation: StoredConversation = {
    seq: store.nextSeq(),
    item: {
      id,
      agent_id: options.profile.conversationAgentId === "agent" ? agent.id : version.version_id,
      livemode: request.livemode ?? true,
      created_at,
      direction: "inbound",
      status: "queued",
      custom_fields: {},
      customer_id: objects ? { id: `cus_${randomSuffix(6)}`, phone_number: request.channel.callee_no } : null,
      channel_type: request.channel.type,
      started_at: null,
      completed_at: null,
      failure_reason: null,
      duration_sec: null,
      sentiment: null,
    },
    agent: { id: agent.id, version: version.version },
    config: deepMerge(version.config, request.override_config),
    context: request.context ?? {},
    events: [],
    ...(offsetMs !== 0 ? { clock_offset_ms: offsetMs } : {}),
  };
  const token = `tok_${randomSuffix(24)}`;
  store.state.tokens[hashToken(token)] = { conversation_id: id, expires_at: Date.now() + options.tokenTtlMs };
  store.addConversation(conversation);
  ctx.runners.conversations.start(conversation);
  return {
    id,
    channel: {
      type: request.channel.type,
      callee_no: request.channel.callee_no ?? null,
      caller_no: request.channel.caller_no ?? null,
      priority: request.channel.priority ?? "normal",
      token,
      events_url: `${baseUrl}/conversations/${encodeURIComponent(id)}/events`,
    },
    ...options.profile.createExtras("conversation", created_at),
  };
}

export const conversationRoutes: SimPlugin = async (app, { sim }) => {
  app.post("/conversations", async (request, reply) => {
    const created = createConversation(sim.ctx, sim.baseUrl, request.body);
    return answer(request, reply, created, sim.ctx.options.profile.createStatus);
  });

  app.get("/conversations", async (request, reply) => {
    const ctx = sim.ctx;
    const { cursor, ...filters } = validate(conversationListQuery, request.query, "query");
    const result = page(ctx.store.state.conversations, {
      cursor,
      filters,
      ...pagingOf(ctx),
      keep: (c, f) =>
        inRange(
          c.item.created_at,
          dateFilter("created_at_gte", f.created_at_gte),
          dateFilter("created_at_lt", f.created_at_lt),
        ) &&
        inRange(
          c.item.completed_at,
          dateFilter("completed_at_gte", f.completed_at_gte),
          dateFilter("completed_at_lt", f.completed_at_lt),
        ),
    });
    return answer(request, reply, { data: result.items.map((c) => c.item), cursor: result.cursor });
  });
};
