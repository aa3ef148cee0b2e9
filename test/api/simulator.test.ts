// The client against the simulator over HTTP: every operation, paging across 3+ pages with each
// filter, error classes, retries that never duplicate, SSE reconnect, token-only access, WebSocket.
import { afterAll, beforeAll, beforeEach, describe, expect, test } from "vitest";
import {
  type ApiError,
  AuthenticationError,
  type Client,
  ConnectionError,
  createClient,
  InvalidRequestError,
  NotFoundError,
  RateLimitError,
  ServerError,
  TimeoutError,
  type Transcript,
  TranscriptBuilder,
} from "../../src/api/index.ts";
import type { EventEnvelope } from "../../src/contract/index.ts";
import { SIMULATOR_SHAPES } from "../helpers/caller.ts";
import { requestCounts, simulatorCall, startTestSimulator, storedAgents, testProfile } from "../helpers/simulator.ts";

type Sim = Awaited<ReturnType<typeof startTestSimulator>>;
let sim: Sim;
let client: Client;

const PAGE_SIZE = 2;
const channel = { type: "phone" as const, callee_no: "+15550100" };

beforeAll(async () => {
  sim = await startTestSimulator({ port: 0, eventDelayMs: 5, pageSize: PAGE_SIZE, quiet: true });
  client = createClient({ baseUrl: sim.url, apiKey: sim.apiKey, retryBaseDelayMs: 1 });
});
afterAll(async () => {
  await client?.close();
  await sim?.close();
});
beforeEach(async () => {
  await simulatorCall(sim, "DELETE", "/_simulator/faults");
});

const fault = (body: Record<string, unknown>) => simulatorCall(sim, "POST", "/_simulator/faults", body);

async function drain(iterable: AsyncIterable<EventEnvelope>): Promise<EventEnvelope[]> {
  const out: EventEnvelope[] = [];
  for await (const e of iterable) out.push(e);
  return out;
}

function transcriptOf(events: EventEnvelope[]): Transcript {
  const builder = new TranscriptBuilder();
  for (const event of events) builder.add(event);
  return builder.transcript;
}

async function procedural(name: string) {
  return client.proceduralAgents.create({
    name,
    description: "summarises",
    config: {
      filter_statuses: ["completed"],
      runtime: { model: "openai/gpt-4o", reasoning_effort: "medium", prompt: { text: "Summarise.", type: "fixed" } },
      output: { output_schema: { type: "object", properties: { summary: { type: "string" } } } },
    },
  });
}

async function conversational(name: string, postprocess: string[] = []) {
  return client.conversationalAgents.create({
    name,
    description: "answers the phone",
    config: {
      personas: [{ name: "Ada", voice: { id: "female-1", provider: "service" } }],
      runtime: { model: "openai/gpt-4o", prompt: { text: "Be helpful.", type: "fixed" } },
      tool: { tools: [{ ns: "syscall", name: "lookup_account" }] },
    },
    ...(postprocess.length ? { postprocess_agents: postprocess } : {}),
  });
}

async function until<T>(what: string, probe: () => Promise<T | undefined>): Promise<T> {
  for (let i = 0; i < 400; i++) {
    const value = await probe();
    if (value !== undefined) return value;
    await new Promise((r) => setTimeout(r, 25));
  }
  throw new Error(`timed out waiting for ${what}`);
}

