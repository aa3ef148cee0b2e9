// SSE framing (bytes → text → messages) and the event stream over a scripted server: reconnect with
// Last-Event-ID honouring `retry:`, no duplicates, idle timeout, abort on break, bounded reconnects.
import type { ServerResponse } from "node:http";
import { afterEach, describe, expect, test } from "vitest";
import { decodeEnvelope, sseBatches } from "../../src/api/events.ts";
import { ConnectionError, createClient, InvalidResponseError, TimeoutError } from "../../src/api/index.ts";
import type { EventEnvelope } from "../../src/contract/index.ts";
import { type ScriptedServer, scriptedServer } from "./scripted-server.ts";

const env = (id: string, type: string, extra: Record<string, unknown> = {}) =>
  JSON.stringify({ id, created_at: "2025-06-19T12:00:00Z", payload: { type, ...extra } });

// A fixed stream: LF and CRLF line endings, a comment, `retry:`, a multi-line data field, an event
// name, multibyte UTF-8 (2, 3 and 4 bytes), an empty-data message, and an unterminated tail.
const FIXED =
  ": keep-alive comment\n\n" +
  "retry: 1500\n\n" +
  `id: e1\ndata: ${env("e1", "agent.message.delta", { generation_id: "g", text_delta: "Grüß " })}\n\n` +
  `id: e2\r\nevent: message\r\ndata: ${env("e2", "agent.message.delta", { generation_id: "g", text_delta: "日本 🎉" })}\r\n\r\n` +
  'id: e3\ndata: {"id": "e3", "created_at": "2025-06-19T12:00:01Z",\ndata:  "payload": {"type": "conversation.ended"}}\n\n' +
  "id: e4\r\ndata:\r\n\r\n" +
  `id: e5\ndata: ${env("e5", "never.complete")}`;

type Seen = { id?: string | undefined; event?: string | undefined; data: string };

async function collect(chunks: Uint8Array[]): Promise<{ messages: Seen[]; retries: number[] }> {
  async function* source() {
    for (const chunk of chunks) yield chunk;
  }
  const messages: Seen[] = [];
  const retries: number[] = [];
  for await (const batch of sseBatches(source(), { onRetry: (ms) => retries.push(ms) }))
    for (const m of batch) messages.push({ id: m.id, event: m.event, data: m.data });
  return { messages, retries };
}

describe("SSE framing", () => {
  const bytes = new TextEncoder().encode(FIXED);

  test("the fixed stream in one chunk", async () => {
    const { messages, retries } = await collect([bytes]);
    expect(retries).toEqual([1500]);
    expect(messages.map((m) => m.id)).toEqual(["e1", "e2", "e3", "e4"]);
    expect(messages[1]?.event).toBe("message");
    const envelopes = messages
      .filter((m) => m.data !== "")
      .map((m) => decodeEnvelope(m.data, { method: "GET", path: "/x" }));
    expect(envelopes.map((e) => e.payload.text_delta ?? e.payload.type)).toEqual([
      "Grüß ",
      "日本 🎉",
      "conversation.ended",
    ]);
  });

  test("split into two chunks at every byte offset gives the same messages", async () => {
    const whole = await collect([bytes]);
    for (let i = 0; i <= bytes.length; i++) {
      const split = await collect([bytes.slice(0, i), bytes.slice(i)]);
      expect(split, `split at byte ${i}`).toEqual(whole);
    }
  });

  test("one byte at a time gives the same messages", async () => {
    const whole = await collect([bytes]);
    expect(await collect(Array.from(bytes, (b) => Uint8Array.of(b)))).toEqual(whole);
  });

  test("a data line that is not an envelope is an InvalidResponseError", () => {
    expect(() => decodeEnvelope("not json", { method: "GET", path: "/x" })).toThrow(InvalidResponseError);
    expect(() => decodeEnvelope('{"id": 1}', { method: "GET", path: "/x" })).toThrow(/not an envelope/);
  });
});

let server: ScriptedServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

function sse(res: ServerResponse): void {
  res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" });
}
const frame = (id: string, type: string, extra: Record<string, unknown> = {}) =>
  `id: ${id}\ndata: ${env(id, type, extra)}\n\n`;

async function drain(iterable: AsyncIterable<EventEnvelope>): Promise<EventEnvelope[]> {
  const out: EventEnvelope[] = [];
  for await (const e of iterable) out.push(e);
  return out;
}

