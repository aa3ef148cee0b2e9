// The request core against scripted servers: headers, validation before sending, retries that never
// duplicate a creating POST, the error factory, paging and its runaway-cursor guard.
import { execFile } from "node:child_process";
import { createServer } from "node:net";
import { promisify } from "node:util";
import { afterEach, describe, expect, test } from "vitest";
import packageJson from "../../package.json" with { type: "json" };
import {
  type ApiError,
  ConnectionError,
  createClient,
  InvalidRequestError,
  InvalidResponseError,
  NotFoundError,
  RateLimitError,
  ServerError,
} from "../../src/api/index.ts";
import { pathFor } from "../../src/api/path.ts";
import { projectRoot } from "../../src/workspace/index.ts";
import { json, type ScriptedServer, scriptedServer } from "./scripted-server.ts";

const KEY = "sk_live_very_secret_key";
const agentBody = { name: "a", description: "d", config: {} };

let server: ScriptedServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

const fast = (url: string) => createClient({ baseUrl: url, apiKey: KEY, retryBaseDelayMs: 1 });

describe("request core", () => {
  test("headers of a POST: Authorization, Service-Version, Content-Type, User-Agent; the body as validated", async () => {
    server = await scriptedServer((_req, res) => json(res, 200, { id: "ca_1", version_id: "ca_1@v1", extra: true }));
    const client = fast(server.url);
    const created = await client.conversationalAgents.create(agentBody);
    expect(created).toEqual({ id: "ca_1", version_id: "ca_1@v1", extra: true });
    const [request] = server.requests;
    expect(request?.method).toBe("POST");
    expect(request?.url).toBe("/conversational_agents");
    expect(request?.headers).toMatchObject({
      authorization: `Bearer ${KEY}`,
      "service-version": "2025-06-19",
      "content-type": "application/json",
      "user-agent": `agent-iac/${packageJson.version}`,
    });
    expect(JSON.parse(request?.body ?? "")).toEqual(agentBody);
    await client.close();
  });

  test("an invalid request is refused before anything is sent", async () => {
    server = await scriptedServer((_req, res) => json(res, 200, {}));
    const client = fast(server.url);
    const error = await client.conversationalAgents
      .create({ ...agentBody, colour: "red" } as never)
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(InvalidRequestError);
    expect((error as ApiError).status).toBeUndefined();
    expect((error as Error).message).toMatch(/request not sent/);
    expect(() => client.conversations.list({ created_at_gte: "yesterday" })).toThrow(InvalidRequestError);
    expect(server.requests).toHaveLength(0);
    await client.close();
  });

  test("path ids are encoded as one segment", async () => {
    expect(pathFor`/conversations/${"a/b?c#d"}/procedures`).toBe("/conversations/a%2Fb%3Fc%23d/procedures");
    expect(() => pathFor`/conversations/${".."}/events`).toThrow(TypeError);
    server = await scriptedServer((_req, res) => json(res, 200, { page: [], cursor: null }));
    const client = fast(server.url);
    await client.conversations.procedures("conv/../x").toArray();
    expect(server.requests[0]?.url).toBe("/conversations/conv%2F..%2Fx/procedures");
    await client.close();
  });

  test("a POST reset after it was sent is not retried: ConnectionError with requestSent", async () => {
    server = await scriptedServer((req) => req.socket.destroy());
    const client = fast(server.url);
    const error = await client.conversationalAgents.create(agentBody).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ConnectionError);
    expect((error as ConnectionError).requestSent).toBe(true);
    expect((error as Error).message).toMatch(/\(1 attempt\)/);
    expect(server.requests).toHaveLength(1);
    await client.close();
  });

  test("a POST answered 500 or 503 is not retried; a GET is, until it succeeds", async () => {
    server = await scriptedServer((req, res, _body, index) => {
      if (req.method === "POST" || index < 3) return json(res, 503, { error: "busy" }, { "retry-after": "0" });
      json(res, 200, { data: [], cursor: null });
    });
    const client = fast(server.url);
    await expect(client.proceduralAgents.create(agentBody)).rejects.toBeInstanceOf(ServerError);
    expect(server.requests).toHaveLength(1);
    expect(await client.conversations.list().toArray()).toEqual([]);
    expect(server.requests.map((r) => r.method)).toEqual(["POST", "GET", "GET", "GET"]);
    await client.close();
  });

  test("a POST answered 429 is retried (the service did not act); bounded, and the error counts the attempts", async () => {
    server = await scriptedServer((_req, res) =>
      json(res, 429, { error: { message: "slow down" } }, { "retry-after": "0" }),
    );
    const client = createClient({ baseUrl: server.url, apiKey: KEY, maxRetries: 2, retryBaseDelayMs: 1 });
    const error = await client.conversations
      .create({ agent_id: "ca_1", channel: { type: "phone", callee_no: "+15550100" } })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(RateLimitError);
    expect((error as Error).message).toBe("POST /conversations → 429: slow down (3 attempts)");
    expect(server.requests).toHaveLength(3);
    await client.close();
  });

  test("a POST to a refused port is retried (nothing was sent), then fails with requestSent false", async () => {
    const port = await new Promise<number>((resolve) => {
      const s = createServer().listen(0, "127.0.0.1", () => {
        const p = (s.address() as { port: number }).port;
        s.close(() => resolve(p));
      });
    });
    const client = createClient({
      baseUrl: `http://127.0.0.1:${port}`,
      apiKey: KEY,
      maxRetries: 2,
      retryBaseDelayMs: 1,
    });
    const error = (await client.conversationalAgents.create(agentBody).catch((e: unknown) => e)) as ConnectionError;
    expect(error).toBeInstanceOf(ConnectionError);
    expect(error.requestSent).toBe(false);
    expect(error.networkCode).toBe("ECONNREFUSED");
    expect(error.code).toBe("AGENT_IAC_API_CONNECTION");
    expect(error.attempts).toBe(3);
    expect(error.message).toMatch(/could not connect .*\(3 attempts\)/);
    await client.close();
  });

  test("errors: class, status, path without query, request id, parsed body; never the key", async () => {
    server = await scriptedServer((req, res) => {
      res.writeHead(404, { "content-type": "application/json", "request-id": "req_42" });
      res.end(JSON.stringify({ error: { message: `no such thing (you sent ${req.headers.authorization})` } }));
    });
    const client = fast(server.url);
    const error = (await client.conversations
      .list({ created_at_gte: "2025-01-01T00:00:00Z" })
      .toArray()
      .catch((e: unknown) => e)) as NotFoundError;
    expect(error).toBeInstanceOf(NotFoundError);
    expect(error).toMatchObject({
      status: 404,
      method: "GET",
      path: "/conversations",
      requestId: "req_42",
      attempts: 1,
    });
    expect(error.message).toContain("request id req_42");
    expect(error.message).not.toContain(KEY);
    expect(JSON.stringify(error.body)).not.toContain(KEY);
    expect(error.body).toEqual({ error: { message: "no such thing (you sent Bearer ***)" } });
    await client.close();
  });

  test("a long text error body is truncated", async () => {
    server = await scriptedServer((_req, res) => {
      res.writeHead(400, { "content-type": "text/plain" });
      res.end("x".repeat(10_000));
    });
    const client = fast(server.url);
    const error = (await client.procedures
      .list()
      .toArray()
      .catch((e: unknown) => e)) as InvalidRequestError;
    expect(error).toBeInstanceOf(InvalidRequestError);
    expect(typeof error.body).toBe("string");
    expect((error.body as string).length).toBeLessThan(2100);
    await client.close();
  });

  test("a GET answered with the wrong shape is an InvalidResponseError; unknown fields are kept", async () => {
    server = await scriptedServer((req, res) =>
      req.method === "GET"
        ? json(res, 200, { data: "not a list", cursor: null }, { "x-request-id": "req_shape" })
        : json(res, 200, { id: "pa_1", version_id: "pa_1@v1", new_field: [1] }),
    );
    const client = fast(server.url);
    const error = (await client.conversations
      .list()
      .toArray()
      .catch((e: unknown) => e)) as InvalidResponseError;
    expect(error).toBeInstanceOf(InvalidResponseError);
    expect(error.message).toMatch(/GET \/conversations → 200: unexpected response: .*\(request id req_shape\)/s);
    expect(await client.proceduralAgents.create(agentBody)).toMatchObject({ new_field: [1] });
    await client.close();
  });

  test("a creating POST answered 2xx with an unreadable body is a lost response (may have acted), never retried", async () => {
    const bodies = [JSON.stringify({ id: "ca_1" }), "<html>oops", `{"id": "ca_1", "version_id": "ca_1@v1"`];
    server = await scriptedServer((_req, res, _b, index) => {
      res.writeHead(200, { "content-type": "application/json", "request-id": `req_${index}` });
      res.end(bodies[index]);
    });
    const client = fast(server.url);
    for (const [index, reason] of [
      "version_id: expected string, received undefined",
      "the body is not JSON",
      "the body is not JSON",
    ].entries()) {
      const error = (await client.conversationalAgents.create(agentBody).catch((e: unknown) => e)) as ConnectionError;
      expect(error).toBeInstanceOf(ConnectionError);
      expect(error).toMatchObject({ requestSent: true, status: 200, requestId: `req_${index}`, attempts: 1 });
      expect(error.message).toContain(reason);
      expect(error.message).toMatch(/could not be read .* it may have acted on the request/s);
    }
    expect(server.requests).toHaveLength(3);
    await client.close();
  });
});

