// The local simulator: every operation of the service interface on one fastify server, plus the
// simulator-only routes under /_simulator/. The choices the interface leaves open are documented
// in README.md beside this file.
import { timingSafeEqual } from "node:crypto";
import { setTimeout as sleep } from "node:timers/promises";
import websocket, { type WebSocket } from "@fastify/websocket";
import Fastify, { type FastifyReply, type FastifyRequest } from "fastify";
import { z } from "zod";
import {
  conversationListQuery,
  conversationProceduresQuery,
  createConversationalAgentRequest,
  createConversationRequest,
  createProceduralAgentRequest,
  type EventEnvelope,
  feedbackListQuery,
  procedureListQuery,
  SERVICE_VERSION,
  serviceVersionShape,
} from "../contract/index.ts";
import { ConversationRunner, FINAL_STATUSES } from "./conversation.ts";
import { deepMerge } from "./dialogue.ts";
import { type FaultEffect, Faults, faultRequest } from "./faults.ts";
import { errorBody, HttpError, validate } from "./http.ts";
import { dateFilter, inRange, page } from "./paging.ts";
import { isLoopbackHost, ProcedureRunner } from "./procedures.ts";
import {
  type AgentVersion,
  hashToken,
  randomSuffix,
  Store,
  type StoredAgent,
  type StoredConversation,
  type StoredFeedback,
} from "./store.ts";

/** The documented local-only key, used when no key is given; refused on a non-loopback host. */
export const DEV_API_KEY = "sk-agent-iac-local-dev-key";

export type SimulatorOptions = {
  /** Default 127.0.0.1. */
  host?: string;
  /** Default 8787; 0 picks a free port. */
  port?: number;
  /** Default DEV_API_KEY (loopback hosts only). */
  apiKey?: string;
  /** Persist the state to this JSON file (atomic writes); a restart keeps it. */
  dataFile?: string;
  /** Added before handling every service request. Default 0. */
  latencyMs?: number;
  /** Delay between two events of a conversation, and before a procedure completes. Default 10. */
  eventDelayMs?: number;
  /** Items per list page. Default 20. */
  pageSize?: number;
  /** Lifetime of a conversation's stream token. Default 15 minutes. */
  tokenTtlMs?: number;
  /** How long a `wait_for_user` conversation waits for the next session message. Default 60 s. */
  userWaitTimeoutMs?: number;
  /** No request log on stderr. */
  quiet?: boolean;
};

export type Simulator = {
  /** "http://127.0.0.1:PORT", no trailing slash. */
  url: string;
  apiKey: string;
  serviceId: string;
  close(): Promise<void>;
};

const EVENTS_ROUTE = "GET /conversations/{conversation_id}/events";
const SESSION_ROUTE = "WS /conversations/{conversation_id}/session";
const FEEDBACKS_ROUTE = "GET /feedbacks";

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

type Query = Record<string, unknown>;
type Params = { conversation_id?: string };