describe("event stream over HTTP (scripted server)", () => {
  test("reconnects after a drop with Last-Event-ID, honours retry:, yields no duplicate, ends after conversation.ended", async () => {
    server = await scriptedServer((_req, res, _body, index) => {
      sse(res);
      if (index === 0) {
        res.write("retry: 20\n\n");
        res.write(frame("1", "conversation.started"));
        res.write(frame("2", "user.message.received", { text: "hi" }));
        // Drop the connection without ending the stream.
        setTimeout(() => res.socket?.destroy(), 20);
      } else {
        // The server replays from its own idea of the last id, including an event already sent.
        res.write(frame("2", "user.message.received", { text: "hi" }));
        res.write(frame("3", "conversation.ended"));
        res.write(frame("4", "after.the.end"));
      }
    });
    const client = createClient({ baseUrl: server.url, apiKey: "sk_test_secret" });
    const events = await drain(client.conversations.events("conv_1", { idleTimeoutMs: 5000 }));
    expect(events.map((e) => e.id)).toEqual(["1", "2", "3"]);
    expect(server.requests).toHaveLength(2);
    expect(server.requests[0]?.headers["last-event-id"]).toBeUndefined();
    expect(server.requests[1]?.headers["last-event-id"]).toBe("2");
    expect(server.requests[1]?.url).toBe("/conversations/conv_1/events");
    expect(server.requests[1]?.headers.authorization).toBe("Bearer sk_test_secret");
    expect(server.requests[1]?.headers["service-version"]).toBe("2025-06-19");
    await client.close();
  });

  test("token-only access: ?token= on events_url, no Authorization header, no key needed", async () => {
    server = await scriptedServer((_req, res) => {
      sse(res);
      res.end(frame("1", "conversation.ended"));
    });
    const client = createClient({ baseUrl: "http://127.0.0.1:9" });
    const events = await drain(
      client.conversations.events("conv_1", {
        token: "tok_abc123",
        eventsUrl: `${server.url}/conversations/conv_1/events`,
      }),
    );
    expect(events).toHaveLength(1);
    expect(server.requests[0]?.url).toBe("/conversations/conv_1/events?token=tok_abc123");
    expect(server.requests[0]?.headers.authorization).toBeUndefined();
    await client.close();
  });

  test("an idle stream ends with a TimeoutError, not a hang", async () => {
    server = await scriptedServer((_req, res) => {
      sse(res);
      res.write(frame("1", "conversation.started"));
    });
    const client = createClient({ baseUrl: server.url, apiKey: "sk_test_secret" });
    const seen: string[] = [];
    const error = await (async () => {
      for await (const e of client.conversations.events("conv_1", { idleTimeoutMs: 150 })) seen.push(e.id);
    })().catch((e: unknown) => e);
    expect(seen).toEqual(["1"]);
    expect(error).toBeInstanceOf(TimeoutError);
    expect((error as Error).message).toMatch(/idle timeout/);
    await client.close();
  });

  test("break aborts the connection", async () => {
    let closed: Promise<void> | undefined;
    server = await scriptedServer((req, res) => {
      closed = new Promise((resolve) => res.on("close", () => resolve()));
      sse(res);
      res.write(frame("1", "conversation.started"));
      void req;
    });
    const client = createClient({ baseUrl: server.url, apiKey: "sk_test_secret" });
    for await (const _ of client.conversations.events("conv_1")) break;
    await closed; // resolves only when the client closed the connection
    expect(server.requests).toHaveLength(1);
    await client.close();
  });

  test("the caller's signal ends the iteration with its reason and closes the connection", async () => {
    let closed: Promise<void> | undefined;
    server = await scriptedServer((_req, res) => {
      closed = new Promise((resolve) => res.on("close", () => resolve()));
      sse(res);
      res.write(frame("1", "conversation.started"));
    });
    const client = createClient({ baseUrl: server.url, apiKey: "sk_test_secret" });
    const controller = new AbortController();
    const reason = new Error("caller gave up");
    const error = await (async () => {
      for await (const _ of client.conversations.events("conv_1", { signal: controller.signal }))
        controller.abort(reason);
    })().catch((e: unknown) => e);
    expect(error).toBe(reason);
    await closed;
    await client.close();
  });

  test("reconnects are bounded; the error says how many connections were made", async () => {
    server = await scriptedServer((_req, res) => {
      sse(res);
      res.end("retry: 5\n\n");
    });
    const client = createClient({ baseUrl: server.url, apiKey: "sk_test_secret" });
    const error = await drain(client.conversations.events("conv_1", { maxReconnects: 2 })).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ConnectionError);
    expect((error as Error).message).toMatch(/3 times in a row \(3 connections\)/);
    expect(server.requests).toHaveLength(3);
    await client.close();
  });

  test("a 403 on the stream is not retried and names no token", async () => {
    server = await scriptedServer((_req, res) => {
      res.writeHead(403, { "content-type": "application/json", "x-request-id": "req_9" });
      res.end(JSON.stringify({ error: { message: "token tok_secret_1 is for another conversation" } }));
    });
    const client = createClient({ baseUrl: server.url });
    const error = (await drain(
      client.conversations.events("conv_1", {
        token: "tok_secret_1",
        eventsUrl: `${server.url}/conversations/conv_1/events`,
      }),
    ).catch((e: unknown) => e)) as Error & { status: number; requestId: string };
    expect(error.status).toBe(403);
    expect(error.requestId).toBe("req_9");
    expect(error.message).not.toContain("tok_secret_1");
    expect(JSON.stringify((error as { body?: unknown }).body)).not.toContain("tok_secret_1");
    expect(server.requests).toHaveLength(1);
    await client.close();
  });
});