describe("every operation", () => {
  test("create agents and a conversation, follow its events, list its procedures", async () => {
    const pa = await procedural("summary");
    expect(pa.id).toMatch(/^pa_/);
    expect(pa.version_id).toBe(`${pa.id}@v1`);
    const ca = await conversational("support", [pa.id]);
    expect(ca.version_id).toBe(`${ca.id}@v1`);

    const conv = await client.conversations.create({
      agent_id: ca.version_id,
      channel,
      livemode: false,
      context: { simulation: { user_turns: ["Please lookup account 42", "That's all, thank you."] } },
    });
    expect(conv.id).toMatch(/^conv_/);
    expect(conv.channel).toMatchObject({ type: "phone", callee_no: "+15550100" });
    expect(typeof conv.channel.token).toBe("string");
    expect(conv.channel.events_url).toContain(`/conversations/${conv.id}/events`);

    const events = await drain(client.conversations.events(conv.id));
    expect(events.at(-1)?.payload.type).toBe("conversation.ended");
    expect(new Set(events.map((e) => e.id)).size).toBe(events.length);
    const t = transcriptOf(events);
    expect(t.messages[0]).toMatchObject({ text: "Hello, this is Ada. How can I help you today?", complete: true });
    expect(t.userMessages).toEqual(["Please lookup account 42", "That's all, thank you."]);
    expect(t.toolCalls).toEqual([
      expect.objectContaining({ name: "lookup_account", returned: true, result: { ok: true, tool: "lookup_account" } }),
    ]);
    expect(t.messages.map((m) => m.text)).toContain("I have used lookup_account for you.");
    expect(t.messages.at(-1)?.text).toBe("Thank you for calling. Goodbye!");
    expect(t.ended).toBe(true);

    const procedures = await until("the procedure to complete", async () => {
      const items = await client.conversations.procedures(conv.id).toArray();
      return items.length > 0 && items.every((p) => p.status === "completed") ? items : undefined;
    });
    expect(procedures).toEqual([
      expect.objectContaining({ name: "summary", agent_id: pa.id, conversation_id: conv.id }),
    ]);
    expect(procedures[0]).not.toHaveProperty("livemode");

    const listed = await client.procedures.list({ conversation_id: conv.id }).toArray();
    expect(listed).toEqual([expect.objectContaining({ id: procedures[0]?.id, livemode: false })]);

    const conversations = await client.conversations.list().toArray();
    expect(conversations.find((c) => c.id === conv.id)).toMatchObject({
      status: "completed",
      agent_id: expect.stringMatching(new RegExp(`^${ca.id}(@v1)?$`)),
    });
  });

  test("feedbacks list with the top-level reasons", async () => {
    const ca = await conversational("feedback-target");
    const conv = await client.conversations.create({ agent_id: ca.id, channel });
    for (const rating of ["good", "bad", "good"]) {
      await simulatorCall(sim, "POST", "/_simulator/feedbacks", {
        conversation_id: conv.id,
        rating,
        reasons: ["tone"],
        comment: `it was ${rating}`,
      });
    }
    const list = client.feedbacks.list({ service_id: sim.serviceId });
    const items = await list.toArray();
    expect(items.filter((f) => f.conversation_id === conv.id).map((f) => f.rating)).toEqual(
      expect.arrayContaining(["good", "bad", "good"]),
    );
    for await (const page of list.pages()) {
      expect(page.body).toHaveProperty("reasons");
      break;
    }
  });
});