describe("paging", () => {
  test("items across pages, pages() with their bodies, filters sent on every page", async () => {
    server = await scriptedServer((req, res) => {
      const url = new URL(req.url ?? "", "http://x");
      const cursor = url.searchParams.get("cursor");
      const next = cursor === null ? "c2" : cursor === "c2" ? "c3" : null;
      json(res, 200, {
        data: [{ id: `f_${cursor ?? "c1"}`, conversation_id: "conv_1", created_at: "t", rating: "good" }],
        cursor: next,
        reasons: { r: 1 },
      });
    });
    const client = fast(server.url);
    const list = client.feedbacks.list({ service_id: "svc_1", created_at_gte: "2025-01-01" });
    expect((await list.toArray()).map((f) => f.id)).toEqual(["f_c1", "f_c2", "f_c3"]);
    const pages = [];
    for await (const page of list.pages()) pages.push(page);
    expect(pages.map((p) => p.cursor)).toEqual(["c2", "c3", null]);
    expect(pages[0]?.body.reasons).toEqual({ r: 1 });
    for (const r of server.requests) {
      expect(new URL(r.url, "http://x").searchParams.get("service_id")).toBe("svc_1");
      expect(new URL(r.url, "http://x").searchParams.get("created_at_gte")).toBe("2025-01-01");
    }
    await client.close();
  });

  test("a repeated cursor stops with an error instead of looping forever", async () => {
    server = await scriptedServer((req, res) => {
      const cursor = new URL(req.url ?? "", "http://x").searchParams.get("cursor");
      // c1 → c2 → c1 → …
      json(res, 200, { page: [], cursor: cursor === "c1" ? "c2" : "c1" });
    });
    const client = fast(server.url);
    const error = await client.procedures
      .list()
      .toArray()
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(InvalidResponseError);
    expect((error as Error).message).toMatch(/page 3 returned the cursor "c1", which was already followed/);
    expect(server.requests).toHaveLength(3);
    await client.close();
  });

  test("the same cursor as the one given stops too", async () => {
    server = await scriptedServer((_req, res) => json(res, 200, { data: [], cursor: "same" }));
    const client = fast(server.url);
    await expect(client.conversations.list({ cursor: "same" }).toArray()).rejects.toThrow(/already followed/);
    expect(server.requests).toHaveLength(1);
    await client.close();
  });
});

test("importing the client opens nothing (loadable in a Pulumi dynamic provider)", async () => {
  const script =
    'await import("./src/api/index.ts"); const { createClient } = await import("./src/api/index.ts");' +
    'createClient({ baseUrl: "http://127.0.0.1:9", apiKey: "k" });' +
    "console.log(JSON.stringify(process.getActiveResourcesInfo().filter((r) => r !== 'TTYWrap' && r !== 'PipeWrap')))";
  const { stdout } = await promisify(execFile)(process.execPath, ["--input-type=module", "-e", script], {
    cwd: projectRoot,
  });
  expect(JSON.parse(stdout)).toEqual([]);
});
