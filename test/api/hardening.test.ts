// Bounded waits, bounded memory, and the key kept to the service's own address.
import { afterEach, describe, expect, it } from "vitest";
import { MAX_RESPONSE_BYTES } from "../../src/api/core.ts";
import { createClient, InvalidRequestError, InvalidResponseError } from "../../src/api/index.ts";
import { type ScriptedServer, scriptedServer } from "./scripted-server.ts";

const servers: ScriptedServer[] = [];
afterEach(async () => {
  for (const server of servers.splice(0)) await server.close();
});

async function server(handler: Parameters<typeof scriptedServer>[0]) {
  const s = await scriptedServer(handler);
  servers.push(s);
  return s;
}

describe("client hardening", () => {
  it("ends a stream whose error response never finishes within the idle timeout", async () => {
    const s = await server((_req, res) => {
      res.writeHead(500, { "content-type": "text/plain" });
      res.write("the body starts but never ends"); // and nothing more
    });
    const client = createClient({ baseUrl: s.url, apiKey: "k-1", maxRetries: 0 });
    const stream = client.conversations.events("conv_1", { idleTimeoutMs: 300, maxReconnects: 0 });
    // Ended by the stream's idle timeout with the status it had (not the body's own, longer timeout).
    await expect(
      (async () => {
        for await (const _ of stream) {
          /* nothing arrives */
        }
      })(),
    ).rejects.toThrow(/^GET \/conversations\/conv_1\/events: no event for 300 ms \(the idle timeout/);
    expect(s.requests).toHaveLength(1);
    await client.close();
  });

  it("never sends the API key to a stream on another host", async () => {
    const service = await server((_req, res) => res.end("{}"));
    const elsewhere = await server((_req, res) => res.end("{}"));
    const client = createClient({ baseUrl: service.url, apiKey: "sk-secret-1" });
    expect(() =>
      client.conversations.events("conv_1", { eventsUrl: `${elsewhere.url}/conversations/conv_1/events` }),
    ).toThrow(InvalidRequestError);
    expect(elsewhere.requests).toHaveLength(0);
    await client.close();
  });

  it("refuses a response larger than its limit, with the status", async () => {
    const chunk = Buffer.alloc(1024 * 1024, 0x20);
    const s = await server((_req, res) => {
      res.writeHead(200, { "content-type": "application/json", "request-id": "req_big" });
      for (let i = 0; i <= MAX_RESPONSE_BYTES / chunk.length; i++) res.write(chunk);
      res.end();
    });
    const client = createClient({ baseUrl: s.url, apiKey: "k-1", maxRetries: 0 });
    const failure = await client.conversations
      .list()
      .toArray()
      .then(
        () => undefined,
        (error: unknown) => error,
      );
    expect(failure).toBeInstanceOf(InvalidResponseError);
    expect((failure as InvalidResponseError).status).toBe(200);
    expect((failure as Error).message).toContain("req_big");
    await client.close();
  });
});