describe("paging across 3+ pages with each filter", () => {
  let agentId = "";
  let pa = "";
  let start = "";
  let conversationIds: string[] = [];

  beforeAll(async () => {
    await new Promise((r) => setTimeout(r, 5));
    start = new Date().toISOString();
    pa = (await procedural("pager-summary")).id;
    agentId = (await conversational("pager", [pa])).id;
    conversationIds = [];
    for (let i = 0; i < 7; i++) {
      const conv = await client.conversations.create({ agent_id: agentId, channel, livemode: false });
      conversationIds.push(conv.id);
    }
    await until("every conversation to complete and its procedure to exist", async () => {
      const all = await client.procedures.list({ agent_id: pa }).toArray();
      return all.length === 7 ? all : undefined;
    });
  });

  const pageCount = async (list: { pages(): AsyncIterable<{ items: unknown[] }> }) => {
    let n = 0;
    let items = 0;
    for await (const page of list.pages()) {
      n++;
      items += page.items.length;
      expect(page.items.length).toBeLessThanOrEqual(PAGE_SIZE);
    }
    return { pages: n, items };
  };

  test("conversations: created_at_gte / _lt, completed_at_gte / _lt", async () => {
    const gte = await client.conversations.list({ created_at_gte: start }).toArray();
    expect(gte.map((c) => c.id).sort()).toEqual([...conversationIds].sort());
    expect((await pageCount(client.conversations.list({ created_at_gte: start }))).pages).toBeGreaterThanOrEqual(3);

    const future = new Date(Date.now() + 3_600_000).toISOString();
    const lt = await client.conversations.list({ created_at_lt: future }).toArray();
    expect(lt.map((c) => c.id)).toEqual(expect.arrayContaining(conversationIds));
    expect((await pageCount(client.conversations.list({ created_at_lt: future }))).pages).toBeGreaterThanOrEqual(3);
    expect(await client.conversations.list({ created_at_lt: start, created_at_gte: start }).toArray()).toEqual([]);

    const completed = client.conversations.list({ completed_at_gte: start, completed_at_lt: future });
    const done = await completed.toArray();
    expect(done.map((c) => c.id)).toEqual(expect.arrayContaining(conversationIds));
    expect(done.every((c) => c.completed_at && c.completed_at >= start)).toBe(true);
    expect((await pageCount(completed)).pages).toBeGreaterThanOrEqual(3);
    expect(await client.conversations.list({ completed_at_lt: start, created_at_gte: start }).toArray()).toEqual([]);
  });

  // 7 items in pages of PAGE_SIZE (2): 4 pages; the variant profile ends a list with an empty page.
  const sevenItems = { pages: testProfile() === "variant" ? 5 : 4, items: 7 };

  test("procedures: agent_id, conversation_id, created_at_gte / _lt", async () => {
    const byAgent = client.procedures.list({ agent_id: pa });
    expect(await pageCount(byAgent)).toEqual(sevenItems);
    const byTime = await client.procedures.list({ agent_id: pa, created_at_gte: start }).toArray();
    expect(byTime).toHaveLength(7);
    expect(await client.procedures.list({ agent_id: pa, created_at_lt: start }).toArray()).toEqual([]);
    const one = await client.procedures.list({ conversation_id: conversationIds[3] }).toArray();
    expect(one).toEqual([expect.objectContaining({ conversation_id: conversationIds[3], agent_id: pa })]);
  });

  test("feedbacks: service_id, created_at_gte / _lt", async () => {
    const before = new Date().toISOString();
    await new Promise((r) => setTimeout(r, 5));
    for (const id of conversationIds) {
      await simulatorCall(sim, "POST", "/_simulator/feedbacks", {
        conversation_id: id,
        rating: "good",
        reasons: [],
        comment: "",
      });
    }
    const list = client.feedbacks.list({ service_id: sim.serviceId, created_at_gte: before });
    expect(await pageCount(list)).toEqual(sevenItems);
    expect(
      await client.feedbacks
        .list({ service_id: sim.serviceId, created_at_lt: before, created_at_gte: before })
        .toArray(),
    ).toEqual([]);
    expect(await client.feedbacks.list({ service_id: "svc_other" }).toArray()).toEqual([]);
  });
});

