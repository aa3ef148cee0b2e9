// GET /conversations/{conversation_id}/events (SSE, framed as the profile says) and
// WS /conversations/{conversation_id}/session (the same events, plus control messages).
import type { WebSocket } from "@fastify/websocket";
import type { FastifyRequest } from "fastify";
import type { EventEnvelope } from "../../contract/index.ts";
import type { SimContext, SimPlugin } from "../context.ts";
import type { FaultEffect } from "../faults.ts";
import { faultOf } from "../gate.ts";
import { LIMITS } from "../limits.ts";
import { resumeAfter, sseFrame } from "../profile.ts";
import type { StoredConversation } from "../store.ts";
import { conversationIdOf, conversationOr404 } from "./conversations.ts";

type Out = { send(envelope: EventEnvelope, position: number): void; end(): void; destroy(): void };

/**
 * Feeds one stream: the stored events after `lastEventId` (all when absent or unknown), then live
 * ones, until `conversation.ended`; applies drop/stall faults. Returns a stop function.
 */
function follow(
  ctx: SimContext,
  conversation: StoredConversation,
  lastEventId: string | undefined,
  effect: FaultEffect | undefined,
  out: Out,
): () => void {
  let sent = 0;
  let done = false;
  let unsubscribe = () => {};
  const stop = () => {
    done = true;
    unsubscribe();
    ctx.streams.delete(handle);
  };
  const handle = {
    destroy: () => {
      stop();
      out.destroy();
    },
  };
  ctx.streams.add(handle);
  const events = conversation.events;
  const deliver = (envelope: EventEnvelope) => {
    if (done) return;
    if (effect?.dropAfterEvents !== undefined && sent >= effect.dropAfterEvents) return handle.destroy();
    if (effect?.stallAfterEvents !== undefined && sent >= effect.stallAfterEvents) return;
    out.send(envelope, events.indexOf(envelope) + 1);
    sent++;
    if (envelope.payload.type === "conversation.ended") {
      stop();
      out.end();
    }
  };
  const after = resumeAfter(ctx.options.profile, events, lastEventId);
  for (const envelope of events.slice(after + 1)) deliver(envelope);
  if (!done) unsubscribe = ctx.runners.conversations.subscribe(conversation.item.id, deliver);
  if (!done && effect?.dropAfterEvents !== undefined && sent >= effect.dropAfterEvents) handle.destroy();
  return stop;
}

const lastEventIdOf = (request: FastifyRequest) => {
  const value = request.headers["last-event-id"];
  return typeof value === "string" ? value : undefined;
};

export const streamRoutes: SimPlugin = async (app, { sim }) => {
  app.get("/conversations/:conversation_id/events", async (request, reply) => {
    const ctx = sim.ctx;
    const conversation = conversationOr404(ctx, conversationIdOf(request.params));
    const effect = faultOf(request);
    reply.hijack();
    const raw = reply.raw;
    if (effect?.resetAfterHandled) {
      request.raw.socket.destroy();
      return;
    }
    const { sse, requestIdHeader } = ctx.options.profile;
    raw.writeHead(200, {
      "content-type": sse.contentType,
      "cache-control": "no-cache",
      connection: "keep-alive",
      [requestIdHeader]: request.id,
    });
    for (const line of sse.preamble) raw.write(`${line}${sse.eol}`);
    if (sse.preamble.length > 0) raw.write(sse.eol);
    const stop = follow(ctx, conversation, lastEventIdOf(request), effect, {
      send: (envelope, position) => raw.write(sseFrame(ctx.options.profile, envelope, position)),
      end: () => raw.end(),
      // After what was written is flushed: the client sees the events, then the connection drop.
      destroy: () => (raw.socket ? raw.socket.destroySoon() : raw.destroy()),
    });
    raw.on("close", stop);
  });

  const sessionOptions = {
    websocket: true,
    // Rejected before the upgrade, as an HTTP 404.
    preHandler: async (request: FastifyRequest) => void conversationOr404(sim.ctx, conversationIdOf(request.params)),
  } as const;
  app.get("/conversations/:conversation_id/session", sessionOptions, (socket: WebSocket, request) => {
    const ctx = sim.ctx;
    const conversation = conversationOr404(ctx, conversationIdOf(request.params));
    const effect = faultOf(request);
    if (effect?.resetAfterHandled) {
      socket.terminate();
      return;
    }
    // A caller may speak over this session: the simulated caller lets it (see docs/simulator.md).
    ctx.runners.conversations.attachSession(conversation.item.id);
    const stop = follow(ctx, conversation, lastEventIdOf(request), effect, {
      send: (envelope) => socket.send(JSON.stringify(envelope)),
      end: () => socket.close(1000, "conversation ended"),
      destroy: () => socket.terminate(),
    });
    socket.on("close", stop);
    socket.on("error", stop);
    socket.on("message", controlHandler(ctx, conversation, socket));
  });
};

/** Acts on a session's control messages; each invalid one gets a `server.error` event (bounded). */
function controlHandler(ctx: SimContext, conversation: StoredConversation, socket: WebSocket) {
  const runner = ctx.runners.conversations;
  let localErrors = 0;
  const serverError = (message: string) => {
    const stored = conversation.control_errors ?? 0;
    if (stored >= LIMITS.controlErrorsPerConversation || localErrors >= LIMITS.controlErrorsPerConversation) {
      socket.close(1008, "too many invalid control messages");
      return;
    }
    if (runner.isEnded(conversation)) {
      const envelope = {
        id: `err_${conversation.item.id.replace(/^conv_/, "")}_${++localErrors}`,
        created_at: ctx.options.profile.now(),
        payload: { type: "server.error", error: { message } },
      };
      socket.send(JSON.stringify(envelope));
    } else {
      conversation.control_errors = stored + 1;
      runner.emit(conversation, { type: "server.error", error: { message } });
    }
  };
  return (data: unknown, isBinary: boolean) => {
    if (isBinary) return serverError("control messages are JSON text");
    let message: unknown;
    try {
      message = JSON.parse(String(data));
    } catch {
      return serverError("control message is not JSON");
    }
    const control = ctx.options.profile.control;
    const read = control.read(message);
    if ("say" in read) {
      if (conversation.events.length >= LIMITS.eventsPerConversation) {
        return serverError(
          `the conversation has reached ${LIMITS.eventsPerConversation} events (the simulator's limit)`,
        );
      }
      if (!runner.userTurn(conversation.item.id, read.say)) serverError("the conversation is not running");
    } else if ("end" in read) {
      if (!runner.end(conversation.item.id)) serverError("the conversation is not running");
    } else {
      const named = read.unknown === undefined ? "" : ` type "${read.unknown.slice(0, 60)}"`;
      serverError(`unknown control message${named}: the simulator accepts ${control.accepted}`);
    }
  };
}
