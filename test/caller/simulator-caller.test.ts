// The simulator plays along with a caller over its session, on both profiles: a conversation whose
// session speaks hears only the caller's lines (no default turns), answers by the dialogue rules,
// and ends on the profile's end message or after the agent's goodbye; the other profile's shape is
// refused with a server.error.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ProfileName, type Simulator, startSimulator } from "../../src/simulator/index.ts";
import { SIMULATOR_SHAPES } from "../helpers/caller.ts";
import { simulatorCall } from "../helpers/simulator.ts";
import { openSession, said, types } from "../simulator/helpers.ts";

const bookingConfig = {
  personas: [{ name: "Leo", voice: { id: "male-1", provider: "service" } }],
  runtime: { model: "anthropic/claude-sonnet-4", prompt: { type: "fixed", text: "Book appointments." } },
  tool: { tools: [{ ns: "syscall", name: "check_availability" }] },
};

async function conversationOf(sim: Simulator): Promise<{ id: string }> {
  const body = { name: "Booking", description: "books", config: bookingConfig };
  const ca = await simulatorCall<{ id: string }>(sim, "POST", "/conversational_agents", body);
  const channel = { type: "phone", callee_no: "+15550100100" };
  return simulatorCall<{ id: string }>(sim, "POST", "/conversations", { agent_id: ca.id, channel });
}

const turns = (received: { payload: { type: string; text?: unknown } }[]) =>
  received.filter((e) => e.payload.type === "user.message.received").map((e) => e.payload.text);

describe.each(["default", "variant"] as ProfileName[])("a caller over the %s profile's session", (profile) => {
  let sim: Simulator;
  beforeAll(async () => {
    sim = await startSimulator({ port: 0, apiKey: `sk-caller-${profile}`, eventDelayMs: 1, quiet: true, profile });
  });
  afterAll(() => sim?.close());
  const shapes = SIMULATOR_SHAPES[profile];
  const other = SIMULATOR_SHAPES[profile === "default" ? "variant" : "default"];

  it("hears only the caller's lines, calls the tool a line names, and ends after the goodbye", async () => {
    const created = await conversationOf(sim);
    const session = openSession(sim, created.id);
    await session.opened;
    session.ws.send(JSON.stringify(shapes.message("Please check availability for Tuesday.")));
    session.ws.send(JSON.stringify(shapes.message("That's all, thank you.")));
    expect((await session.closed).code).toBe(1000);
    expect(turns(session.received)).toEqual(["Please check availability for Tuesday.", "That's all, thank you."]);
    expect(said(session.received)).toEqual([
      "Hello, this is Leo. How can I help you today?",
      "I have used check_availability for you.",
      "Thank you for calling. Goodbye!",
    ]);
    expect(types(session.received)).toContain("agent.tool_call.returned");
  });

  it("ends on the profile's end message", async () => {
    const created = await conversationOf(sim);
    const session = openSession(sim, created.id);
    await session.opened;
    session.ws.send(JSON.stringify(shapes.message("Hello?")));
    session.ws.send(JSON.stringify(shapes.end));
    expect((await session.closed).code).toBe(1000);
    expect(turns(session.received)).toEqual(["Hello?"]);
    expect(said(session.received).at(-1)).toBe("Thank you for calling. Goodbye!");
  });

  it("refuses the other profile's shape with a server.error and hears no line", async () => {
    const created = await conversationOf(sim);
    const session = openSession(sim, created.id);
    await session.opened;
    session.ws.send(JSON.stringify(other.message("Hello?")));
    const deadline = Date.now() + 5000;
    while (!session.received.some((e) => e.payload.type === "server.error") && Date.now() < deadline)
      await new Promise((r) => setTimeout(r, 10));
    session.ws.send(JSON.stringify(shapes.end));
    await session.closed;
    expect(turns(session.received)).toEqual([]);
    const error = session.received.find((e) => e.payload.type === "server.error");
    expect(JSON.stringify(error?.payload)).toMatch(/unknown control message/);
  });
});
