// Error answers: every error, Fastify's own (bad JSON, wrong media type, body too large) and the
// HTTP parser's (431 headers too large, 408 request too slow) included, in the profile's error
// shape with a request id.
import { STATUS_CODES } from "node:http";
import type { Socket } from "node:net";
import { global, type Sim } from "./context.ts";
import { HttpError } from "./http.ts";
import { LIMITS } from "./limits.ts";
import { randomSuffix } from "./store.ts";

export const newRequestId = () => `req_${randomSuffix(8)}`;

/** Fastify's own errors, by code, as what the simulator says about them. */
function describe(error: Error & { statusCode?: number; code?: string }): HttpError {
  if (error instanceof HttpError) return error;
  if (error.code === "FST_ERR_CTP_BODY_TOO_LARGE") {
    return new HttpError(400, `body: larger than ${LIMITS.bodyBytes} bytes (the simulator's limit)`, {
      field: "body",
    });
  }
  const status = error.statusCode && error.statusCode >= 400 && error.statusCode < 600 ? error.statusCode : 500;
  if (status === 500) return new HttpError(500, "internal error of the simulator");
  return new HttpError(status, error.message, status === 400 ? { field: "body" } : {});
}

export const errorHandlers = global(async (app, { sim }: { sim: Sim }) => {
  app.setErrorHandler((error: Error & { statusCode?: number; code?: string }, request, reply) => {
    const described = describe(error);
    if (described.status === 500 && !(error instanceof HttpError) && !sim.ctx.runners.conversations.signal.aborted) {
      process.stderr.write(`agent-iac simulator: ${error.stack}\n`);
    }
    const body = sim.ctx.options.profile.errorBody(described.status, described.message, request.id, described.field);
    return reply.code(described.status).headers(described.headers).send(body);
  });

  app.setNotFoundHandler((request, reply) => {
    const path = request.url.split("?")[0];
    const message = `no such operation: ${request.method} ${path}`;
    reply.code(404).send(sim.ctx.options.profile.errorBody(404, message, request.id));
  });
});

/** Fastify's `clientErrorHandler`: errors of the HTTP parser, before any route or hook runs. */
export function clientErrorHandler(sim: Sim) {
  return (error: Error & { code?: string }, socket: Socket) => {
    if (!socket.writable) return socket.destroy();
    const status = error.code === "HPE_HEADER_OVERFLOW" ? 431 : error.code === "ERR_HTTP_REQUEST_TIMEOUT" ? 408 : 400;
    const message =
      status === 431
        ? "headers: larger than the simulator accepts"
        : status === 408
          ? `request: not received within ${sim.ctx.options.requestTimeoutMs} ms (the simulator's limit)`
          : "request: not a valid HTTP request";
    const id = newRequestId();
    const profile = sim.ctx.options.profile;
    const body = JSON.stringify(profile.errorBody(status, message, id));
    socket.end(
      `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\n` +
        "content-type: application/json; charset=utf-8\r\n" +
        `content-length: ${Buffer.byteLength(body)}\r\n` +
        `${profile.requestIdHeader}: ${id}\r\n` +
        "connection: close\r\n\r\n" +
        body,
    );
  };
}