export async function startSimulator(options: SimulatorOptions = {}): Promise<Simulator> {
  const host = options.host ?? "127.0.0.1";
  const apiKey = options.apiKey || DEV_API_KEY;
  if (apiKey === DEV_API_KEY && !isLoopbackHost(host)) {
    throw new Error(
      `refusing to listen on ${host} with the documented dev key: give an API key (--api-key or AGENT_IAC_API_KEY) or use a loopback host`,
    );
  }
  const eventDelayMs = options.eventDelayMs ?? 10;
  const pageSize = options.pageSize ?? 20;
  const tokenTtlMs = options.tokenTtlMs ?? 15 * 60_000;
  const latencyMs = options.latencyMs ?? 0;
  const keyBytes = Buffer.from(apiKey);

  const store = await Store.open(options.dataFile);
  const faults = new Faults();
  const effects = new WeakMap<FastifyRequest, FaultEffect>();
  const routeKeys = new WeakMap<FastifyRequest, string>();
  const requests = { count: 0, by_route: {} as Record<string, number> };
  const streams = new Set<{ destroy(): void }>();
  /** Aborted by close(): ends latency waits. */
  const lifetime = new AbortController();

  let runner: ConversationRunner;
  let procedures: ProcedureRunner;
  const makeRunners = () => {
    runner = new ConversationRunner(store, {
      eventDelayMs,
      userWaitTimeoutMs: options.userWaitTimeoutMs ?? 60_000,
      onEnded: (conversation) => procedures.afterConversation(conversation),
    });
    procedures = new ProcedureRunner(store, { eventDelayMs, signal: runner.signal });
  };
  makeRunners();
  recoverAfterRestart();

  const app = Fastify({
    logger: false,
    forceCloseConnections: true,
    requestIdHeader: false,
    genReqId: () => `req_${randomSuffix(8)}`,
  });
  await app.register(websocket);
  let baseUrl = "";

  // ---- Before every request: request id, counting, auth, Service-Version, faults -------------

  app.addHook("onRequest", async (request, reply) => {
    reply.header("request-id", request.id);
    const url = request.routeOptions.url;
    if (request.url.startsWith("/_simulator/")) {
      authenticate(request, false);
      return;
    }
    requests.count++;
    if (url === undefined) return; // the not-found handler answers
    const method = request.headers.upgrade?.toLowerCase() === "websocket" ? "WS" : request.method;
    const route = `${method} ${url.replace(/:(\w+)/g, "{$1}")}`;
    routeKeys.set(request, route);
    requests.by_route[route] = (requests.by_route[route] ?? 0) + 1;
    authenticate(request, route === EVENTS_ROUTE || route === SESSION_ROUTE);
    checkServiceVersion(request, route);
    const effect = faults.select(route);
    const wait = latencyMs + (effect?.latencyMs ?? 0);
    if (wait > 0) {
      await sleep(wait, undefined, { signal: lifetime.signal }).catch(() => {
        throw new HttpError(503, "the simulator is stopping");
      });
    }
    if (!effect) return;
    if (effect.status) {
      const headers: Record<string, string> = {};
      if (effect.status.retryAfterS !== undefined) headers["retry-after"] = String(effect.status.retryAfterS);
      throw new HttpError(effect.status.code, `simulated fault ${effect.status.faultId} on ${route}`, { headers });
    }
    effects.set(request, effect);
  });

  function authenticate(request: FastifyRequest, allowToken: boolean): void {
    const header = request.headers.authorization;
    if (header !== undefined) {
      const match = /^Bearer\s+(\S+)\s*$/i.exec(header);
      const given = Buffer.from(match?.[1] ?? "");
      if (given.length !== keyBytes.length || !timingSafeEqual(given, keyBytes)) {
        throw new HttpError(401, "Authorization: not a valid API key (expected Bearer <API key>)", {
          field: "Authorization",
        });
      }
      return;
    }
    const token = (request.query as Query).token;
    if (allowToken && typeof token === "string" && token) {
      const grant = store.state.tokens[hashToken(token)];
      if (!grant) throw new HttpError(401, "token: not a stream token issued by this service", { field: "token" });
      if (grant.conversation_id !== (request.params as Params).conversation_id) {
        throw new HttpError(403, "token: this stream token belongs to another conversation", { field: "token" });
      }
      if (Date.now() >= grant.expires_at)
        throw new HttpError(401, "token: the stream token has expired", { field: "token" });
      return;
    }
    throw new HttpError(401, "Authorization: missing (send Authorization: Bearer <API key>)", {
      field: "Authorization",
    });
  }

  function checkServiceVersion(request: FastifyRequest, route: string): void {
    const value = request.headers["service-version"];
    if (route === FEEDBACKS_ROUTE) {
      if (typeof value !== "string" || !serviceVersionShape.safeParse(value).success) {
        throw new HttpError(400, "Service-Version: required on GET /feedbacks, a date (YYYY-MM-DD)", {
          field: "Service-Version",
        });
      }
      return;
    }
    if (value !== SERVICE_VERSION) {
      const what = typeof value === "string" ? `"${value}" is not supported` : "header missing";
      throw new HttpError(400, `Service-Version: ${what}; the allowed value is ${SERVICE_VERSION}`, {
        field: "Service-Version",
      });
    }
  }

  app.setErrorHandler((error: Error & { statusCode?: number }, request, reply) => {
    if (error instanceof HttpError) {
      return reply
        .code(error.status)
        .headers(error.headers)
        .send(errorBody(error.status, error.message, request.id, error.field));
    }
    const status = error.statusCode && error.statusCode >= 400 && error.statusCode < 600 ? error.statusCode : 500;
    const message = status === 500 ? "internal error of the simulator" : error.message;
    if (status === 500 && !runner.signal.aborted) process.stderr.write(`agent-iac simulator: ${error.stack}\n`);
    return reply.code(status).send(errorBody(status, message, request.id, status === 400 ? "body" : undefined));
  });

  app.setNotFoundHandler((request, reply) => {
    const path = request.url.split("?")[0];
    reply.code(404).send(errorBody(404, `no such operation: ${request.method} ${path}`, request.id));
  });

  if (!options.quiet) {
    app.addHook("onResponse", async (request, reply) => {
      const route = routeKeys.get(request) ?? `${request.method} ${request.url.split("?")[0]}`;
      process.stderr.write(`${route} → ${reply.statusCode} (${Math.round(reply.elapsedTime)} ms, ${request.id})\n`);
    });
  }

  /** Sends a JSON answer, or, under a reset_after_handled fault, destroys the connection unanswered. */
  function answer(request: FastifyRequest, reply: FastifyReply, body: unknown) {
    if (effects.get(request)?.resetAfterHandled) {
      reply.hijack();
      request.raw.socket.destroy();
      return;
    }
    return reply.code(200).send(body);
  }

  // ---- Agents ---------------------------------------------------------------------------------

  function createAgent(
    kind: StoredAgent["kind"],
    version: Omit<AgentVersion, "version" | "version_id" | "created_at">,
  ) {
    const id = `${kind === "conversational" ? "ca" : "pa"}_${randomSuffix()}`;
    const created_at = new Date().toISOString();
    const agent: StoredAgent = {
      kind,
      id,
      seq: store.nextSeq(),
      created_at,
      versions: [{ ...version, version: 1, version_id: `${id}@v1`, created_at }],
    };
    store.addAgent(agent);
    return { id, version_id: `${id}@v1` };
  }

  app.post("/conversational_agents", async (request, reply) => {
    const body = validate(createConversationalAgentRequest, request.body, "body");
    body.postprocess_agents?.forEach((id, i) => {
      if (store.agents.get(id)?.kind !== "procedural") {
        throw new HttpError(400, `postprocess_agents.${i}: no procedural agent ${id}`, {
          field: `postprocess_agents.${i}`,
        });
      }
    });
    return answer(request, reply, createAgent("conversational", body));
  });

  app.post("/procedural_agents", async (request, reply) => {
    const body = validate(createProceduralAgentRequest, request.body, "body");
    return answer(request, reply, createAgent("procedural", body));
  });

  // ---- Conversations --------------------------------------------------------------------------

  app.post("/conversations", async (request, reply) => {
    const body = validate(createConversationRequest, request.body, "body");
    const [agentId = "", versionText] = body.agent_id.split("@v");
    const agent = store.agents.get(agentId);
    const version = versionText === undefined ? agent?.versions.at(-1) : agent?.versions[Number(versionText) - 1];
    if (agent?.kind !== "conversational" || !version) {
      throw new HttpError(404, `agent_id: no conversational agent ${body.agent_id}`, { field: "agent_id" });
    }
    const id = `conv_${randomSuffix()}`;
    const conversation: StoredConversation = {
      seq: store.nextSeq(),
      item: {
        id,
        agent_id: version.version_id,
        livemode: body.livemode ?? true,
        created_at: new Date().toISOString(),
        direction: "inbound",
        status: "queued",
        custom_fields: {},
        customer_id: null,
        channel_type: body.channel.type,
        started_at: null,
        completed_at: null,
        failure_reason: null,
        duration_sec: null,
        sentiment: null,
      },
      agent: { id: agent.id, version: version.version },
      config: deepMerge(version.config, body.override_config),
      context: body.context ?? {},
      events: [],
    };
    const token = `tok_${randomSuffix(24)}`;
    store.state.tokens[hashToken(token)] = { conversation_id: id, expires_at: Date.now() + tokenTtlMs };
    store.addConversation(conversation);
    runner.start(conversation);
    return answer(request, reply, {
      id,
      channel: {
        type: body.channel.type,
        callee_no: body.channel.callee_no ?? null,
        caller_no: body.channel.caller_no ?? null,
        priority: body.channel.priority ?? "normal",
        token,
        events_url: `${baseUrl}/conversations/${encodeURIComponent(id)}/events`,
      },
    });
  });

  app.get("/conversations", async (request, reply) => {
    const query = validate(conversationListQuery, request.query, "query");
    const { cursor, ...filters } = query;
    const result = page(store.state.conversations, {
      cursor,
      filters,
      pageSize,
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

  function conversationOr404(id: string | undefined): StoredConversation {
    const conversation = id === undefined ? undefined : store.conversations.get(id);
    if (!conversation) throw new HttpError(404, `conversation_id: no conversation ${id}`, { field: "conversation_id" });
    return conversation;
  }

  // ---- Procedures -----------------------------------------------------------------------------

  app.get("/procedures", async (request, reply) => {
    const query = validate(procedureListQuery, request.query, "query");
    const { cursor, ...filters } = query;
    const result = page(store.state.procedures, {
      cursor,
      filters,
      pageSize,
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
    const conversation = conversationOr404((request.params as Params).conversation_id);
    const { cursor } = validate(conversationProceduresQuery, request.query, "query");
    const result = page(store.state.procedures, {
      cursor,
      filters: { conversation_id: conversation.item.id },
      pageSize,
      keep: (p) => p.item.conversation_id === conversation.item.id,
    });
    const items = result.items.map(({ item: { livemode: _livemode, ...rest } }) => rest);
    return answer(request, reply, { page: items, cursor: result.cursor });
  });

  // ---- Feedbacks ------------------------------------------------------------------------------

  app.get("/feedbacks", async (request, reply) => {
    const query = validate(feedbackListQuery, request.query, "query");
    const { cursor, ...filters } = query;
    const gte = dateFilter("created_at_gte", filters.created_at_gte);
    const lt = dateFilter("created_at_lt", filters.created_at_lt);
    const keep = (f: StoredFeedback, q: Record<string, string>) =>
      f.service_id === q.service_id &&
      inRange(
        f.item.created_at,
        dateFilter("created_at_gte", q.created_at_gte),
        dateFilter("created_at_lt", q.created_at_lt),
      );
    const result = page(store.state.feedbacks, { cursor, filters, pageSize, keep });
    // The top-level `reasons` object: how often each reason occurs in the whole filtered list.
    const reasons: Record<string, number> = {};
    const scope: Record<string, string> = { service_id: filters.service_id };
    if (gte !== undefined && filters.created_at_gte) scope.created_at_gte = filters.created_at_gte;
    if (lt !== undefined && filters.created_at_lt) scope.created_at_lt = filters.created_at_lt;
    for (const f of store.state.feedbacks) {
      if (!keep(f, scope)) continue;
      for (const reason of f.item.reasons) reasons[reason] = (reasons[reason] ?? 0) + 1;
    }
    return answer(request, reply, { data: result.items.map((f) => f.item), cursor: result.cursor, reasons });
  });

  // ---- Event stream (SSE) and session (WebSocket) ---------------------------------------------

  /**
   * Feeds one stream: the stored events after `lastEventId` (all when absent or unknown), then
   * live ones, until `conversation.ended`; applies drop/stall faults. Returns a stop function.
   */
  function follow(
    conversation: StoredConversation,
    lastEventId: string | undefined,
    effect: FaultEffect | undefined,
    out: { send(envelope: EventEnvelope): void; end(): void; destroy(): void },
  ): () => void {
    let sent = 0;
    let done = false;
    let unsubscribe = () => {};
    const stop = () => {
      done = true;
      unsubscribe();
      streams.delete(handle);
    };
    const handle = {
      destroy: () => {
        stop();
        out.destroy();
      },
    };
    streams.add(handle);
    const deliver = (envelope: EventEnvelope) => {
      if (done) return;
      if (effect?.dropAfterEvents !== undefined && sent >= effect.dropAfterEvents) return handle.destroy();
      if (effect?.stallAfterEvents !== undefined && sent >= effect.stallAfterEvents) return;
      out.send(envelope);
      sent++;
      if (envelope.payload.type === "conversation.ended") {
        stop();
        out.end();
      }
    };
    const events = conversation.events;
    const after = lastEventId === undefined ? -1 : events.findIndex((e) => e.id === lastEventId);
    for (const envelope of events.slice(after + 1)) deliver(envelope);
    if (!done) unsubscribe = runner.subscribe(conversation.item.id, deliver);
    if (!done && effect?.dropAfterEvents !== undefined && sent >= effect.dropAfterEvents) handle.destroy();
    return stop;
  }

  app.get("/conversations/:conversation_id/events", async (request, reply) => {
    const conversation = conversationOr404((request.params as Params).conversation_id);
    const effect = effects.get(request);
    reply.hijack();
    const raw = reply.raw;
    if (effect?.resetAfterHandled) {
      request.raw.socket.destroy();
      return;
    }
    raw.writeHead(200, {
      "content-type": "text/event-stream; charset=utf-8",
      "cache-control": "no-cache",
      connection: "keep-alive",
      "request-id": request.id,
    });
    const lastEventId = request.headers["last-event-id"];
    const stop = follow(conversation, typeof lastEventId === "string" ? lastEventId : undefined, effect, {
      send: (envelope) => raw.write(`id: ${envelope.id}\ndata: ${JSON.stringify(envelope)}\n\n`),
      end: () => raw.end(),
      // After what was written is flushed: the client sees the events, then the connection drop.
      destroy: () => (raw.socket ? raw.socket.destroySoon() : raw.destroy()),
    });
    raw.on("close", stop);
  });

  const sessionOptions = {
    websocket: true,
    // Rejected before the upgrade, as an HTTP 404.
    preHandler: async (request: FastifyRequest) => void conversationOr404((request.params as Params).conversation_id),
  } as const;
  app.get("/conversations/:conversation_id/session", sessionOptions, (socket: WebSocket, request) => {
    const conversation = conversationOr404((request.params as Params).conversation_id);
    const effect = effects.get(request);
    if (effect?.resetAfterHandled) {
      socket.terminate();
      return;
    }
    const lastEventId = request.headers["last-event-id"];
    const stop = follow(conversation, typeof lastEventId === "string" ? lastEventId : undefined, effect, {
      send: (envelope) => socket.send(JSON.stringify(envelope)),
      end: () => socket.close(1000, "conversation ended"),
      destroy: () => socket.terminate(),
    });
    socket.on("close", stop);
    socket.on("error", stop);
    let localErrors = 0;
    const serverError = (message: string) => {
      if (runner.isEnded(conversation)) {
        const envelope = {
          id: `err_${conversation.item.id.replace(/^conv_/, "")}_${++localErrors}`,
          created_at: new Date().toISOString(),
          payload: { type: "server.error", error: { message } },
        };
        socket.send(JSON.stringify(envelope));
      } else {
        runner.emit(conversation, { type: "server.error", error: { message } });
      }
    };
    socket.on("message", (data: unknown, isBinary: boolean) => {
      if (isBinary) return serverError("control messages are JSON text");
      let message: unknown;
      try {
        message = JSON.parse(String(data));
      } catch {
        return serverError("control message is not JSON");
      }
      const type = (message as { type?: unknown })?.type;
      const text = (message as { text?: unknown })?.text;
      if (type === "user.message" && typeof text === "string") {
        if (!runner.userTurn(conversation.item.id, text)) serverError("the conversation is not running");
      } else if (type === "end") {
        if (!runner.end(conversation.item.id)) serverError("the conversation is not running");
      } else {
        serverError(
          `unknown control message${typeof type === "string" ? ` type "${type.slice(0, 60)}"` : ""}: the simulator accepts {"type": "user.message", "text": "…"} and {"type": "end"}`,
        );
      }
    });
  });

  // ---- Simulator-only routes ------------------------------------------------------------------

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

  app.get("/_simulator/info", async () => ({ service_id: store.state.service_id }));
  app.get("/_simulator/agents", async () => ({
    conversational: store.state.agents.filter((a) => a.kind === "conversational").map(agentView),
    procedural: store.state.agents.filter((a) => a.kind === "procedural").map(agentView),
  }));
  app.get("/_simulator/requests", async () => ({ count: requests.count, by_route: requests.by_route }));
  app.get("/_simulator/deliveries", async () => ({ deliveries: store.state.deliveries }));
  app.post("/_simulator/feedbacks", async (request) => {
    const body = validate(feedbackCreate, request.body, "body");
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
        created_at: body.created_at ?? new Date().toISOString(),
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
  });
  app.post("/_simulator/reset", async () => {
    runner.stop();
    for (const stream of [...streams]) stream.destroy();
    makeRunners();
    store.reset();
    faults.clear();
    requests.count = 0;
    requests.by_route = {};
    return { ok: true };
  });
  app.get("/_simulator/faults", async () => ({ faults: faults.list() }));
  app.post("/_simulator/faults", async (request) => faults.add(validate(faultRequest, request.body, "body")));
  app.delete("/_simulator/faults", async () => {
    faults.clear();
    return { ok: true };
  });

  // ---- Start, restart recovery, close ---------------------------------------------------------

  /** A restart cannot resume a running conversation: it ends as failed; pending procedures complete. */
  function recoverAfterRestart(): void {
    for (const conversation of store.state.conversations) {
      if (runner.isEnded(conversation)) continue;
      const item = conversation.item;
      if (!FINAL_STATUSES.has(item.status)) {
        item.status = "failed";
        item.failure_reason = "interrupted: the simulator stopped while the conversation ran";
        item.completed_at = new Date().toISOString();
      }
      runner.emit(conversation, { type: "conversation.ended" });
    }
    for (const procedure of store.state.procedures) {
      if (procedure.item.status === "pending") procedures.run(procedure).catch(() => {});
    }
  }

  await app.listen({ host, port: options.port ?? 8787 });
  const address = app.server.address();
  const port = typeof address === "object" && address ? address.port : (options.port ?? 8787);
  const shownHost = host === "0.0.0.0" || host === "::" ? "127.0.0.1" : host.includes(":") ? `[${host}]` : host;
  baseUrl = `http://${shownHost}:${port}`;

  let closing: Promise<void> | undefined;
  return {
    url: baseUrl,
    apiKey,
    serviceId: store.state.service_id,
    close: () => {
      closing ??= (async () => {
        lifetime.abort();
        runner.stop();
        for (const stream of [...streams]) stream.destroy();
        for (const client of app.websocketServer?.clients ?? []) client.terminate();
        await app.close();
        await store.flush();
      })();
      return closing;
    },
  };
}
