// The simulator-only routes under /_simulator/ (not part of the service): inspection, feedback
// creation, faults, reset, health, and the delivery sink.
import { z } from "zod";
import type { Feedback } from "../../contract/index.ts";
import type { SimulatorHealth, SimulatorInfo } from "../admin-schema.ts";
import { createContext, type Sim, type SimContext, type SimPlugin, stopContext } from "../context.ts";
import { degradeRequest } from "../degrade.ts";
import { faultRequest } from "../faults.ts";
import { HttpError, validate } from "../http.ts";
import { type AgentVersion, randomSuffix, type StoredAgent, type StoredFeedback } from "../store.ts";

const feedbackCreate = z.strictObject({
  id: z.string().min(1).optional(),
  conversation_id: z.string().min(1),
  created_at: z.iso.datetime({ offset: true }).optional(),
  rating: z.string().min(1),
  created_by_user_id: z.string().optional(),
  created_by_user_name: z.string().optional(),
  reasons: z.array(z.string()).optional(),
  comment: z.string().optional(),
});

/** POST /_simulator/feedbacks (also used by seeded traffic, routes/traffic.ts): the feedback item made. */
export function createFeedback(ctx: SimContext, input: unknown): Feedback {
  const { store } = ctx;
  const body = validate(feedbackCreate, input, "body");
  if (!store.conversations.has(body.conversation_id)) {
    throw new HttpError(400, `conversation_id: no conversation ${body.conversation_id}`, {
      field: "conversation_id",
    });
  }
  const feedback: StoredFeedback = {
    seq: store.nextSeq(),
    service_id: store.state.service_id,
    item: {
      id: body.id ?? `fb_${randomSuffix()}`,
      conversation_id: body.conversation_id,
      created_at: body.created_at ?? ctx.options.profile.now(),
      rating: body.rating,
      created_by_user_id: body.created_by_user_id ?? "usr_simulator",
      created_by_user_name: body.created_by_user_name ?? "Simulator",
      reasons: body.reasons ?? [],
      comment: body.comment ?? "",
    },
  };
  store.state.feedbacks.push(feedback);
  store.changed();
  return feedback.item;
}

const agentView = (agent: StoredAgent) => {
  const latest = agent.versions.at(-1) as AgentVersion;
  return {
    id: agent.id,
    version_id: latest.version_id,
    name: latest.name,
    description: latest.description,
    config: latest.config,
    ...(latest.postprocess_agents ? { postprocess_agents: latest.postprocess_agents } : {}),
    created_at: agent.created_at,
    versions: agent.versions,
  };
};

/** Health: 200 while the data file is written, 503 naming the failure once a write failed. */
function health(sim: Sim) {
  const { store, options } = sim.ctx;
  const persistence = store.file
    ? {
        data_file: store.file,
        ok: store.writeError === undefined,
        error: store.writeError ?? null,
        last_write_at: store.lastWriteAt ?? null,
      }
    : null;
  const ok = persistence?.ok !== false;
  const body = { ok, simulator: "agent-iac", profile: options.profile.name, service_id: store.state.service_id };
  return { ...(body satisfies SimulatorHealth), persistence };
}

export const adminRoutes: SimPlugin = async (app, { sim }) => {
  app.get("/_simulator/health", async (_request, reply) => {
    const body = health(sim);
    return reply.code(body.ok ? 200 : 503).send(body);
  });
  app.get(
    "/_simulator/info",
    async () => ({ service_id: sim.ctx.store.state.service_id, ...sim.identity }) satisfies SimulatorInfo,
  );
  app.get("/_simulator/agents", async () => {
    const agents = sim.ctx.store.state.agents;
    return {
      conversational: agents.filter((a) => a.kind === "conversational").map(agentView),
      procedural: agents.filter((a) => a.kind === "procedural").map(agentView),
    };
  });
  app.get("/_simulator/requests", async () => ({ count: sim.ctx.requests.count, by_route: sim.ctx.requests.by_route }));
  app.get("/_simulator/deliveries", async () => {
    const deliveries = sim.ctx.store.state.deliveries;
    const failed = deliveries.filter((d) => !d.ok).length;
    return { deliveries, ok: deliveries.length - failed, failed };
  });
  app.get("/_simulator/hooks", async () => ({ hooks: sim.ctx.store.state.hooks }));
  app.post("/_simulator/hooks/:name", async (request) => {
    const { name } = request.params as { name: string };
    sim.ctx.store.addRecord("hooks", { name, received_at: sim.ctx.options.profile.now(), body: request.body ?? null });
    return { ok: true };
  });
  app.post("/_simulator/feedbacks", async (request) => createFeedback(sim.ctx, request.body));
  app.post("/_simulator/reset", async () => {
    const old = sim.ctx;
    stopContext(old);
    old.store.reset();
    sim.ctx = createContext(old.store, old.options);
    return { ok: true };
  });
  app.get("/_simulator/faults", async () => ({ faults: sim.ctx.faults.list() }));
  app.post("/_simulator/faults", async (request) => sim.ctx.faults.add(validate(faultRequest, request.body, "body")));
  app.delete("/_simulator/faults", async () => {
    sim.ctx.faults.clear();
    return { ok: true };
  });
  // Drift on demand: a pinned version degrades from now on, until it is recovered (DELETE).
  app.get("/_simulator/degrade", async () => ({ degradations: sim.ctx.degradations.list() }));
  app.post("/_simulator/degrade", async (request) =>
    sim.ctx.degradations.set(validate(degradeRequest, request.body, "body"), sim.ctx.options.profile.now()),
  );
  app.delete("/_simulator/degrade", async (request) => {
    const { version_id: versionId } = request.query as { version_id?: string };
    return { ok: true, recovered: sim.ctx.degradations.clear(versionId) };
  });
};
