// GET /feedbacks (feedback is created through POST /_simulator/feedbacks, see admin.ts).
import { feedbackListQuery } from "../../contract/index.ts";
import { pagingOf, type SimPlugin } from "../context.ts";
import { answer } from "../gate.ts";
import { validate } from "../http.ts";
import { dateFilter, inRange, page } from "../paging.ts";
import type { StoredFeedback } from "../store.ts";

export const feedbackRoutes: SimPlugin = async (app, { sim }) => {
  app.get("/feedbacks", async (request, reply) => {
    const ctx = sim.ctx;
    const { cursor, ...filters } = validate(feedbackListQuery, request.query, "query");
    const gte = dateFilter("created_at_gte", filters.created_at_gte);
    const lt = dateFilter("created_at_lt", filters.created_at_lt);
    const keep = (f: StoredFeedback, q: Record<string, string>) =>
      f.service_id === q.service_id &&
      inRange(
        f.item.created_at,
        dateFilter("created_at_gte", q.created_at_gte),
        dateFilter("created_at_lt", q.created_at_lt),
      );
    const result = page(ctx.store.state.feedbacks, {
      cursor,
      filters,
      ...pagingOf(ctx),
      keep,
    });
    // The top-level `reasons` object: how often each reason occurs in the whole filtered list.
    const reasons: Record<string, number> = {};
    const scope: Record<string, string> = { service_id: filters.service_id };
    if (gte !== undefined && filters.created_at_gte) scope.created_at_gte = filters.created_at_gte;
    if (lt !== undefined && filters.created_at_lt) scope.created_at_lt = filters.created_at_lt;
    for (const f of ctx.store.state.feedbacks) {
      if (!keep(f, scope)) continue;
      for (const reason of f.item.reasons ?? []) reasons[reason] = (reasons[reason] ?? 0) + 1;
    }
    return answer(request, reply, { data: result.items.map((f) => f.item), cursor: result.cursor, reasons });
  });
};