describe("error classes", () => {
  test("400: postprocess_agents naming an unknown procedural agent", async () => {
    const error = await conversational("bad-link", ["pa_doesnotexist"]).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(InvalidRequestError);
    expect(error).toMatchObject({ status: 400, method: "POST", path: "/conversational_agents" });
    expect((error as ApiError).requestId).toBeTruthy();
  });

  test("401: a wrong key, never shown", async () => {
    const wrong = createClient({ baseUrl: sim.url, apiKey: "sk_wrong_key_value" });
    const error = (await wrong.conversations
      .list()
      .toArray()
      .catch((e: unknown) => e)) as ApiError;
    expect(error).toBeInstanceOf(AuthenticationError);
    expect(error.status).toBe(401);
    expect(`${error.message} ${JSON.stringify(error.body)}`).not.toContain("sk_wrong_key_value");
    await wrong.close();
  });

  test("403: the stream token of another conversation", async () => {
    const ca = await conversational("tokens");
    const a = await client.conversations.create({ agent_id: ca.id, channel });
    const b = await client.conversations.create({ agent_id: ca.id, channel });
    const tokenOnly = createClient({ baseUrl: sim.url });
    const error = (await drain(
      tokenOnly.conversations.events(b.id, { token: a.channel.token, eventsUrl: b.channel.events_url }),
    ).catch((e: unknown) => e)) as ApiError;
    expect(error).toBeInstanceOf(AuthenticationError);
    expect(error.status).toBe(403);
    expect(error.message).not.toContain(a.channel.token);
    await tokenOnly.close();
  });

  test("404: a conversation for an unknown agent version", async () => {
    const ca = await conversational("versions");
    const error = await client.conversations.create({ agent_id: `${ca.id}@v9`, channel }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(NotFoundError);
    expect(error).toMatchObject({ status: 404, path: "/conversations" });
  });

  test("429: a GET is retried and succeeds; when it persists, the error counts the attempts", async () => {
    const before = (await requestCounts(sim)).by_route["GET /conversations"] ?? 0;
    await fault({ route: "GET /conversations", status: 429, retry_after_s: 0, count: 1 });
    await client.conversations.list().toArray();
    const after = (await requestCounts(sim)).by_route["GET /conversations"] ?? 0;
    expect(after - before).toBeGreaterThanOrEqual(2);

    await fault({ route: "GET /conversations", status: 429, retry_after_s: 0 });
    const limited = createClient({ baseUrl: sim.url, apiKey: sim.apiKey, maxRetries: 2, retryBaseDelayMs: 1 });
    const error = (await limited.conversations
      .list()
      .toArray()
      .catch((e: unknown) => e)) as ApiError;
    expect(error).toBeInstanceOf(RateLimitError);
    expect(error.attempts).toBe(3);
    expect(error.message).toMatch(/\(.*3 attempts\)$/);
    await limited.close();
  });

  test("5xx: a GET retries through a 503; a POST gets a ServerError at once", async () => {
    await fault({ route: "GET /procedures", status: 503, count: 2 });
    await expect(client.procedures.list().toArray()).resolves.toBeInstanceOf(Array);
    await fault({ route: "POST /procedural_agents", status: 500, count: 1 });
    const before = (await storedAgents(sim)).procedural.length;
    const error = await procedural("five-hundred").catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ServerError);
    expect((error as ApiError).attempts).toBe(1);
    expect((await storedAgents(sim)).procedural.length).toBe(before);
  });
});

test("a POST reset after it was handled is not retried: exactly one agent is stored", async () => {
  await fault({ route: "POST /conversational_agents", reset_after_handled: true, count: 1 });
  const error = (await conversational("reset-once").catch((e: unknown) => e)) as ConnectionError;
  expect(error).toBeInstanceOf(ConnectionError);
  expect(error.requestSent).toBe(true);
  expect(error.attempts).toBe(1);
  const stored = (await storedAgents(sim)).conversational.filter((a) => JSON.stringify(a).includes("reset-once"));
  expect(stored).toHaveLength(1);
});

