// The gate: before every request, its request id, the Host check, counting, auth, Service-Version,
// latency and faults. Per-request findings (route key, selected fault) are kept in WeakMaps the
// routes read through `faultOf` / `routeOf`.
import { timingSafeEqual } from "node:crypto";
import { setTimeout as sleep } from "node:timers/promises";
import type { FastifyReply, FastifyRequest } from "fastify";
import { hostHeaderName, isLoopbackHost, SERVICE_VERSION, serviceVersionShape } from "../contract/index.ts";
import { global, type Sim, type SimContext } from "./context.ts";
import type { FaultEffect } from "./faults.ts";
import { HttpError } from "./http.ts";
import { hashToken } from "./store.ts";

const EVENTS_ROUTE = "GET /conversations/{conversation_id}/events";
const SESSION_ROUTE = "WS /conversations/{conversation_id}/session";
const FEEDBACKS_ROUTE = "GET /feedbacks";
/** Simulator-only routes that need no key (they reveal nothing). */
const OPEN_ROUTES = new Set(["/_simulator/health"]);

const effects = new WeakMap<FastifyRequest, FaultEffect>();
const routeKeys = new WeakMap<FastifyRequest, string>();
export const faultOf = (request: FastifyRequest) => effects.get(request);
const routeOf = (request: FastifyRequest) => routeKeys.get(request) ?? `${request.method} ${request.url.split("?")[0]}`;

export const gate = global(async (app, { sim }: { sim: Sim }) => {
  app.addHook("onRequest", async (request, reply) => {
    const ctx = sim.ctx;
    reply.header(ctx.options.profile.requestIdHeader, request.id);
    checkHost(ctx, request);
    const path = request.url.split("?")[0] ?? "";
    if (path.startsWith("/_simulator/")) {
      if (!OPEN_ROUTES.has(path)) authenticate(ctx, request, false);
      return;
    }
    ctx.requests.count++;
    const url = request.routeOptions.url;
    if (url === undefined) return; // the not-found handler answers
    const method = request.headers.upgrade?.toLowerCase() === "websocket" ? "WS" : request.method;
    const route = `${method} ${url.replace(/:(\w+)/g, "{$1}")}`;
    routeKeys.set(request, route);
    ctx.requests.by_route[route] = (ctx.requests.by_route[route] ?? 0) + 1;
    authenticate(ctx, request, route === EVENTS_ROUTE || route === SESSION_ROUTE);
    checkServiceVersion(request, route);
    const effect = ctx.faults.select(route);
    const wait = ctx.options.latencyMs + (effect?.latencyMs ?? 0);
    if (wait > 0) {
      await sleep(wait, undefined, { signal: sim.lifetime.signal }).catch(() => {
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
  if (!sim.ctx.options.quiet) {
    app.addHook("onResponse", async (request, reply) => {
      const line = `${routeOf(request)} → ${reply.statusCode} (${Math.round(reply.elapsedTime)} ms, ${request.id})`;
      process.stderr.write(`${line}\n`);
    });
  }
});

/**
 * DNS-rebinding defence: on a loopback address the simulator answers only requests that name a
 * loopback host, so a web page whose own name resolves to 127.0.0.1 cannot drive it.
 */
function checkHost(ctx: SimContext, request: FastifyRequest): void {
  if (!isLoopbackHost(ctx.options.host)) return;
  const name = hostHeaderName(request.headers.host ?? "");
  if (!isLoopbackHost(name)) {
    throw new HttpError(421, "Host: this simulator answers only loopback names (localhost, 127.0.0.1, [::1])", {
      field: "Host",
    });
  }
}

function authenticate(ctx: SimContext, request: FastifyRequest, allowToken: boolean): void {
  const header = request.headers.authorization;
  if (header !== undefined) {
    const match = /^Bearer\s+(\S+)\s*$/i.exec(header);
    const given = Buffer.from(match?.[1] ?? "");
    const key = Buffer.from(ctx.options.apiKey);
    if (given.length !== key.length || !timingSafeEqual(given, key)) {
      throw new HttpError(401, "Authorization: not a valid API key (expected Bearer <API key>)", {
        field: "Authorization",
      });
    }
    return;
  }
  const token = (request.query as Record<string, unknown>).token;
  if (allowToken && typeof token === "string" && token) {
    const grant = ctx.store.state.tokens[hashToken(token)];
    if (!grant) throw new HttpError(401, "token: not a stream token issued by this service", { field: "token" });
    if (grant.conversation_id !== (request.params as { conversation_id?: string }).conversation_id) {
      throw new HttpError(403, "token: this stream token belongs to another conversation", { field: "token" });
    }
    if (Date.now() >= grant.expires_at) {
      throw new HttpError(401, "token: the stream token has expired", { field: "token" });
    }
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

/**
 * Sends a JSON answer (`status` default 200), or, under a reset_after_handled fault, destroys the
 * connection unanswered.
 */
export function answer(request: FastifyRequest, reply: FastifyReply, body: unknown, status = 200) {
  if (faultOf(request)?.resetAfterHandled) {
    reply.hijack();
    request.raw.socket.destroy();
    return;
  }
  return reply.code(status).send(body);
}
