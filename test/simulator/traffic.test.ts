// Seeded traffic (POST /_simulator/traffic): conversations placed through POST /conversations' own
// code, with exact outcome, duration, sentiment and feedback mixes, dated in the past on request.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Simulator, startSimulator } from "../../src/simulator/index.ts";
import { spread } from "../../src/simulator/routes/traffic.ts";
import { call, createConversational, createProcedural, type Json, ok } from "./helpers.ts";

describe("spread", () => {
  it("gives each value exactly round(n·share) slots, spread through the batch", () => {
    const slots = spread(200, { failed: 0.05 });
    expect(slots.filter((s) => s === "failed")).toHaveLength(10);
    // Spread: no two failures in the first 20 slots.
    expect(slots.slice(0, 20).filter(Boolean).length).toBeLessThanOrEqual(1);
    const mixed = spread(7, { a: 0.5, b: 0.5 });
    expect(mixed).toHaveLength(7);
    expect(mixed.filter((s) => s === undefined)).toHaveLength(0);
    expect(mixed.filter((s) => s === "a").length + mixed.filter((s) => s === "b").length).toBe(7);
    expect(spread(10, {})).toEqual(Array(10).fill(undefined));
  });

  it("refuses shares that add up to more than 1", () => {
    expect(() => spread(10, { a: 0.6, b: 0.6 })).toThrow(/more than 1/);
  });
});

describe("POST /_simulator/traffic", () => {
  let sim: Simulator;
  beforeAll(async () => {
    sim = await startSimulator({ port: 0, apiKey: "sk-traffic-test", eventDelayMs: 1, quiet: true });
  });
  afterAll(async () => sim?.close());

  it("places the batch with the mixes asked for, through the service's own paths", async () => {
    const summary = await createProcedural(sim, { filter_statuses: ["completed", "failed"] });
    const agent = await createConversational(sim, { postprocess_agents: [summary.id] });
    const seeded = await ok(sim, "POST", "/_simulator/traffic", {
      agent_id: agent.version_id,
      count: 40,
      failure_rate: 0.25,
      procedure_failure_rate: 0.1,
      duration_sec: [30, 60, 90, 120],
      sentiment: { negative: 0.25, positive: 0.5 },
      feedback: { negative: 0.1, positive: 0.2 },
      feedback_reasons: ["slow"],
    });
    expect(seeded).toMatchObject({ placed: 40, failed: 10, feedbacks: 12, ended: 40 });
    const { data } = await ok(sim, "GET", "/conversations?created_at_gte=2000-01-01T00:00:00Z");
    expect(data.length).toBeGreaterThan(0);
    const all: Json[] = [];
    let cursor: string | null = null;
    do {
      const page: Json = await ok(sim, "GET", `/conversations${cursor ? `?cursor=${cursor}` : ""}`);
      all.push(...page.data);
      cursor = page.cursor;
    } while (cursor);
    const mine = all.filter((c) => c.agent_id === agent.version_id);
    expect(mine).toHaveLength(40);
    expect(mine.filter((c) => c.status === "failed")).toHaveLength(10);
    expect(mine.filter((c) => c.failure_reason !== null)).toHaveLength(10);
    expect(mine.every((c) => c.livemode === true)).toBe(true);
    expect(mine.map((c) => c.duration_sec).sort((a, b) => a - b)).toEqual([
      ...Array(10).fill(30),
      ...Array(10).fill(60),
      ...Array(10).fill(90),
      ...Array(10).fill(120),
    ]);
    expect(mine.filter((c) => c.sentiment === "negative")).toHaveLength(10);
    expect(mine.filter((c) => c.sentiment === "positive")).toHaveLength(20);
    // Requests counted: the seeded conversations did not come in over HTTP.
    const counts = await ok(sim, "GET", "/_simulator/requests");
    expect(counts.by_route["POST /conversations"]).toBeUndefined();
    const procedures: Json = await ok(sim, "GET", `/procedures?agent_id=${summary.id}`);
    expect(procedures.page.length).toBeGreaterThan(0);
    const info = await ok(sim, "GET", "/_simulator/info");
    const feedbacks = await ok(sim, "GET", `/feedbacks?service_id=${info.service_id}`);
    expect(feedbacks.data).toHaveLength(12);
    expect(feedbacks.data.filter((f: Json) => f.rating === "negative")).toHaveLength(4);
    expect(feedbacks.reasons).toEqual({ slow: 12 });
  });

  it("dates a batch in the past, spread over a span, and keeps every timestamp on its clock", async () => {
    const agent = await createConversational(sim);
    const before = Date.now();
    await ok(sim, "POST", "/_simulator/traffic", {
      agent_id: agent.version_id,
      count: 5,
      ago_s: 7200,
      spread_s: 3600,
      livemode: false,
    });
    const lt = new Date(before - 3600_000).toISOString();
    const page: Json = await ok(sim, "GET", `/conversations?created_at_lt=${lt}`);
    const mine = page.data.filter((c: Json) => c.agent_id === agent.version_id);
    expect(mine).toHaveLength(5);
    const created = mine.map((c: Json) => Date.parse(c.created_at)).sort();
    expect(created[0]).toBeLessThanOrEqual(before - 3 * 3600_000 + 1000);
    expect(created[4]).toBeGreaterThanOrEqual(before - 2 * 3600_000 - 1000);
    for (const c of mine) {
      expect(c.livemode).toBe(false);
      expect(Date.parse(c.completed_at)).toBeLessThan(before - 3600_000);
    }
  });

  it("answers 404 for an unknown version and 400 for a bad mix, placing nothing", async () => {
    const unknown = await call(sim, "POST", "/_simulator/traffic", { body: { agent_id: "ca_nope@v1", count: 3 } });
    expect(unknown.status).toBe(404);
    const agent = await createConversational(sim);
    const bad = await call(sim, "POST", "/_simulator/traffic", {
      body: { agent_id: agent.version_id, count: 3, feedback: { a: 0.7, b: 0.7 } },
    });
    expect(bad.status).toBe(400);
    const typo = await call(sim, "POST", "/_simulator/traffic", {
      body: { agent_id: agent.version_id, count: 3, failure: 0.1 },
    });
    expect(typo.status).toBe(400);
    expect(JSON.stringify(typo.body)).toContain("failure");
    const page: Json = await ok(sim, "GET", "/conversations");
    expect(page.data.filter((c: Json) => c.agent_id === agent.version_id)).toHaveLength(0);
  });

  it("needs the key", async () => {
    const reply = await call(sim, "POST", "/_simulator/traffic", {
      body: { agent_id: "x", count: 1 },
      headers: { authorization: "Bearer wrong" },
    });
    expect(reply.status).toBe(401);
  });
});
