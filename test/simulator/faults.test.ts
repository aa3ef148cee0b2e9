// Fault injection through /_simulator/faults.
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { type Simulator, startSimulator } from "../../src/simulator/index.ts";
import {
  call,
  createConversation,
  createConversational,
  ok,
  openSession,
  type Reply,
  readSse,
  streamHeaders,
  types,
  VERSION,
} from "./helpers.ts";

let sim: Simulator;
beforeAll(async () => {
  sim = await startSimulator({ port: 0, apiKey: "sk-faults", eventDelayMs: 1, quiet: true });
});
afterAll(() => sim?.close());
afterEach(async () => {
  await ok(sim, "POST", "/_simulator/reset");
});

const fault = (body: Record<string, unknown>) => ok(sim, "POST", "/_simulator/faults", body);

describe("faults", () => {
  it("a 429 fault: a simple retrying GET loop honours Retry-After and succeeds", async () => {
    await fault({ route: "GET /conversations", status: 429, retry_after_s: 0, count: 2 });
    const statuses: number[] = [];
    let reply: Reply;
    for (let attempt = 1; ; attempt++) {
      reply = await call(sim, "GET", "/conversations");
      statuses.push(reply.status);
      if (reply.status !== 429 || attempt === 5) break;
      expect(reply.headers["retry-after"]).toBe("0");
      expect(reply.body.error.type).toBe("rate_limited");
      await new Promise((resolve) => setTimeout(resolve, Number(reply.headers["retry-after"]) * 1000));
    }
    expect(statuses).toEqual([429, 429, 200]);
    expect(reply.body).toEqual({ data: [], cursor: null });
    expect((await ok(sim, "GET", "/_simulator/requests")).by_route["GET /conversations"]).toBe(3);
  });

  it("reset_after_handled on POST /conversational_agents: the connection dies unanswered, exactly one agent is stored", async () => {
    await fault({ route: "POST /conversational_agents", count: 1, reset_after_handled: true });
    await expect(createConversational(sim)).rejects.toThrow(/other side closed|socket|ECONNRESET/i);
    const stored = await ok(sim, "GET", "/_simulator/agents");
    expect(stored.conversational).toHaveLength(1);
    expect(stored.conversational[0].name).toBe("Booking");
    expect((await ok(sim, "GET", "/_simulator/requests")).by_route["POST /conversational_agents"]).toBe(1);
    // count: 1 — the next create is answered.
    await createConversational(sim);
    expect((await ok(sim, "GET", "/_simulator/agents")).conversational).toHaveLength(2);
  });

  it("rate selects by a counter, not at random: 0.3 affects the 4th, 7th and 10th of 10 matching requests", async () => {
    await fault({ route: "GET /procedures", rate: 0.3, status: 503 });
    const statuses: number[] = [];
    for (let i = 0; i < 10; i++) statuses.push((await call(sim, "GET", "/procedures")).status);
    expect(statuses.map((s, i) => (s === 503 ? i + 1 : 0)).filter(Boolean)).toEqual([4, 7, 10]);
    // Other routes are untouched.
    expect((await call(sim, "GET", "/conversations")).status).toBe(200);
  });

  it('"*" matches every service route; faults add up (latency of one, status of another); DELETE clears them', async () => {
    await fault({ route: "*", latency_ms: 30, count: 1 });
    const second = await fault({ route: "GET /conversations", status: 500, count: 1 });
    expect(second).toMatchObject({
      id: expect.stringMatching(/^flt_/),
      route: "GET /conversations",
      rate: 1,
      count: 1,
    });
    const started = Date.now();
    const reply = await call(sim, "GET", "/conversations");
    expect(reply.status).toBe(500);
    expect(Date.now() - started).toBeGreaterThanOrEqual(25);
    expect(reply.body.error.message).toContain(second.id);
    expect(reply.headers["request-id"]).toBe(reply.body.error.request_id);
    const listed = await ok(sim, "GET", "/_simulator/faults");
    expect(listed.faults.map((f: { affected: number }) => f.affected)).toEqual([1, 1]);

    await fault({ route: "*", status: 503 });
    expect((await call(sim, "POST", "/procedural_agents", { body: {} })).status).toBe(503);
    // The simulator's own routes are never faulted.
    expect((await call(sim, "GET", "/_simulator/info")).status).toBe(200);
    await ok(sim, "DELETE", "/_simulator/faults");
    expect((await call(sim, "GET", "/procedures")).status).toBe(200);
  });

  it("drop_stream_after_events closes the stream after N events; a resume with Last-Event-ID gets the rest", async () => {
    const ca = await createConversational(sim);
    const created = await createConversation(sim, ca.id);
    await fault({ route: "GET /conversations/{conversation_id}/events", drop_stream_after_events: 3, count: 1 });
    const url = created.channel.events_url;
    const first = await readSse(url, streamHeaders(sim, "key"));
    expect(first.error).toBeDefined();
    const got = first.events;
    expect(got).toHaveLength(3);
    const rest = await readSse(url, { ...streamHeaders(sim, "key"), "last-event-id": got.at(-1)?.id as string });
    expect(rest.error).toBeUndefined();
    expect(types(rest.events).at(-1)).toBe("conversation.ended");
    expect([...got, ...rest.events].map((e) => Number(e.id.split("_").at(-1)))).toEqual(
      [...got, ...rest.events].map((_, i) => i + 1),
    );
  });

  it("stall_stream_after_events keeps the stream open and silent after N events", async () => {
    const ca = await createConversational(sim);
    const created = await createConversation(sim, ca.id);
    await fault({ route: "GET /conversations/{conversation_id}/events", stall_stream_after_events: 2 });
    const controller = new AbortController();
    const reading = readSse(
      created.channel.events_url,
      { authorization: `Bearer ${sim.apiKey}`, "service-version": VERSION },
      { signal: controller.signal },
    );
    // Wait until the conversation has ended on the service, then give the stream a moment more.
    for (;;) {
      const list = await ok(sim, "GET", "/conversations");
      if (list.data[0]?.status === "completed") break;
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
    controller.abort();
    const result = await reading;
    expect(result.events).toHaveLength(2);
  });

  it("a status fault on the session route refuses the upgrade with that status", async () => {
    const ca = await createConversational(sim);
    const created = await createConversation(sim, ca.id);
    await fault({ route: "WS /conversations/{conversation_id}/session", status: 503, count: 1 });
    const refused = openSession(sim, created.id);
    await expect(refused.opened).rejects.toThrow();
    const accepted = openSession(sim, created.id);
    await accepted.opened;
    await accepted.closed;
    expect(types(accepted.received).at(-1)).toBe("conversation.ended");
  });

  it("validates fault bodies", async () => {
    for (const body of [
      {},
      { route: "GET /conversations", rate: 2 },
      { route: "*", status: 200 },
      { route: "*", colour: 1 },
    ]) {
      expect((await call(sim, "POST", "/_simulator/faults", { body })).status).toBe(400);
    }
  });
});
