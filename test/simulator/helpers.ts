// Test helpers for the simulator: raw HTTP, SSE and WebSocket calls with undici (never the
// project's client, which is tested on its own), so these tests pin the wire format itself.
import { createParser, type EventSourceMessage } from "eventsource-parser";
import { request, WebSocket } from "undici";
import type { Simulator as Running } from "../../src/simulator/index.ts";

/** What the helpers need of a simulator: its address and key (a spawned one has no handle). */
export type Simulator = Pick<Running, "url" | "apiKey">;

export const VERSION = "2025-06-19";

/** Parsed JSON bodies: the tests assert on their fields directly. */
// biome-ignore lint/suspicious/noExplicitAny: test-side JSON, checked by the assertions themselves
export type Json = any;

export type Reply<T = Json> = { status: number; headers: Record<string, string | string[] | undefined>; body: T };

export type CallOptions = {
  body?: unknown;
  /** A body sent as this exact text or these exact bytes (JSON.stringify cannot write what an attacker can). */
  text?: string | Uint8Array;
  /** Replaces the default Authorization and Service-Version headers where given (null = omit). */
  headers?: Record<string, string | null>;
};

export async function call<T = Json>(
  sim: Simulator,
  method: string,
  path: string,
  options: CallOptions = {},
): Promise<Reply<T>> {
  const headers: Record<string, string> = {};
  const wanted: Record<string, string | null> = {
    authorization: `Bearer ${sim.apiKey}`,
    "service-version": VERSION,
    ...(options.body === undefined && options.text === undefined ? {} : { "content-type": "application/json" }),
    ...options.headers,
  };
  for (const [key, value] of Object.entries(wanted)) if (value !== null) headers[key] = value;
  const response = await request(`${sim.url}${path}`, {
    method: method as "GET",
    headers,
    body: options.text ?? (options.body === undefined ? undefined : JSON.stringify(options.body)),
  });
  const text = await response.body.text();
  let body: unknown = text;
  try {
    body = text ? JSON.parse(text) : undefined;
  } catch {
    // keep the text
  }
  return { status: response.statusCode, headers: response.headers, body: body as T };
}

/** Like `call`, but a non-200 answer fails the test with its body. */
export async function ok<T = Json>(sim: Simulator, method: string, path: string, body?: unknown): Promise<T> {
  const reply = await call<T>(sim, method, path, body === undefined ? {} : { body });
  if (reply.status !== 200) throw new Error(`${method} ${path}: ${reply.status} ${JSON.stringify(reply.body)}`);
  return reply.body;
}

export const conversationalConfig = {
  personas: [{ name: "Leo", voice: { id: "male-1", provider: "service" } }],
  runtime: { model: "openai/gpt-4o", prompt: { type: "fixed", text: "Be helpful." } },
  tool: { tools: [{ ns: "syscall", name: "check_availability" }] },
  language: { default_language: "English" },
};

export async function createProcedural(sim: Simulator, config: Record<string, unknown> = {}, name = "Summary") {
  return ok<{ id: string; version_id: string }>(sim, "POST", "/procedural_agents", { name, description: "d", config });
}

export async function createConversational(sim: Simulator, extra: Record<string, unknown> = {}) {
  return ok<{ id: string; version_id: string }>(sim, "POST", "/conversational_agents", {
    name: "Booking",
    description: "books",
    config: conversationalConfig,
    ...extra,
  });
}

export type Created = { id: string; channel: { token: string; events_url: string; [key: string]: unknown } };

export async function createConversation(sim: Simulator, agentId: string, extra: Record<string, unknown> = {}) {
  return ok<Created>(sim, "POST", "/conversations", {
    agent_id: agentId,
    channel: { type: "phone", callee_no: "+15550100100" },
    ...extra,
  });
}

export type Envelope = { id: string; created_at: string; payload: { type: string; [key: string]: Json } };

export type SseResult = {
  status: number;
  headers: Reply["headers"];
  messages: EventSourceMessage[];
  events: Envelope[];
  /** The error body of a refused stream. */
  body?: Json;
  /** Set when the connection failed mid-stream (the events before it are kept). */
  error?: Error;
};

/** Reads an SSE stream to its end (or until `limit` messages), parsing frames with eventsource-parser. */
export async function readSse(
  url: string,
  headers: Record<string, string>,
  options: { limit?: number; signal?: AbortSignal } = {},
): Promise<SseResult> {
  const controller = new AbortController();
  options.signal?.addEventListener("abort", () => controller.abort());
  const response = await request(url, { method: "GET", headers, signal: controller.signal });
  if (response.statusCode !== 200) {
    const text = await response.body.text();
    return { status: response.statusCode, headers: response.headers, messages: [], events: [], body: JSON.parse(text) };
  }
  const messages: EventSourceMessage[] = [];
  let failure: Error | undefined;
  const parser = createParser({ onEvent: (message) => messages.push(message) });
  try {
    for await (const chunk of response.body) {
      parser.feed(chunk.toString("utf8"));
      if (options.limit !== undefined && messages.length >= options.limit) {
        controller.abort();
        break;
      }
    }
  } catch (error) {
    if (!controller.signal.aborted) failure = error as Error;
  }
  return {
    status: response.statusCode,
    headers: response.headers,
    messages,
    events: messages.map((m) => JSON.parse(m.data) as Envelope),
    ...(failure ? { error: failure } : {}),
  };
}

export function streamHeaders(sim: Simulator, auth: "key" | string): Record<string, string> {
  return auth === "key"
    ? { authorization: `Bearer ${sim.apiKey}`, "service-version": VERSION }
    : { "service-version": VERSION };
}

/** All events of a conversation, read over SSE with the API key until the stream closes. */
export async function allEvents(sim: Simulator, conversationId: string): Promise<Envelope[]> {
  const result = await readSse(`${sim.url}/conversations/${conversationId}/events`, streamHeaders(sim, "key"));
  if (result.status !== 200 || result.error) throw new Error(`events: ${result.status} ${result.error ?? ""}`);
  return result.events;
}

/** Agent message texts, from `agent.message.completed` events. */
export const said = (events: Envelope[]) =>
  events.filter((e) => e.payload.type === "agent.message.completed").map((e) => e.payload.text as string);

export const types = (events: Envelope[]) => events.map((e) => e.payload.type);

export async function waitFor<T>(probe: () => Promise<T | undefined | false>, timeoutMs = 10_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value) return value;
    if (Date.now() > deadline) throw new Error("timed out waiting for a condition");
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

/** A WebSocket session: received envelopes, and a promise of the close event. */
export function openSession(
  sim: Simulator,
  conversationId: string,
  auth: { key?: boolean; token?: string } = { key: true },
) {
  const url = new URL(`${sim.url.replace(/^http/, "ws")}/conversations/${conversationId}/session`);
  if (auth.token) url.searchParams.set("token", auth.token);
  const headers: Record<string, string> = { "service-version": VERSION };
  if (auth.key) headers.authorization = `Bearer ${sim.apiKey}`;
  const ws = new WebSocket(url, { headers } as never);
  const received: Envelope[] = [];
  ws.addEventListener("message", (event) => received.push(JSON.parse(String(event.data)) as Envelope));
  const opened = new Promise<void>((resolve, reject) => {
    ws.addEventListener("open", () => resolve());
    ws.addEventListener("error", () => reject(new Error("websocket error")));
  });
  const closed = new Promise<{ code: number; reason: string }>((resolve) =>
    ws.addEventListener("close", (event) => resolve({ code: event.code, reason: event.reason })),
  );
  return { ws, received, opened, closed };
}
