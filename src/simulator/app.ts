// The simulator's Fastify app over a `Sim` box: body parsing with limits, the gate, the error
// handlers and one route plugin per resource family. Not listening: `startSimulator` listens, and
// tests may use `app.inject` where no socket is needed.
import { createServer } from "node:http";
import websocket from "@fastify/websocket";
import Fastify, { type FastifyInstance } from "fastify";
import type { Sim } from "./context.ts";
import { clientErrorHandler, errorHandlers, newRequestId } from "./errors.ts";
import { gate } from "./gate.ts";
import { LIMITS, parseJsonBody } from "./limits.ts";
import { adminRoutes } from "./routes/admin.ts";
import { agentRoutes } from "./routes/agents.ts";
import { conversationRoutes } from "./routes/conversations.ts";
import { feedbackRoutes } from "./routes/feedbacks.ts";
import { procedureRoutes } from "./routes/procedures.ts";
import { streamRoutes } from "./routes/streams.ts";
import { trafficRoutes } from "./routes/traffic.ts";

export async function buildApp(sim: Sim): Promise<FastifyInstance> {
  const timeout = sim.ctx.options.requestTimeoutMs;
  const app = Fastify({
    logger: false,
    forceCloseConnections: true,
    requestIdHeader: false,
    genReqId: newRequestId,
    bodyLimit: LIMITS.bodyBytes,
    clientErrorHandler: clientErrorHandler(sim),
    // A request (headers and body) must arrive within the timeout: a slowly sent body is cut off.
    // Node checks the timeouts every connectionsCheckingInterval, so it is a fraction of it.
    serverFactory: (handler) =>
      createServer(
        {
          requestTimeout: timeout,
          headersTimeout: timeout,
          connectionsCheckingInterval: Math.max(50, Math.min(1000, Math.floor(timeout / 4))),
        },
        handler,
      ),
  });
  app.removeContentTypeParser("application/json");
  // As bytes: a string would have had invalid UTF-8 replaced already.
  app.addContentTypeParser("application/json", { parseAs: "buffer" }, (_request, body, done) => {
    try {
      done(null, parseJsonBody(body as Buffer));
    } catch (error) {
      done(error as Error, undefined);
    }
  });
  await app.register(websocket, { options: { maxPayload: LIMITS.wsMessageBytes } });
  await app.register(errorHandlers, { sim });
  await app.register(gate, { sim });
  await app.register(agentRoutes, { sim });
  await app.register(conversationRoutes, { sim });
  await app.register(procedureRoutes, { sim });
  await app.register(feedbackRoutes, { sim });
  await app.register(streamRoutes, { sim });
  await app.register(adminRoutes, { sim });
  await app.register(trafficRoutes, { sim });
  return app;
}
