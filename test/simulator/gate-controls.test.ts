// The simulator's controls for smoke gates: a per-conversation response delay, and a failure
// rate chosen by a counter per series (agent version + context.simulation).
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { failsAt } from "../../src/simulator/dialogue.ts";
import { type Simulator, startSimulator } from "../../src/simulator/index.ts";
import { allEvents, createConversation, createConversational, ok, types } from "./helpers.ts";

let sim: Simulator;
beforeAll(async () => {
  sim = await startSimulator({ port: 0, apiKey: "sk-gate-controls", eventDelayMs: 1, quiet: true });
});
afterAll(() => sim?.close());
afterEach(async () => {
  await ok(sim, "POST", "/_simulator/reset");
});

const time = (e: { created_at: string }) => Date.parse(e.created_at);

describe("gate controls", () => {
  it("failsAt follows the faults' counter rule: 0.2 is the 5th and 10th of ten", () => {
    const failing = Array.from({ length: 10 }, (_, i) => i + 1).filter((n) => failsAt(n, 0.2));
    expect(failing).toEqual([5, 10]);
    expect(Array.from({ length: 10 }, (_, i) => failsAt(i + 1, 0)).some(Boolean)).toBe(false);
  });

  it("response_delay_ms delays the greeting and each reply, as the events' created_at show", async () => {
    const agent = await createConversational(sim);
    const conversation = await createConversation(sim, agent.version_id, {
      context: { simulation: { response_delay_ms: 150, user_turns: ["Hello there", "Bye"] } },
    });
    const events = await allEvents(sim, conversation.id);
    const started = events.find((e) => e.payload.type === "conversation.started");
    const firstDelta = events.find((e) => e.payload.type === "agent.message.delta");
    expect(started && firstDelta && time(firstDelta) - time(started)).toBeGreaterThanOrEqual(150);
    for (const [i, e] of events.entries()) {
      if (e.payload.type !== "user.message.received") continue;
      const next = events.slice(i + 1).find((n) => n.payload.type.startsWith("agent."));
      expect(next && time(next) - time(e)).toBeGreaterThanOrEqual(150);
    }
  });

  it("failure_rate 0.2 fails exactly 2 of 10 conversations of a series, a different series counts apart", async () => {
    const agent = await createConversational(sim);
    const run = async (series: string) => {
      const created = await Promise.all(
        Array.from({ length: 10 }, () =>
          createConversation(sim, agent.version_id, { context: { simulation: { failure_rate: 0.2, series } } }),
        ),
      );
      const logs = await Promise.all(created.map((c) => allEvents(sim, c.id)));
      return logs.filter((events) => types(events).includes("server.error")).length;
    };
    expect(await run("a")).toBe(2);
    expect(await run("b")).toBe(2);
    const other = await createConversation(sim, agent.version_id, {
      context: { simulation: { failure_rate: 0.2, series: "c" } },
    });
    expect(types(await allEvents(sim, other.id))).not.toContain("server.error");
  });
});
