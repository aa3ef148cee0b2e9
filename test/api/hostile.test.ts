// Hostile services on 127.0.0.1 (port 0): each attack first, then the bound that ends it — a typed
// error naming the limit, within the configured deadline (small values here; the defaults are in
// src/api/core.ts and events.ts). Also the caller's signal on requests and sessions.
import { createHash } from "node:crypto";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo, Socket } from "node:net";
import { afterEach, describe, expect, test } from "vitest";
import {
  type ApiError,
  type Client,
  ConnectionError,
  createClient,
  InvalidResponseError,
  TimeoutError,
} from "../../src/api/index.ts";
import { explainCreateFailure } from "../../src/provider/create.ts";
import { type ScriptedServer, scriptedServer } from "./scripted-server.ts";

const KEY = "sk_test_hostile";
const channel = { type: "phone" as const, callee_no: "+15550100" };
const agentBody = { name: "a", description: "d", config: {} };

const cleanup: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const step of cleanup.splice(0).reverse()) await step();
});

async function server(handler: Parameters<typeof scriptedServer>[0]): Promise<ScriptedServer> {
  const s = await scriptedServer(handler);
  cleanup.push(() => s.close());
  return s;
}

function client(url: string, options: Partial<Parameters<typeof createClient>[0]> = {}): Client {
  const c = createClient({ baseUrl: url, apiKey: KEY, retryBaseDelayMs: 1, ...options });
  cleanup.push(() => c.close());
  return c;
}

/** Writes `next()` every `ms` until the response closes; counts the writes (what kept arriving). */
function trickle(res: ServerResponse, ms: number, next: () => string, sent = { writes: 0 }): { writes: number } {
  const timer = setInterval(() => {
    res.write(next());
    sent.writes++;
  }, ms);
  res.on("close", () => clearInterval(timer));
  return sent;
}

function sse(res: ServerResponse, type = "text/event-stream"): void {
  res.writeHead(200, { "content-type": type });
}

/**
 * The error an async call ends with. No test times it (a loaded machine makes any limit flaky): each
 * asserts what ended the call (the error naming its bound, what the server had sent meanwhile).
 */
async function failure(run: () => Promise<unknown>): Promise<{ error: unknown }> {
  const error = await run().then(
    () => undefined,
    (e: unknown) => e,
  );
  return { error };
}

async function drain(iterable: AsyncIterable<unknown>): Promise<number> {
  let n = 0;
  for await (const _ of iterable) n++;
  return n;
}

const frame = (id: string, type: string) =>
  `id: ${id}\ndata: ${JSON.stringify({ id, created_at: "2025-06-19T12:00:00Z", payload: { type } })}\n\n`;

