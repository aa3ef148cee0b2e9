// POST /_simulator/traffic (simulator-only): places N conversations against one agent version with
// given mixes of outcome, duration, sentiment and feedback, optionally dated in the past, so
// `agent-iac watch` and `audit` can be tried and tested on real-looking traffic. Each conversation
// goes through POST /conversations' own code (validation, the agent's version, the dialogue, its
// procedures); each feedback through POST /_simulator/feedbacks' code. Nothing is written to the
// store directly.
import { setTimeout as sleep } from "node:timers/promises";
import { z } from "zod";
import type { SimContext, SimPlugin } from "../context.ts";
import { FINAL_STATUSES } from "../conversation.ts";
import { HttpError, validate } from "../http.ts";
import { createFeedback } from "./admin.ts";
import { createConversation } from "./conversations.ts";

/** Value → share of the batch (0–1); the shares add up to at most 1, the rest gets none. */
const mix = z.record(z.string().min(1), z.number().min(0).max(1));

const trafficRequest = z.strictObject({
  agent_id: z.string().min(1),
  count: z.int().min(1).max(5000),
  livemode: z.boolean().default(true),
  /** Share of conversations that fail (context.simulation.outcome: failed). */
  failure_rate: z.number().min(0).max(1).default(0),
  /** Share of conversations whose procedures fail. */
  procedure_failure_rate: z.number().min(0).max(1).default(0),
  /** One duration for all, or a list used in turn. */
  duration_sec: z.union([z.number().min(0), z.array(z.number().min(0)).min(1)]).optional(),
  sentiment: mix.optional(),
  /** Rating → share of conversations that get one feedback with that rating. */
  feedback: mix.optional(),
  feedback_reasons: z.array(z.string()).optional(),
  /** Date the batch this many seconds in the past … */
  ago_s: z.number().min(0).default(0),
  /** … spread evenly over this many more seconds (the first conversation is the oldest). */
  spread_s: z.number().min(0).default(0),
  /** Answer once every conversation and its procedures ended (bounded by wait_timeout_s). */
  wait: z.boolean().default(true),
  wait_timeout_s: z.number().min(0).max(600).default(120),
  callee_no: z.string().default("+15550100000"),
});

/**
 * Exactly round(n·share) of the n slots per value (largest remainder), spread evenly through the
 * batch; the other slots are undefined. Deterministic, so tests know the counts.
 */
export function spread(n: number, shares: Record<string, number>): (string | undefined)[] {
  const entries = Object.entries(shares);
  const total = entries.reduce((sum, [, share]) => sum + share, 0);
  if (total > 1 + 1e-9) throw new HttpError(400, "the shares of a mix add up to more than 1", { field: "body" });
  const exact = entries.map(([value, share]) => ({ value, want: n * share }));
  const counts = exact.map((e) => Math.floor(e.want + 1e-9));
  const target = Math.min(n, Math.round(n * total));
  const order = exact.map((e, i) => ({ i, rest: e.want - (counts[i] ?? 0) })).sort((a, b) => b.rest - a.rest);
  for (let k = 0; counts.reduce((a, b) => a + b, 0) < target && k < order.length; k++) {
    const i = order[k]?.i ?? 0;
    counts[i] = (counts[i] ?? 0) + 1;
  }
  const groups: { value: string | undefined; count: number }[] = exact.map((e, i) => ({
    value: e.value,
    count: counts[i] ?? 0,
  }));
  groups.push({ value: undefined, count: n - counts.reduce((a, b) => a + b, 0) });
  // Each value's slots at the middles of equal parts of the batch, merged by position.
  const slots = groups.flatMap((g) =>
    Array.from({ length: g.count }, (_, j) => ({ value: g.value, at: (j + 0.5) / g.count })),
  );
  return slots.sort((a, b) => a.at - b.at).map((s) => s.value);
}

function placeBatch(ctx: SimContext, baseUrl: string, request: z.output<typeof trafficRequest>) {
  const n = request.count;
  const failed = spread(n, { failed: request.failure_rate });
  const proceduresFailed = spread(n, { failed: request.procedure_failure_rate });
  const sentiments = request.sentiment ? spread(n, request.sentiment) : [];
  const ratings = request.feedback ? spread(n, request.feedback) : [];
  const durations = request.duration_sec === undefined ? [] : [request.duration_sec].flat();
  const ids: string[] = [];
  let feedbacks = 0;
  for (let i = 0; i < n; i++) {
    const offsetMs = -Math.round(1000 * (request.ago_s + (n > 1 ? (request.spread_s * (n - 1 - i)) / (n - 1) : 0)));
    const simulation = {
      user_turns: [],
      ...(failed[i] ? { outcome: "failed" } : {}),
      ...(proceduresFailed[i] ? { procedure_outcome: "failed" } : {}),
      ...(durations.length > 0 ? { duration_sec: durations[i % durations.length] } : {}),
      ...(sentiments[i] ? { sentiment: sentiments[i] } : {}),
    };
    const body = {
      agent_id: request.agent_id,
      channel: { type: "phone", callee_no: request.callee_no },
      livemode: request.livemode,
      context: { simulation },
    };
    const created = createConversation(ctx, baseUrl, body, offsetMs);
    ids.push(created.id);
    const rating = ratings[i];
    if (rating) {
      createFeedback(ctx, {
        conversation_id: created.id,
        rating,
        created_at: ctx.options.profile.now(Date.now() + offsetMs),
        ...(request.feedback_reasons ? { reasons: request.feedback_reasons } : {}),
      });
      feedbacks++;
    }
  }
  return { ids, failed: failed.filter(Boolean).length, feedbacks };
}

/** How many of the conversations ended with their procedures finished. */
function ended(ctx: SimContext, ids: Set<string>): number {
  const busy = new Set<string>();
  for (const { item } of ctx.store.state.procedures) {
    if (ids.has(item.conversation_id) && !FINAL_STATUSES.has(item.status)) busy.add(item.conversation_id);
  }
  let count = 0;
  for (const id of ids) {
    const conversation = ctx.store.conversations.get(id);
    if (conversation && FINAL_STATUSES.has(conversation.item.status) && !busy.has(id)) count++;
  }
  return count;
}

export const trafficRoutes: SimPlugin = async (app, { sim }) => {
  app.post("/_simulator/traffic", async (request) => {
    const body = validate(trafficRequest, request.body, "body");
    const ctx = sim.ctx;
    const placed = placeBatch(ctx, sim.baseUrl, body);
    const ids = new Set(placed.ids);
    const deadline = Date.now() + body.wait_timeout_s * 1000;
    let done = ended(ctx, ids);
    // Procedures start when their conversation ends: a conversation counts once both are final.
    while (body.wait && done < ids.size && Date.now() < deadline && sim.ctx === ctx) {
      await sleep(Math.max(5, ctx.options.eventDelayMs), undefined, { signal: sim.lifetime.signal });
      done = ended(ctx, ids);
    }
    return {
      agent_id: body.agent_id,
      placed: placed.ids.length,
      failed: placed.failed,
      feedbacks: placed.feedbacks,
      ended: done,
      conversation_ids: placed.ids,
    };
  });
};
