// The auth matrix: API key, stream tokens (scope and expiry) and Service-Version rules.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DEV_API_KEY, type Simulator, startSimulator } from "../../src/simulator/index.ts";
import {
  type Created,
  call,
  createConversation,
  createConversational,
  openSession,
  readSse,
  streamHeaders,
  VERSION,
} from "./helpers.ts";

const KEY = "sk-auth-matrix-5e1f0c";
let sim: Simulator;
let mine: Created;
let other: Created;

beforeAll(async () => {
  sim = await startSimulator({ port: 0, apiKey: KEY, eventDelayMs: 1, quiet: true });
  const ca = await createConversational(sim);
  mine = await createConversation(sim, ca.id, { context: { simulation: { wait_for_user: true } } });
  other = await createConversation(sim, ca.id, { context: { simulation: { wait_for_user: true } } });
});
afterAll(() => sim?.close());

const ROUTES: [string, string][] = [
  ["GET", "/conversations"],
  ["GET", "/procedures"],
  ["POST", "/conversational_agents"],
  ["POST", "/procedural_agents"],
  ["POST", "/conversations"],
  ["GET", "/_simulator/info"],
];

describe("API key", () => {
  it("401 without a key and with a wrong key, on every route; never echoes the key", async () => {
    for (const [method, path] of [...ROUTES, ["GET", `/conversations/${mine.id}/events`] as [string, string]]) {
      for (const authorization of [null, "Bearer sk-wrong", `Basic ${KEY}`, `Bearer ${KEY}x`, "Bearer "]) {
        const reply = await call(sim, method, path, {
          headers: { authorization },
          body: method === "POST" ? {} : undefined,
        });
        expect(reply.status, `${method} ${path} with ${authorization}`).toBe(401);
        expect(reply.body.error.type).toBe("authentication_error");
        expect(JSON.stringify(reply.body)).not.toContain(KEY);
      }
    }
  });

  it("the right key passes (200, or 400 for an empty body)", async () => {
    expect((await call(sim, "GET", "/conversations")).status).toBe(200);
    expect((await call(sim, "POST", "/procedural_agents", { body: {} })).status).toBe(400);
  });

  it("refuses the dev key on a non-loopback host, and uses it by default on loopback", async () => {
    await expect(startSimulator({ host: "0.0.0.0", port: 0, quiet: true })).rejects.toThrow(/dev key/);
    const dev = await startSimulator({ port: 0, quiet: true });
    try {
      expect(dev.apiKey).toBe(DEV_API_KEY);
      expect((await call(dev, "GET", "/conversations")).status).toBe(200);
    } finally {
      await dev.close();
    }
  });
});

describe("stream tokens", () => {
  const events = (conversation: Created, token: string, extra: Record<string, string> = {}) =>
    readSse(
      `${conversation.channel.events_url}?token=${encodeURIComponent(token)}`,
      { "service-version": VERSION, ...extra },
      { limit: 1 },
    );

  it("a conversation's token opens its own stream and session", async () => {
    const sse = await events(mine, mine.channel.token);
    expect(sse.status).toBe(200);
    expect(sse.events[0]?.payload.type).toBe("conversation.started");
    const session = openSession(sim, mine.id, { token: mine.channel.token });
    await session.opened;
    session.ws.close();
  });

  it("403 with the token of another conversation (stream and session); 401 with an unknown token", async () => {
    const sse = await events(mine, other.channel.token);
    expect(sse.status).toBe(403);
    expect(sse.body).toMatchObject({ error: { type: "permission_error", field: "token" } });
    expect(JSON.stringify(sse.body)).not.toContain(other.channel.token);
    const session = openSession(sim, mine.id, { token: other.channel.token });
    await expect(session.opened).rejects.toThrow();
    expect((await events(mine, "tok_forged")).status).toBe(401);
  });

  it("a token opens nothing else: 401 on the lists", async () => {
    const reply = await call(sim, "GET", `/conversations?token=${mine.channel.token}`, {
      headers: { authorization: null },
    });
    expect(reply.status).toBe(401);
  });

  it("401 once the token has expired", async () => {
    const short = await startSimulator({ port: 0, apiKey: KEY, eventDelayMs: 1, tokenTtlMs: 1, quiet: true });
    try {
      const ca = await createConversational(short);
      const created = await createConversation(short, ca.id);
      await new Promise((resolve) => setTimeout(resolve, 20));
      const sse = await events(created, created.channel.token);
      expect(sse.status).toBe(401);
      expect(sse.body.error.message).toMatch(/expired/);
      // The API key still works.
      const withKey = await readSse(created.channel.events_url, streamHeaders(short, "key"), { limit: 1 });
      expect(withKey.status).toBe(200);
    } finally {
      await short.close();
    }
  });
});

describe("Service-Version", () => {
  it("missing or wrong on conversation, procedure and agent-creation operations: 400 naming the allowed value", async () => {
    const paths: [string, string][] = [...ROUTES.slice(0, 5), ["GET", `/conversations/${mine.id}/procedures`]];
    for (const [method, path] of paths) {
      for (const version of [null, "2024-01-01", "latest"]) {
        const reply = await call(sim, method, path, {
          headers: { "service-version": version },
          body: method === "POST" ? {} : undefined,
        });
        expect(reply.status, `${method} ${path} ${version}`).toBe(400);
        expect(reply.body.error.field).toBe("Service-Version");
        expect(reply.body.error.message).toContain("2025-06-19");
      }
    }
    const sse = await readSse(mine.channel.events_url, {
      authorization: `Bearer ${KEY}`,
      "service-version": "2020-01-01",
    });
    expect(sse.status).toBe(400);
  });

  it("GET /feedbacks takes any date-shaped value, and rejects a missing or non-date one", async () => {
    const path = `/feedbacks?service_id=${sim.serviceId}`;
    for (const version of ["2025-06-19", "2023-11-02"]) {
      expect((await call(sim, "GET", path, { headers: { "service-version": version } })).status).toBe(200);
    }
    for (const version of [null, "v1", "2025/06/19"]) {
      const reply = await call(sim, "GET", path, { headers: { "service-version": version } });
      expect(reply.status).toBe(400);
      expect(reply.body.error.field).toBe("Service-Version");
    }
  });

  it("checks the key before the version: 401 wins", async () => {
    const reply = await call(sim, "GET", "/conversations", {
      headers: { authorization: null, "service-version": null },
    });
    expect(reply.status).toBe(401);
  });
});
