// The commands against a hostile service on loopback: a stream line that never ends, a stream of
// keep-alive comments only, a stream of events that never ends, and a list whose body never ends. Each command ends on its own with
// exit 3 and a message naming the limit (the client-level tests in test/api/hostile.test.ts cover
// the whole-response deadline with small configured values).
import http from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runCli } from "../helpers/cli.ts";

const KEY = "sk-hostile-commands-7a3f";

describe("commands against a hostile service", () => {
  let server: http.Server;
  let url: string;

  beforeAll(async () => {
    server = http.createServer((request, response) => {
      const stop = () => clearInterval(timer);
      let timer: NodeJS.Timeout | undefined;
      request.on("close", () => stop());
      if (request.url?.startsWith("/conversations/conv_endless/events")) {
        response.writeHead(200, { "content-type": "text/event-stream" });
        response.write("data: ");
        const chunk = "a".repeat(64 * 1024);
        timer = setInterval(() => response.write(chunk), 1);
      } else if (request.url?.startsWith("/conversations/conv_flood/events")) {
        // A conversation that starts and never ends: events as fast as the client reads them.
        response.writeHead(200, { "content-type": "text/event-stream" });
        const event = (n: number, payload: object) =>
          `id: ${n}\ndata: ${JSON.stringify({ id: `evt_${n}`, created_at: new Date(0).toISOString(), payload })}\n\n`;
        response.write(event(0, { type: "conversation.started" }));
        const text_delta = "c".repeat(256 * 1024);
        let n = 0;
        const flood = () => {
          while (
            !response.destroyed &&
            response.write(event(++n, { type: "agent.message.delta", generation_id: "g", text_delta }))
          );
        };
        response.on("drain", flood);
        flood();
      } else if (request.url?.startsWith("/conversations/conv_quiet/events")) {
        response.writeHead(200, { "content-type": "text/event-stream" });
        timer = setInterval(() => response.write(": keep-alive\n\n"), 100);
      } else if (request.url?.startsWith("/conversations")) {
        response.writeHead(200, { "content-type": "application/json" });
        response.write('{"data": ["');
        const chunk = "b".repeat(64 * 1024);
        timer = setInterval(() => response.write(chunk), 1);
      } else {
        response.writeHead(404).end();
      }
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  });

  const cli = (...args: string[]) =>
    runCli([...args, "--base-url", url], { env: { ...process.env, AGENT_IAC_API_KEY: KEY } });

  it("events: a line that never ends stops at the event size limit, exit 3", async () => {
    const result = await cli("events", "conv_endless");
    // The size limit ended it (its own words), not the idle timeout.
    expect(result.code, result.stderr).toBe(3);
    expect(result.stderr).toMatch(/larger than \d+ bytes \(the client's maxEventBytes limit\)/);
  });

  it("events: keep-alive comments alone do not keep a stalled stream open, exit 3 after the idle timeout", async () => {
    const result = await cli("events", "conv_quiet", "--idle-timeout", "1");
    expect(result.code, result.stderr).toBe(3);
    expect(result.stderr).toMatch(/no event for 1 s \(the idle timeout/);
    // The client's option name is no word of the user's.
    expect(result.stderr).not.toContain("idleTimeoutMs");
  });

  it("scenario capture: a stream that never ends stops at what a recording may hold, exit 3, nothing printed", async () => {
    const result = await cli("scenario", "capture", "conv_flood", "--callee-no", "+15550142100");
    expect(result.code, result.stderr).toBe(3);
    expect(result.stderr).toMatch(
      /stream of conversation conv_flood sent more than 67108864 bytes of events \(\d+ events\) without conversation\.ended/,
    );
    expect(result.stdout).toBe("");
  });

  it("conversations list: a body that never ends stops at the response size limit, exit 3", async () => {
    const result = await cli("conversations", "list");
    expect(result.code, result.stderr).toBe(3);
    expect(result.stderr).toMatch(/larger than \d+ bytes/);
    expect(result.stderr).not.toContain(KEY);
  });
});
