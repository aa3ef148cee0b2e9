// Paging: opaque cursors across 3+ pages with each filter of each list, cursor null on the last
// page, 400 on malformed dates and cursors. Page size 2 so that small data sets span many pages.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Simulator, startSimulator } from "../../src/simulator/index.ts";
import { allEvents, call, createConversation, createConversational, createProcedural, ok, waitFor } from "./helpers.ts";

const PAGE = 2;
let sim: Simulator;
let midpoint: string;
const batchA: string[] = [];
const batchB: string[] = [];
const proceduralIds: string[] = [];

type Item = { id: string; [key: string]: unknown };

/** Follows cursors from `path`; returns every page's items. */
async function pages(path: string, field: "data" | "page"): Promise<Item[][]> {
  const out: Item[][] = [];
  let cursor: string | null = null;
  for (let guard = 0; guard < 100; guard++) {
    const separator = path.includes("?") ? "&" : "?";
    const url: string = cursor === null ? path : `${path}${separator}cursor=${encodeURIComponent(cursor)}`;
    const body: Record<string, unknown> = await ok(sim, "GET", url);
    const items = body[field] as Item[];
    expect(items.length).toBeLessThanOrEqual(PAGE);
    out.push(items);
    cursor = body.cursor as string | null;
    if (cursor === null) return out;
    expect(items.length).toBe(PAGE);
  }
  throw new Error("runaway paging");
}

function expectPaged(result: Item[][], expected: string[], minPages = 3) {
  expect(result.length).toBeGreaterThanOrEqual(minPages);
  const ids = result.flat().map((item) => item.id);
  expect(new Set(ids).size).toBe(ids.length);
  expect([...ids].sort()).toEqual([...expected].sort());
}

async function batch(ca: string, into: string[]) {
  for (let i = 0; i < 5; i++) into.push((await createConversation(sim, ca)).id);
  for (const id of into) await allEvents(sim, id);
  // Every procedure of the batch completed before going on.
  await waitFor(async () => {
    const all = (await pages("/procedures", "page")).flat();
    return all.length === 25 * (into === batchA ? 1 : 2) && all.every((p) => p.status === "completed");
  });
}

beforeAll(async () => {
  sim = await startSimulator({ port: 0, apiKey: "sk-paging", eventDelayMs: 1, pageSize: PAGE, quiet: true });
  for (let i = 0; i < 5; i++) proceduralIds.push((await createProcedural(sim, {}, `Step ${i}`)).id);
  const ca = await createConversational(sim, { postprocess_agents: proceduralIds });
  await batch(ca.id, batchA);
  await new Promise((resolve) => setTimeout(resolve, 5));
  midpoint = new Date().toISOString();
  await new Promise((resolve) => setTimeout(resolve, 5));
  await batch(ca.id, batchB);
  for (let day = 1; day <= 12; day++) {
    await ok(sim, "POST", "/_simulator/feedbacks", {
      id: `fb_${day}`,
      conversation_id: batchA[day % 5],
      rating: day % 2 ? "good" : "bad",
      created_at: `2025-03-${String(day).padStart(2, "0")}T12:00:00Z`,
      reasons: day % 3 ? [] : ["too_slow"],
    });
  }
});
afterAll(() => sim?.close());

describe("GET /conversations", () => {
  it("pages every conversation, newest first, cursor null on the last page", async () => {
    const result = await pages("/conversations", "data");
    expectPaged(result, [...batchA, ...batchB]);
    expect(result.flat()[0]?.id).toBe(batchB.at(-1));
  });

  it("created_at_gte / created_at_lt", async () => {
    const at = encodeURIComponent(midpoint);
    expectPaged(await pages(`/conversations?created_at_gte=${at}`, "data"), batchB);
    expectPaged(await pages(`/conversations?created_at_lt=${at}`, "data"), batchA);
  });

  it("completed_at_gte / completed_at_lt", async () => {
    const at = encodeURIComponent(midpoint);
    expectPaged(await pages(`/conversations?completed_at_gte=${at}`, "data"), batchB);
    expectPaged(await pages(`/conversations?completed_at_lt=${at}`, "data"), batchA);
  });

  it("400 naming the parameter for a malformed date-time or an unknown parameter", async () => {
    for (const [query, field] of [
      ["created_at_gte=yesterday", "created_at_gte"],
      ["completed_at_lt=2025-13-45T00:00:00Z", "completed_at_lt"],
      ["limit=5", "limit"],
    ]) {
      const reply = await call(sim, "GET", `/conversations?${query}`);
      expect(reply.status).toBe(400);
      expect(reply.body.error.field).toBe(field);
    }
  });

  it("400 for a forged cursor or a cursor used with other filters; a cursor alone keeps its filters", async () => {
    expect((await call(sim, "GET", "/conversations?cursor=not-a-cursor")).status).toBe(400);
    const at = encodeURIComponent(midpoint);
    const first = await ok(sim, "GET", `/conversations?created_at_gte=${at}`);
    const other = await call(sim, "GET", `/conversations?created_at_lt=${at}&cursor=${first.cursor}`);
    expect(other.status).toBe(400);
    expect(other.body.error.field).toBe("cursor");
    const alone = await ok(sim, "GET", `/conversations?cursor=${first.cursor}`);
    for (const item of alone.data) expect(batchB).toContain(item.id);
  });
});

