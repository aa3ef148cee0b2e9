// The variant profile's wire format (issue 22), read raw: the other legal value of every open choice.
import { createParser, type EventSourceMessage } from "eventsource-parser";
import type { FastifyInstance } from "fastify";
import { request } from "undici";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  buildApp,
  createContext,
  resolveSettings,
  type Sim,
  type Simulator,
  Store,
  startSimulator,
} from "../../src/simulator/index.ts";
import { call, conversationalConfig, type Json, ok, openSession, VERSION, waitFor } from "./helpers.ts";

const KEY = "sk-variant";
const MICROS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}\+00:00$/;
let sim: Simulator;

beforeAll(async () => {
  sim = await startSimulator({ port: 0, apiKey: KEY, eventDelayMs: 2, quiet: true, profile: "variant" });
});
afterAll(() => sim.close());

const created = async (path: string, body: unknown) => {
  const reply = await call(sim, "POST", path, { body });
  expect(reply.status).toBe(201);
  return reply.body;
};
const conversational = (extra: Record<string, unknown> = {}) =>
  created("/conversational_agents", { name: "Booking", description: "d", config: conversationalConfig, ...extra });
const conversation = (agentId: string, extra: Record<string, unknown> = {}) =>
  created("/conversations", { agent_id: agentId, channel: { type: "phone", callee_no: "+1555" }, ...extra });

/** The raw SSE text of a whole stream, and its messages as eventsource-parser reads them. */
async function rawStream(conversationId: string, headers: Record<string, string> = {}) {
  const response = await request(`${sim.url}/conversations/${conversationId}/events`, {
    headers: { authorization: `Bearer ${KEY}`, "service-version": VERSION, ...headers },
  });
  const text = await response.body.text();
  const messages: EventSourceMessage[] = [];
  const parser = createParser({ onEvent: (m) => messages.push(m) });
  parser.feed(text);
  return { response, text, messages, envelopes: messages.map((m) => JSON.parse(m.data) as Json) };
}