describe("event stream", () => {
  test("reconnects with Last-Event-ID after a dropped stream, with no duplicate events", async () => {
    const ca = await conversational("dropper");
    const conv = await client.conversations.create({ agent_id: ca.id, channel });
    const route = "GET /conversations/{conversation_id}/events";
    const before = (await requestCounts(sim)).by_route[route] ?? 0;
    await fault({ route, drop_stream_after_events: 3, count: 2 });
    const events = await drain(client.conversations.events(conv.id, { reconnectDelayMs: 10 }));
    const ids = events.map((e) => e.id);
    expect(new Set(ids).size).toBe(ids.length);
    expect(events[0]?.payload.type).toBe("conversation.started");
    expect(events.at(-1)?.payload.type).toBe("conversation.ended");
    // The same events as an undisturbed late subscriber sees.
    const replay = await drain(client.conversations.events(conv.id));
    expect(ids).toEqual(replay.map((e) => e.id));
    expect(((await requestCounts(sim)).by_route[route] ?? 0) - before).toBe(4);
  });

  test("resumes after lastEventId", async () => {
    const ca = await conversational("resumer");
    const conv = await client.conversations.create({ agent_id: ca.id, channel });
    const all = await drain(client.conversations.events(conv.id));
    const rest = await drain(client.conversations.events(conv.id, { lastEventId: all[2]?.id }));
    expect(rest.map((e) => e.id)).toEqual(all.slice(3).map((e) => e.id));
  });

  test("token-only access: no API key in the client", async () => {
    const ca = await conversational("token-only");
    const conv = await client.conversations.create({ agent_id: ca.id, channel });
    const tokenOnly = createClient({ baseUrl: "http://127.0.0.1:9" });
    const events = await drain(
      tokenOnly.conversations.events(conv.id, { token: conv.channel.token, eventsUrl: conv.channel.events_url }),
    );
    expect(events.at(-1)?.payload.type).toBe("conversation.ended");
    expect(() => tokenOnly.conversations.events(conv.id)).toThrow(/no API key/);
    await tokenOnly.close();
  });

  test("a stalled stream ends with a TimeoutError", async () => {
    const ca = await conversational("staller");
    const conv = await client.conversations.create({ agent_id: ca.id, channel });
    await fault({ route: "GET /conversations/{conversation_id}/events", stall_stream_after_events: 2 });
    const seen: string[] = [];
    const error = await (async () => {
      for await (const e of client.conversations.events(conv.id, { idleTimeoutMs: 300 })) seen.push(e.id);
    })().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(TimeoutError);
    expect(seen).toHaveLength(2);
  });
});

describe("WebSocket session", () => {
  test("a control message is acted on as a user turn; an unknown one gets server.error; end closes", async () => {
    const ca = await conversational("ws-agent");
    const conv = await client.conversations.create({
      agent_id: ca.id,
      channel,
      context: { simulation: { user_turns: [], wait_for_user: true } },
    });
    const session = await client.conversations.session(conv.id);
    const builder = new TranscriptBuilder();
    let sentTurn = false;
    let sentUnknown = false;
    let sentEnd = false;
    for await (const envelope of session) {
      builder.add(envelope);
      const transcript = builder.transcript;
      const greeted = transcript.messages[0]?.complete;
      if (greeted && !sentTurn) {
        sentTurn = true;
        session.send(SIMULATOR_SHAPES[testProfile()].message("Where is my parcel?"));
      }
      if (
        transcript.messages.some((m) => m.complete && m.text === "I understand: Where is my parcel?") &&
        !sentUnknown
      ) {
        sentUnknown = true;
        session.send({ type: "dance" });
      }
      if (transcript.errors.length > 0 && !sentEnd) {
        sentEnd = true;
        session.send(SIMULATOR_SHAPES[testProfile()].end);
      }
    }
    const transcript = builder.transcript;
    expect(transcript.userMessages).toContain("Where is my parcel?");
    expect(transcript.errors).toHaveLength(1);
    expect(transcript.ended).toBe(true);
  });

  test("token-only session", async () => {
    const ca = await conversational("ws-token");
    const conv = await client.conversations.create({ agent_id: ca.id, channel });
    const tokenOnly = createClient({ baseUrl: sim.url });
    const session = await tokenOnly.conversations.session(conv.id, { token: conv.channel.token });
    const events = await drain(session);
    expect(events.at(-1)?.payload.type).toBe("conversation.ended");
    await tokenOnly.close();
  });

  test("a session with a wrong key is refused like any request: AuthenticationError with status and request id", async () => {
    const wrong = createClient({ baseUrl: sim.url, apiKey: "sk_nope_nope" });
    const error = (await wrong.conversations.session("conv_missing").catch((e: unknown) => e)) as ApiError;
    expect(error).toBeInstanceOf(AuthenticationError);
    expect(error).toMatchObject({ status: 401, method: "WS", path: "/conversations/conv_missing/session" });
    expect(error.requestId).toMatch(/\S/);
    expect(error.message).toContain(`request id ${error.requestId}`);
    expect(error.message).not.toContain("sk_nope_nope");
    await wrong.close();
  });
});