describe("GET /procedures and GET /conversations/{id}/procedures", () => {
  const procedureIds = async (filter: (p: Item) => boolean) => {
    const all = (await pages("/procedures", "page")).flat();
    return all.filter(filter).map((p) => p.id);
  };

  it("agent_id, conversation_id, created_at_gte, created_at_lt", async () => {
    const agent = proceduralIds[2] as string;
    expectPaged(await pages(`/procedures?agent_id=${agent}`, "page"), await procedureIds((p) => p.agent_id === agent));
    const conversation = batchB[1] as string;
    expectPaged(
      await pages(`/procedures?conversation_id=${conversation}`, "page"),
      await procedureIds((p) => p.conversation_id === conversation),
    );
    const at = encodeURIComponent(midpoint);
    const after = await procedureIds((p) => batchB.includes(p.conversation_id as string));
    expect(after).toHaveLength(25);
    expectPaged(await pages(`/procedures?created_at_gte=${at}`, "page"), after);
    expectPaged(
      await pages(`/procedures?created_at_lt=${at}`, "page"),
      await procedureIds((p) => batchA.includes(p.conversation_id as string)),
    );
    expectPaged(
      await pages(`/procedures?agent_id=${agent}&created_at_gte=${at}`, "page"),
      await procedureIds((p) => p.agent_id === agent && batchB.includes(p.conversation_id as string)),
    );
    expect((await call(sim, "GET", "/procedures?created_at_lt=soon")).status).toBe(400);
  });

  it("the conversation-scoped list pages that conversation's procedures, without livemode", async () => {
    const conversation = batchA[0] as string;
    const result = await pages(`/conversations/${conversation}/procedures`, "page");
    expectPaged(result, await procedureIds((p) => p.conversation_id === conversation));
    for (const item of result.flat()) expect(item).not.toHaveProperty("livemode");
    // A cursor from another conversation's list is refused.
    const first = await ok(sim, "GET", `/conversations/${conversation}/procedures`);
    const reply = await call(sim, "GET", `/conversations/${batchA[1]}/procedures?cursor=${first.cursor}`);
    expect(reply.status).toBe(400);
  });
});

describe("GET /feedbacks", () => {
  it("service_id, created_at_gte, created_at_lt, with reasons over the filtered list", async () => {
    const base = `/feedbacks?service_id=${sim.serviceId}`;
    const days = (from: number, to: number) => Array.from({ length: to - from + 1 }, (_, i) => `fb_${from + i}`);
    expectPaged(await pages(base, "data"), days(1, 12));
    expectPaged(await pages(`${base}&created_at_gte=2025-03-06T00:00:00Z`, "data"), days(6, 12));
    expectPaged(await pages(`${base}&created_at_lt=2025-03-06T00:00:00Z`, "data"), days(1, 5));
    const first = await ok(sim, "GET", `${base}&created_at_lt=2025-03-06T00:00:00Z`);
    expect(first.reasons).toEqual({ too_slow: 1 });
    expect((await ok(sim, "GET", base)).reasons).toEqual({ too_slow: 4 });
    const bad = await call(sim, "GET", `${base}&created_at_gte=someday`);
    expect(bad.status).toBe(400);
    expect(bad.body.error.field).toBe("created_at_gte");
  });
});

// Last: it adds a conversation (and its procedures) to the data set the tests above count on.
describe("paging while items are created", () => {
  it("items created while paging neither repeat nor shift the pages", async () => {
    const first = await ok(sim, "GET", "/conversations");
    const ca = (await ok(sim, "GET", "/_simulator/agents")).conversational[0].id;
    const extra = await createConversation(sim, ca, { context: { simulation: { user_turns: [] } } });
    const ids: string[] = first.data.map((c: Item) => c.id);
    let cursor: string | null = first.cursor;
    while (cursor !== null) {
      const next: { data: Item[]; cursor: string | null } = await ok(sim, "GET", `/conversations?cursor=${cursor}`);
      ids.push(...next.data.map((c) => c.id));
      cursor = next.cursor;
    }
    expect(ids).not.toContain(extra.id);
    expect(new Set(ids).size).toBe(10);
    expect((await ok(sim, "GET", "/conversations")).data[0].id).toBe(extra.id);
    await allEvents(sim, extra.id);
  });
});
