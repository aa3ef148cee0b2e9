// The WebSocket session (control messages) and post_url delivery of procedures to a loopback receiver.
import { createServer, type IncomingMessage, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Simulator, startSimulator } from "../../src/simulator/index.ts";
import {
  allEvents,
  createConversation,
  createConversational,
  createProcedural,
  type Json,
  ok,
  openSession,
  said,
  types,
  waitFor,
} from "./helpers.ts";

let sim: Simulator;
beforeAll(async () => {
  sim = await startSimulator({ port: 0, apiKey: "sk-session", eventDelayMs: 1, quiet: true });
});
afterAll(() => sim?.close());

describe("WS /conversations/{id}/session", () => {
  it("acts on user.message turn by turn, answers an unknown control message with server.error and stays open, ends on end", async () => {
    const ca = await createConversational(sim);
    const created = await createConversation(sim, ca.id, {
      context: { simulation: { user_turns: [], wait_for_user: true } },
    });
    const session = openSession(sim, created.id, { token: created.channel.token });
    await session.opened;
    const completedCount = (n: number) => async () => said(session.received).length >= n;
    await waitFor(completedCount(1));
    expect(said(session.received)).toEqual(["Hello, this is Leo. How can I help you today?"]);

    session.ws.send(JSON.stringify({ type: "user.message", text: "Can you check availability for Friday?" }));
    await waitFor(completedCount(2));
    session.ws.send(JSON.stringify({ type: "dance" }));
    session.ws.send("not json");
    await waitFor(async () => session.received.filter((e) => e.payload.type === "server.error").length === 2);
    const errors = session.received.filter((e) => e.payload.type === "server.error");
    expect(errors[0]?.payload.error.message).toMatch(/unknown control message type "dance"/);
    expect(session.ws.readyState).toBe(WebSocket.OPEN);

    session.ws.send(JSON.stringify({ type: "user.message", text: "And the price?" }));
    await waitFor(completedCount(3));
    session.ws.send(JSON.stringify({ type: "end" }));
    const closed = await session.closed;
    expect(closed.code).toBe(1000);

    expect(said(session.received)).toEqual([
      "Hello, this is Leo. How can I help you today?",
      "I have used check_availability for you.",
      "I understand: And the price?",
      "Thank you for calling. Goodbye!",
    ]);
    expect(types(session.received)).toContain("agent.tool_call.returned");
    expect(types(session.received).at(-1)).toBe("conversation.ended");
    // The same events, with the same ids, as the SSE stream.
    expect(await allEvents(sim, created.id)).toEqual(session.received);
    const item = (await ok(sim, "GET", "/conversations")).data.find((c: { id: string }) => c.id === created.id);
    expect(item.status).toBe("completed");
  });

  it("a session turn during a scripted conversation is answered before the next scripted turn", async () => {
    const slow = await startSimulator({ port: 0, apiKey: "sk-session-slow", eventDelayMs: 5, quiet: true });
    try {
      const ca = await createConversational(slow);
      // Scripted turns (user_turns given): a session's line joins them rather than replacing them.
      const created = await createConversation(slow, ca.id, {
        context: { simulation: { user_turns: ["Hi, I'd like some help with my account.", "That's all, thank you."] } },
      });
      const session = openSession(slow, created.id);
      await session.opened;
      session.ws.send(JSON.stringify({ type: "user.message", text: "Quick question." }));
      await session.closed;
      const turns = session.received
        .filter((e) => e.payload.type === "user.message.received")
        .map((e) => e.payload.text);
      expect(turns).toContain("Quick question.");
      expect(turns.at(-1)).toBe("That's all, thank you.");
      expect(said(session.received).at(-1)).toBe("Thank you for calling. Goodbye!");
    } finally {
      await slow.close();
    }
  });

  it("a session opened after the end replays the events and closes", async () => {
    const ca = await createConversational(sim);
    const created = await createConversation(sim, ca.id);
    const events = await allEvents(sim, created.id);
    const session = openSession(sim, created.id);
    await session.opened;
    expect((await session.closed).code).toBe(1000);
    expect(session.received).toEqual(events);
  });

  it("answers 404 before the upgrade for an unknown conversation", async () => {
    const session = openSession(sim, "conv_nope");
    await expect(session.opened).rejects.toThrow();
    const counts = await ok(sim, "GET", "/_simulator/requests");
    expect(counts.by_route["WS /conversations/{conversation_id}/session"]).toBeGreaterThan(0);
  });
});

describe("post_url delivery", () => {
  let receiver: Server;
  let receiverUrl: string;
  const received: { path: string | undefined; body: Json; contentType: string | undefined }[] = [];
  beforeAll(async () => {
    receiver = createServer(async (request: IncomingMessage, response) => {
      let text = "";
      for await (const chunk of request) text += chunk;
      received.push({ path: request.url, body: JSON.parse(text), contentType: request.headers["content-type"] });
      response.statusCode = request.url === "/broken" ? 500 : 204;
      response.end();
    });
    await new Promise<void>((resolve) => receiver.listen(0, "127.0.0.1", resolve));
    receiverUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}`;
  });
  afterAll(() => new Promise((resolve) => receiver.close(resolve)));

  it("POSTs the finished procedure to a loopback post_url and records each outcome", async () => {
    const output = { output_schema: null };
    const good = await createProcedural(
      sim,
      { output: { ...output, post_url: `${receiverUrl}/hooks/summary` } },
      "Hooked",
    );
    const broken = await createProcedural(
      sim,
      { output: { ...output, post_url: `${receiverUrl}/broken` } },
      "Broken hook",
    );
    const remote = await createProcedural(
      sim,
      { output: { ...output, post_url: "http://example.com/hook" } },
      "Remote hook",
    );
    const ca = await createConversational(sim, { postprocess_agents: [good.id, broken.id, remote.id] });
    const created = await createConversation(sim, ca.id);
    await allEvents(sim, created.id);

    const deliveries = await waitFor(async () => {
      const body = await ok(sim, "GET", "/_simulator/deliveries");
      const mine = body.deliveries.filter(
        (d: { url: string }) => d.url.startsWith(receiverUrl) || d.url.includes("example.com"),
      );
      return mine.length === 3 ? mine : undefined;
    });
    const byUrl = Object.fromEntries(deliveries.map((d: { url: string }) => [d.url, d]));
    expect(byUrl[`${receiverUrl}/hooks/summary`]).toMatchObject({ ok: true, status: 204, error: null });
    expect(byUrl[`${receiverUrl}/broken`]).toMatchObject({ ok: false, status: 500 });
    expect(byUrl["http://example.com/hook"]).toMatchObject({
      ok: false,
      status: null,
      error: expect.stringMatching(/loopback/),
    });

    const hook = received.find((r) => r.path === "/hooks/summary");
    expect(hook?.contentType).toBe("application/json");
    expect(hook?.body).toMatchObject({
      name: "Hooked",
      agent_id: good.id,
      conversation_id: created.id,
      status: "completed",
      output: { summary: expect.any(String) },
    });
    expect(received.some((r) => r.path === "/hook")).toBe(false);
  });
});