describe("event stream: bounded lines, events and idle time", () => {
  test("an endless line without a newline ends with an error naming maxEventBytes, memory bounded", async () => {
    const s = await server((_req, res) => {
      sse(res);
      res.write("data: ");
      trickle(res, 1, () => "x".repeat(16 * 1024)); // ~16 MB/s, never a newline
    });
    const { error } = await failure(() =>
      drain(client(s.url, { maxEventBytes: 64 * 1024 }).conversations.events("conv_1", { idleTimeoutMs: 5_000 })),
    );
    // The limit ended it (not the idle timeout, which bytes arriving every millisecond never reach).
    expect(error).toBeInstanceOf(InvalidResponseError);
    expect((error as Error).message).toMatch(/larger than 65536 bytes \(the client's maxEventBytes limit\)/);
    expect(s.requests).toHaveLength(1); // not reconnected: the next connection would do the same
  });

  test("data lines that never end their event are bounded the same way", async () => {
    const s = await server((_req, res) => {
      sse(res);
      trickle(res, 1, () => `data: ${"y".repeat(1000)}\n`.repeat(16));
    });
    const { error } = await failure(() =>
      drain(client(s.url, { maxEventBytes: 32 * 1024 }).conversations.events("conv_1", { idleTimeoutMs: 5_000 })),
    );
    expect(error).toBeInstanceOf(InvalidResponseError);
    expect((error as Error).message).toContain("maxEventBytes");
  });

  test("an event over the limit sent in one chunk is refused too", async () => {
    const s = await server((_req, res) => {
      sse(res);
      res.end(`data: {"id":"1","created_at":"t","payload":{"type":"${"z".repeat(5000)}"}}\n\n`);
    });
    const { error } = await failure(() => drain(client(s.url, { maxEventBytes: 4096 }).conversations.events("conv_1")));
    expect((error as Error).message).toMatch(/larger than 4096 bytes/);
  });

  test("a comment-only stream ends with the idle timeout although bytes keep arriving", async () => {
    const comments = { writes: 0 };
    const s = await server((_req, res) => {
      sse(res);
      res.write(frame("1", "conversation.started"));
      trickle(res, 20, () => ": keep-alive\n\n", comments);
    });
    const seen: string[] = [];
    const { error } = await failure(async () => {
      for await (const e of client(s.url).conversations.events("conv_1", { idleTimeoutMs: 300 })) seen.push(e.id);
    });
    expect(seen).toEqual(["1"]);
    expect(error).toBeInstanceOf(TimeoutError);
    expect((error as Error).message).toMatch(/no event for 300 ms \(the idle timeout; comments/);
    // Comments did arrive while the timeout ran, and did not reset it.
    expect(comments.writes).toBeGreaterThan(1);
  });

  test("a partial line trickled one byte at a time does not keep the stream alive", async () => {
    const bytes = { writes: 0 };
    const s = await server((_req, res) => {
      sse(res);
      res.write('data: {"id": "1", "created_at": "');
      trickle(res, 10, () => "9", bytes);
    });
    const { error } = await failure(() => drain(client(s.url).conversations.events("conv_1", { idleTimeoutMs: 300 })));
    expect(error).toBeInstanceOf(TimeoutError);
    expect((error as Error).message).toMatch(/no event for 300 ms/);
    expect(bytes.writes).toBeGreaterThan(1);
  });

  test("replayed events do not reset the idle timeout; new ones do", async () => {
    let connection = 0;
    const replays = { writes: 0 };
    const s = await server((_req, res) => {
      sse(res);
      connection++;
      if (connection === 1) {
        res.write(frame("1", "conversation.started"));
        setTimeout(() => res.socket?.destroy(), 20);
        return;
      }
      // Replays the same event forever after a resume.
      trickle(res, 20, () => frame("1", "conversation.started"), replays);
    });
    const { error } = await failure(() =>
      drain(client(s.url).conversations.events("conv_1", { idleTimeoutMs: 400, reconnectDelayMs: 1 })),
    );
    expect(error).toBeInstanceOf(TimeoutError);
    expect((error as Error).message).toMatch(/no event for 400 ms/);
    // Replays kept arriving on the resumed connection: they did not count as events.
    expect(replays.writes).toBeGreaterThan(1);
  });

  test("a slow consumer is not an idle stream: the time it holds an event does not count", async () => {
    const s = await server((_req, res) => {
      sse(res);
      res.write(frame("1", "conversation.started"));
      setTimeout(() => res.end(frame("2", "conversation.ended")), 50);
    });
    const ids: string[] = [];
    for await (const e of client(s.url).conversations.events("conv_1", { idleTimeoutMs: 200 })) {
      ids.push(e.id);
      if (e.id === "1") await new Promise((r) => setTimeout(r, 400));
    }
    expect(ids).toEqual(["1", "2"]);
  });

  test("the media type is compared as RFC 9110 says: case-insensitive, parameters ignored", async () => {
    for (const type of ["Text/Event-Stream; charset=utf-8", "TEXT/EVENT-STREAM", "text/event-stream ;charset=UTF-8"]) {
      const s = await server((_req, res) => {
        sse(res, type);
        res.end(frame("1", "conversation.ended"));
      });
      expect(await drain(client(s.url).conversations.events("conv_1")), type).toBe(1);
    }
    for (const type of ["application/json", "text/event-streamx", "text/plain; x=text/event-stream"]) {
      const s = await server((_req, res) => {
        sse(res, type);
        res.end(frame("1", "conversation.ended"));
      });
      const { error } = await failure(() => drain(client(s.url).conversations.events("conv_1")));
      expect(error, type).toBeInstanceOf(InvalidResponseError);
      expect((error as Error).message).toContain("expected text/event-stream");
    }
  });
});

describe("requests: a whole-response deadline apart from the per-chunk timeout", () => {
  const trickledBytes = { writes: 0 };
  const trickled = (_req: IncomingMessage, res: ServerResponse) => {
    res.writeHead(200, { "content-type": "application/json", "request-id": "req_slow" });
    res.write("{");
    trickledBytes.writes = 0;
    trickle(res, 20, () => " ", trickledBytes); // one byte every 20 ms: the per-chunk timeout never fires
  };

  test("a list whose body trickles one byte per interval ends at timeouts.requestMs, not retried", async () => {
    const s = await server(trickled);
    const c = client(s.url, { timeouts: { requestMs: 400, bodyMs: 5_000 } });
    const { error } = await failure(() => c.conversations.list().toArray());
    expect(error).toBeInstanceOf(TimeoutError);
    // The whole-response deadline ended it, while bytes kept the per-chunk timeout (bodyMs) from firing.
    expect((error as Error).message).toMatch(
      /GET \/conversations: no complete response within 400 ms \(the request deadline, timeouts\.requestMs/,
    );
    expect(trickledBytes.writes).toBeGreaterThan(1);
    expect(s.requests).toHaveLength(1);
  });

  test("a create whose body trickles: TimeoutError with requestSent, reported as 'may have created'", async () => {
    const s = await server(trickled);
    const c = client(s.url, { timeouts: { requestMs: 300 } });
    const { error } = await failure(() => c.conversations.create({ agent_id: "ca_1", channel }));
    expect(error).toBeInstanceOf(TimeoutError);
    expect((error as TimeoutError).requestSent).toBe(true);
    expect(s.requests).toHaveLength(1);
  });

  test("a create answered 200 with an unreadable body: the provider says the service may have created it", async () => {
    const s = await server((_req, res) => {
      res.writeHead(200, { "content-type": "application/json" });
      res.end('{"id": "ca_1"'); // cut short
    });
    const { error } = await failure(() => client(s.url).conversationalAgents.create(agentBody));
    expect(error).toBeInstanceOf(ConnectionError);
    expect((error as ConnectionError).requestSent).toBe(true);
    const explained = await explainCreateFailure("conversational", "greeter", error);
    expect(explained.message).toMatch(/^the service may have created conversational agent "greeter"/);
    expect(s.requests).toHaveLength(1);
  });

  test("the caller's signal ends a trickled request at once with its own reason", async () => {
    const s = await server(trickled);
    const controller = new AbortController();
    const reason = new Error("scenario deadline");
    setTimeout(() => controller.abort(reason), 100);
    const { error } = await failure(() =>
      client(s.url).conversations.list({}, { signal: controller.signal }).toArray(),
    );
    // Its own reason, not the request deadline's TimeoutError: the signal ended it.
    expect(error).toBe(reason);
    expect(s.requests).toHaveLength(1);
  });

  test("the caller's signal ends a retry's wait", async () => {
    const s = await server((_req, res) => {
      res.writeHead(503, { "retry-after": "30" });
      res.end();
    });
    const controller = new AbortController();
    setTimeout(() => controller.abort(new Error("stop")), 100);
    const { error } = await failure(() =>
      client(s.url, { maxRetryDelayMs: 30_000 }).procedures.list({}, { signal: controller.signal }).toArray(),
    );
    expect((error as Error).message).toBe("stop");
    // The wait for the retry (30 s asked) ended: the retry was never sent.
    expect(s.requests).toHaveLength(1);
  });
});

describe("error messages from services with other error shapes", () => {
  const cases: { status: number; headers: Record<string, string>; body: string; expected: string }[] = [
    {
      status: 422,
      headers: { "content-type": "application/json", "x-request-id": "req_fastapi" },
      body: JSON.stringify({ detail: [{ loc: ["body", "name"], msg: "field required", type: "missing" }] }),
      expected: "→ 422: body.name: field required (request id req_fastapi; 1 attempt)",
    },
    {
      status: 404,
      headers: { "content-type": "application/json", "x-amzn-requestid": "req_amzn" },
      body: JSON.stringify({ detail: "Not Found" }),
      expected: "→ 404: Not Found (request id req_amzn; 1 attempt)",
    },
    {
      status: 400,
      headers: { "content-type": "application/json", "x-correlation-id": "corr-1" },
      body: JSON.stringify({ code: 17, message: "cursor is not valid" }),
      expected: "→ 400: cursor is not valid (request id corr-1; 1 attempt)",
    },
    {
      status: 403,
      headers: { "content-type": "application/json", "Request-Id": "req_case" },
      body: JSON.stringify({ error: "forbidden here" }),
      expected: "→ 403: forbidden here (request id req_case; 1 attempt)",
    },
    {
      status: 409,
      headers: { "content-type": "application/problem+json", "x-request-id": "req_problem" },
      body: JSON.stringify({ type: "about:blank", title: "Conflict", status: 409 }),
      expected: "→ 409: Conflict (request id req_problem; 1 attempt)",
    },
    {
      status: 400,
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ errors: [{ detail: "name is too long" }, { detail: "model is unknown" }] }),
      expected: "→ 400: name is too long; model is unknown (1 attempt)",
    },
    {
      status: 502,
      headers: { "content-type": "text/html" },
      body: "<html><head><title>502 Bad Gateway</title></head><body><h1>502 Bad Gateway</h1></body></html>",
      expected: "→ 502: 502 Bad Gateway (1 attempt)",
    },
    {
      status: 400,
      headers: { "content-type": "text/plain" },
      body: `bad request:\n${"x".repeat(1000)}`,
      expected: `→ 400: bad request: ${"x".repeat(287)}… (1 attempt)`,
    },
  ];

  test.each(cases)("$status $body", async ({ status, headers, body, expected }) => {
    const s = await server((_req, res) => {
      res.writeHead(status, headers);
      res.end(body);
    });
    const { error } = await failure(() => client(s.url, { maxRetries: 0 }).conversationalAgents.create(agentBody));
    expect((error as ApiError).status).toBe(status);
    expect((error as Error).message).toBe(`POST /conversational_agents ${expected}`);
  });

  test("a stream refused with another shape gives its reason and request id too", async () => {
    const s = await server((_req, res) => {
      res.writeHead(401, { "content-type": "application/json", "x-request-id": "req_sse" });
      res.end(JSON.stringify({ detail: "Invalid token" }));
    });
    const { error } = await failure(() => drain(client(s.url).conversations.events("conv_1")));
    expect((error as Error).message).toBe(
      "GET /conversations/conv_1/events → 401: Invalid token (request id req_sse; 1 attempt)",
    );
  });
});

/** A raw WebSocket server: accepts the upgrade, then `onOpen` writes frames to the socket. */
async function wsServer(onOpen: (socket: Socket) => void, refuse?: (socket: Socket) => void): Promise<string> {
  const http = createServer();
  const sockets = new Set<Socket>();
  http.on("upgrade", (req, socket: Socket) => {
    sockets.add(socket);
    if (refuse) return refuse(socket);
    const accept = createHash("sha1")
      .update(`${req.headers["sec-websocket-key"]}258EAFA5-E914-47DA-95CA-C5AB0DC85B11`)
      .digest("base64");
    socket.write(
      `HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: ${accept}\r\n\r\n`,
    );
    onOpen(socket);
  });
  await new Promise<void>((resolve) => http.listen(0, "127.0.0.1", resolve));
  cleanup.push(
    () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        http.close(() => resolve());
      }),
  );
  return `http://127.0.0.1:${(http.address() as AddressInfo).port}`;
}

