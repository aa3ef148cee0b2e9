// GET /procedures, GET /conversations/{conversation_id}/procedures.
import { conversationProceduresQuery, procedureListQuery } from "../../contract/index.ts";
import { pagingOf, type SimPlugin } from "../context.ts";
import { answer } from "../gate.ts";
import { validate } from "../http.ts";
import { dateFilter, inRange, page } from "../paging.ts";
import { conversationIdOf, conversationOr404 } from "./conversations.ts";

export const procedureRoutes: SimPlugin = async (app, { sim }) => {
  app.get("/procedures", async (request, reply) => {
    const ctx = sim.ctx;
    const { cursor, ...filters } = validate(procedureListQuery, request.query, "query");
    const result = page(ctx.store.state.procedures, {
      cursor,
      filters,
      ...pagingOf(ctx),
      keep: (p, f) =>
        (f.agent_id === undefined || p.item.agent_id === f.agent_id) &&
        (f.conversation_id === undefined || p.item.conversation_id === f.conversation_id) &&
        inRange(
          p.item.created_at,
          dateFilter("created_at_gte", f.created_at_gte),
          dateFilter("created_at_lt", f.created_at_lt),
        ),
    });
    return answer(request, reply, { page: result.items.map((p) => p.item), cursor: result.cursor });
  });

  app.get("/conversations/:conversation_id/procedures", async (request, reply) => {
    const ctx = sim.ctx;
    const conversation = conversationOr404(ctx, conversationIdOf(request.params));
    const { cursor } = validate(conversationProceduresQuery, request.query, "query");
    const result = page(ctx.store.state.procedures, {
      cursor,
      filters: { conversation_id: conversation.item.id },
      ...pagingOf(ctx),
      keep: (p) => p.item.conversation_id === conversation.item.id,
    });
    const items = result.items.map(({ item: { livemode: _livemode, ...rest } }) => rest);
    return answer(request, reply, { page: items, cursor: result.cursor });
  });
};
