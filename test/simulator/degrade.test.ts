// Drift on demand through /_simulator/degrade: a pinned version's tool calls dropped in N % of its
// conversations from now on (counter-based, exact), its answers slowed, other versions untouched,
// and DELETE recovers it.
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { type Simulator, startSimulator } from "../../src/simulator/index.ts";
import { allEvents, call, createConversation, createConversational, ok, types } from "./helpers.ts";

let sim: Simulator;
beforeAll(async () => {
  sim = await startSimulator({ port: 0, apiKey: "sk-degrade", eventDelayMs: 0, quiet: true });
});
afterAll(() => sim?.close());
afterEach(async () => {
  await ok(sim, "POST", "/_simulator/reset");
});

const turns = { simulation: { user_turns: ["Please check availability for Tuesday."] } };

/** Whether each of `n` conversations on the version called its tool. */
async function toolCalled(versionId: string, n: number): Promise<boolean[]> {
  const called: boolean[] = [];
  for (let i = 0; i < n; i++) {
    const conversation = await createConversation(sim, versionId, { context: turns });
    called.push(types(await allEvents(sim, conversation.id)).includes("agent.tool_call.created"));
  }
  return called;
}

describe("the degrade control", () => {
  it("drops the tool calls of exactly half the version's conversations from now on; another version is untouched", async () => {
    const agent = await createConversational(sim);
    const other = await createConversational(sim, { name: "Other" });
    expect(await toolCalled(agent.version_id, 2)).toEqual([true, true]);
    const set = await ok(sim, "POST", "/_simulator/degrade", {
      version_id: agent.version_id,
      tool_call_drop_percent: 50,
    });
    expect(set).toMatchObject({ version_id: agent.version_id, tool_call_drop_percent: 50, slow_ms: 0 });
    expect(await toolCalled(agent.version_id, 4)).toEqual([true, false, true, false]);
    expect(await toolCalled(other.version_id, 2)).toEqual([true, true]);
    const listed = await ok(sim, "GET", "/_simulator/degrade");
    expect(listed.degradations).toEqual([
      expect.objectContaining({ version_id: agent.version_id, conversations: 4, dropped: 2 }),
    ]);
    expect(await ok(sim, "DELETE", "/_simulator/degrade")).toEqual({ ok: true, recovered: 1 });
    expect(await toolCalled(agent.version_id, 2)).toEqual([true, true]);
  });

  it("slows each answer of the version by slow_ms (the greeting comes that much later)", async () => {
    const agent = await createConversational(sim);
    await ok(sim, "POST", "/_simulator/degrade", { version_id: agent.version_id, slow_ms: 300 });
    const conversation = await createConversation(sim, agent.version_id, { context: turns });
    const events = await allEvents(sim, conversation.id);
    const at = (type: string) => Date.parse(events.find((e) => e.payload.type === type)?.created_at ?? "");
    expect(at("agent.message.delta") - at("conversation.started")).toBeGreaterThanOrEqual(300);
  });

  it("refuses an unpinned version id or an out-of-range percentage (400 naming the field)", async () => {
    const bare = await call(sim, "POST", "/_simulator/degrade", { body: { version_id: "ca_x", slow_ms: 10 } });
    expect(bare.status).toBe(400);
    expect(JSON.stringify(bare.body)).toContain("version_id");
    const over = await call(sim, "POST", "/_simulator/degrade", {
      body: { version_id: "ca_x@v1", tool_call_drop_percent: 150 },
    });
    expect(over.status).toBe(400);
    expect(JSON.stringify(over.body)).toContain("tool_call_drop_percent");
  });
});