/** The header of an unmasked text frame of `length` bytes. */
function textFrameHeader(length: number): Buffer {
  if (length < 126) return Buffer.from([0x81, length]);
  if (length < 65536) return Buffer.from([0x81, 126, length >> 8, length & 0xff]);
  const header = Buffer.alloc(10);
  header[0] = 0x81;
  header[1] = 127;
  header.writeBigUInt64BE(BigInt(length), 2);
  return header;
}

describe("WebSocket session: bounded messages, classified refusals, the caller's signal", () => {
  test("a message over maxEventBytes ends the session with an error naming the limit", async () => {
    // Announces a 90 MB message; only its start is ever sent.
    const url = await wsServer((socket) => {
      socket.write(textFrameHeader(90 * 1024 * 1024));
      socket.write(Buffer.alloc(64 * 1024, 0x20));
    });
    const session = await client(url, { maxEventBytes: 1024 * 1024 }).conversations.session("conv_1");
    const { error } = await failure(() => drain(session));
    // Refused from the announced length: the 90 MB were never waited for (only 64 KiB were ever sent).
    expect(error).toBeInstanceOf(InvalidResponseError);
    expect((error as Error).message).toBe(
      "WS /conversations/conv_1/session: a message is larger than 1048576 bytes (the client's maxEventBytes limit); stopped reading",
    );
  });

  test("a message within the limit is read", async () => {
    const event = JSON.stringify({
      id: "1",
      created_at: "t",
      payload: { type: "conversation.ended", pad: "p".repeat(2000) },
    });
    const url = await wsServer((socket) => {
      socket.write(Buffer.concat([textFrameHeader(event.length), Buffer.from(event)]));
    });
    const session = await client(url, { maxEventBytes: 4096 }).conversations.session("conv_1");
    expect(await drain(session)).toBe(1);
  });

  test("several messages in one chunk are all delivered, the end included", async () => {
    const events = ["conversation.started", "agent.message.delta", "user.message.received", "conversation.ended"].map(
      (type, i) => Buffer.from(JSON.stringify({ id: String(i), created_at: "t", payload: { type } })),
    );
    const url = await wsServer((socket) => {
      setTimeout(() => socket.write(Buffer.concat(events.flatMap((e) => [textFrameHeader(e.length), e]))), 50);
    });
    const session = await client(url).conversations.session("conv_1", { idleTimeoutMs: 2_000 });
    const types: string[] = [];
    for await (const e of session) types.push(e.payload.type);
    expect(types).toEqual([
      "conversation.started",
      "agent.message.delta",
      "user.message.received",
      "conversation.ended",
    ]);
  });

  test("a refused handshake with another error shape: status, reason and request id", async () => {
    const body = JSON.stringify({ detail: "conversation not found" });
    const url = await wsServer(
      () => {},
      (socket) =>
        socket.end(
          `HTTP/1.1 404 Not Found\r\ncontent-type: application/json\r\nx-amzn-requestid: req_ws\r\ncontent-length: ${body.length}\r\n\r\n${body}`,
        ),
    );
    const { error } = await failure(() => client(url).conversations.session("conv_1"));
    expect((error as ApiError).status).toBe(404);
    expect((error as Error).message).toBe(
      "WS /conversations/conv_1/session → 404: conversation not found (request id req_ws; 1 attempt)",
    );
  });

  test("the caller's signal ends an opening that never completes, and an open session", async () => {
    const hanging = await wsServer(
      () => {},
      () => {}, // never answers the upgrade
    );
    const early = new AbortController();
    setTimeout(() => early.abort(new Error("gave up opening")), 100);
    const opening = await failure(() => client(hanging).conversations.session("conv_1", { signal: early.signal }));
    // The signal's own reason, not the opening's idle TimeoutError: the signal ended it.
    expect((opening.error as Error).message).toBe("gave up opening");

    const quiet = await wsServer(() => {});
    const late = new AbortController();
    const session = await client(quiet).conversations.session("conv_1", { signal: late.signal });
    setTimeout(() => late.abort(new Error("gave up waiting")), 100);
    const open = await failure(() => drain(session));
    expect((open.error as Error).message).toBe("gave up waiting");
  });

  test("a session that never opens ends at its idle timeout", async () => {
    const hanging = await wsServer(
      () => {},
      () => {},
    );
    const { error } = await failure(() => client(hanging).conversations.session("conv_1", { idleTimeoutMs: 200 }));
    expect(error).toBeInstanceOf(TimeoutError);
    expect((error as Error).message).toContain("did not open within 200 ms");
  });
});