describe("variant profile", () => {
  it("creates answer 201 with extra body fields", async () => {
    const agent = await conversational();
    expect(agent).toMatchObject({ id: expect.stringMatching(/^ca_/), object: "conversational_agent", version: 1 });
    expect(agent.created_at).toMatch(MICROS);
    const conv = await conversation(agent.id);
    expect(conv).toMatchObject({ object: "conversation", status: "queued", channel: { token: expect.any(String) } });
  });

  it("errors are FastAPI-style {detail} with x-request-id (no request-id header)", async () => {
    const reply = await call(sim, "GET", "/conversations", { headers: { authorization: "Bearer wrong" } });
    expect(reply.status).toBe(401);
    expect(reply.body).toEqual({ detail: expect.stringMatching(/Authorization/) });
    expect(reply.headers["x-request-id"]).toMatch(/^req_/);
    expect(reply.headers["request-id"]).toBeUndefined();
  });

  it("SSE: mixed-case media type, CRLF, event: and numeric id: lines, JSON over two data: lines, a comment and retry:", async () => {
    const agent = await conversational();
    const conv = await conversation(agent.id, {
      context: { simulation: { user_turns: ["check availability please"] } },
    });
    const { response, text, messages, envelopes } = await rawStream(conv.id);
    expect(response.headers["content-type"]).toBe("Text/Event-Stream; charset=utf-8");
    expect(response.headers["x-request-id"]).toMatch(/^req_/);
    expect(text.startsWith(": stream opened\r\nretry: 3000\r\n\r\n")).toBe(true);
    expect(text.replaceAll("\r\n", "")).not.toContain("\n");
    expect(text).toMatch(/event: conversation\.started\r\nid: 1\r\ndata: \{"id":"evt_\w+_1",\r\ndata: /);
    expect(messages.map((m) => m.id)).toEqual(messages.map((_, i) => String(i + 1)));
    expect(messages.every((m) => m.event === JSON.parse(m.data).payload.type)).toBe(true);
    // An unknown event type, extra envelope fields, and the persona greeting kept.
    expect(envelopes.map((e) => e.payload.type)).toContain("agent.thinking");
    expect(envelopes[0]).toMatchObject({ object: "event", conversation_id: conv.id, sequence: 1 });
    expect(envelopes[0].created_at).toMatch(MICROS);
    const said = envelopes.filter((e) => e.payload.type === "agent.message.completed").map((e) => e.payload.text);
    expect(said[0]).toBe("Hello, this is Leo. How can I help you today?");
    // Tool-call arguments as a JSON-encoded string.
    const call0 = envelopes.find((e) => e.payload.type === "agent.tool_call.created");
    expect(call0?.payload.name).toBe("check_availability");
    expect(typeof call0?.payload.arguments).toBe("string");
    expect(JSON.parse(call0?.payload.arguments)).toEqual({ request: "check availability please" });
    // Last-Event-ID is the numeric id.
    const resumed = await rawStream(conv.id, { "last-event-id": "3" });
    expect(resumed.messages[0]?.id).toBe("4");
    expect(resumed.messages).toHaveLength(messages.length - 3);
  });

  it("statuses: conversations beyond queued, procedures through in-flight words, nullable fields as objects", async () => {
    const pa = await created("/procedural_agents", { name: "Summary", description: "d", config: {} });
    const agent = await conversational({ postprocess_agents: [pa.id] });
    const conv = await conversation(agent.id);
    const conversationStatuses = new Set<string>();
    const procedureStatuses: string[] = [];
    await waitFor(async () => {
      const item = (await ok(sim, "GET", "/conversations")).data.find((c: Json) => c.id === conv.id);
      if (item) conversationStatuses.add(item.status);
      const procedure = (await ok(sim, "GET", `/conversations/${conv.id}/procedures`)).page[0];
      if (procedure && procedureStatuses.at(-1) !== procedure.status) procedureStatuses.push(procedure.status);
      return procedure?.status === "completed";
    }, 15_000);
    expect([...conversationStatuses]).toEqual(expect.arrayContaining(["active", "completed"]));
    expect(procedureStatuses).toEqual(["pending", "accepted", "working", "completed"]);
    const item = (await ok(sim, "GET", "/conversations")).data.find((c: Json) => c.id === conv.id);
    expect(item.customer_id).toEqual({ id: expect.stringMatching(/^cus_/), phone_number: "+1555" });
    expect(item.sentiment).toMatchObject({ label: expect.any(String) });
    expect(item.completed_at).toMatch(MICROS);
  });

  it("conversations name the bare agent id that handled them, pinned to a version or not", async () => {
    const agent = await conversational();
    const released = await conversation(agent.id);
    const pinned = await conversation(`${agent.id}@v1`);
    const list: Json[] = [];
    let cursor: string | null = null;
    do {
      const body: Json = await ok(sim, "GET", `/conversations${cursor ? `?cursor=${cursor}` : ""}`);
      list.push(...body.data);
      cursor = body.cursor;
    } while (cursor);
    for (const id of [released.id, pinned.id]) {
      expect(list.find((c) => c.id === id)?.agent_id).toBe(agent.id);
    }
  });

  it("lists: pages of 2 and a trailing empty page", async () => {
    const pages: number[] = [];
    let cursor: string | null = null;
    do {
      const body: Json = await ok(sim, "GET", `/conversations${cursor ? `?cursor=${cursor}` : ""}`);
      pages.push(body.data.length);
      cursor = body.cursor;
    } while (cursor);
    expect(pages.at(-1)).toBe(0);
    expect(pages.slice(0, -1).every((n) => n === 2 || n === 1)).toBe(true);
    expect(pages.slice(0, -2).every((n) => n === 2)).toBe(true);
  });

  it("WebSocket frames carry the same envelopes (arguments as a string)", async () => {
    const agent = await conversational();
    const conv = await conversation(agent.id, { context: { simulation: { user_turns: ["check_availability"] } } });
    const session = openSession(sim, conv.id);
    await session.closed;
    const created = session.received.find((e) => e.payload.type === "agent.tool_call.created");
    expect(typeof created?.payload.arguments).toBe("string");
  });
});

describe("profiles through app.inject (no socket)", () => {
  let app: FastifyInstance;
  let box: Sim;
  beforeAll(async () => {
    const settings = resolveSettings({ apiKey: KEY, quiet: true, profile: "variant" });
    box = {
      ctx: createContext(await Store.open(undefined), settings),
      baseUrl: "http://127.0.0.1:0",
      lifetime: new AbortController(),
    };
    app = await buildApp(box);
  });
  afterAll(() => app.close());

  const inject = (method: "GET" | "POST", url: string, payload?: unknown) =>
    app.inject({
      method,
      url,
      headers: { host: "127.0.0.1", authorization: `Bearer ${KEY}`, "service-version": VERSION },
      ...(payload === undefined ? {} : { payload: payload as object }),
    });

  it("a validation error and an unknown route in the variant's shape", async () => {
    const invalid = await inject("POST", "/procedural_agents", { name: "", description: "d", config: {} });
    expect(invalid.statusCode).toBe(400);
    expect(invalid.json()).toEqual({ detail: expect.stringMatching(/^name:/) });
    expect(invalid.headers["x-request-id"]).toMatch(/^req_/);
    const missing = await inject("GET", "/agents");
    expect(missing.statusCode).toBe(404);
    expect(missing.json()).toEqual({ detail: "no such operation: GET /agents" });
  });

  it("reset swaps the context: a new one with nothing in it", async () => {
    await inject("POST", "/procedural_agents", { name: "a", description: "d", config: {} });
    const before = box.ctx;
    expect(before.store.state.agents).toHaveLength(1);
    expect((await inject("POST", "/_simulator/reset")).statusCode).toBe(200);
    expect(box.ctx).not.toBe(before);
    expect(box.ctx.store.state.agents).toHaveLength(0);
    expect(box.ctx.options.profile.name).toBe("variant");
  });
});
