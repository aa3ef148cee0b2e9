// Hostile clients against the simulator (issue 14): each test makes the attack first, then checks
// the bound and that the answer is in the documented error shape with a request id.
import { spawn } from "node:child_process";
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { createServer, type Server } from "node:http";
import { connect } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Simulator as Running, Store, startSimulator } from "../../src/simulator/index.ts";
import type { StoredAgent } from "../../src/simulator/store.ts";
import {
  call,
  conversationalConfig,
  createConversation,
  createConversational,
  createProcedural,
  ok,
  openSession,
  waitFor,
} from "./helpers.ts";

const KEY = "sk-hostile";
const CLI = path.resolve("src/cli.ts");
let dir: string;
let sim: Running;

beforeAll(async () => {
  dir = await mkdtemp(path.join(tmpdir(), "sim-hostile-"));
  sim = await startSimulator({ port: 0, apiKey: KEY, eventDelayMs: 1, quiet: true, requestTimeoutMs: 400 });
});
afterAll(async () => {
  await sim.close();
  await rm(dir, { recursive: true, force: true });
});

/** A conversation request whose `context` nests `depth` levels, as JSON text. */
const deepRequest = (agentId: string, depth: number) =>
  `{"agent_id":${JSON.stringify(agentId)},"channel":{"type":"phone","callee_no":"+1555"},"context":${'{"a":'.repeat(depth)}"x"${"}".repeat(depth)}}`;

/** Raw bytes over a socket; resolves with everything the server sent before closing. */
function raw(url: string, bytes: string, options: { holdMs?: number } = {}): Promise<string> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), hostname);
    let received = "";
    socket.on("data", (chunk) => {
      received += chunk;
    });
    socket.on("error", reject);
    socket.on("close", () => resolve(received));
    socket.write(bytes);
    if (options.holdMs === undefined) socket.end();
  });
}

const jsonOf = (response: string) => JSON.parse(response.slice(response.indexOf("\r\n\r\n") + 4));

describe("request bodies", () => {
  it("a body nested deeper than 32 levels is refused with 400 naming the limit", async () => {
    const ca = await createConversational(sim);
    const reply = await call(sim, "POST", "/conversations", { text: deepRequest(ca.id, 5000) });
    expect(reply.status).toBe(400);
    expect(reply.body.error.message).toMatch(/nested deeper than 32 levels/);
    expect(reply.body.error.request_id).toMatch(/^req_/);
    expect(reply.headers["request-id"]).toBe(reply.body.error.request_id);
  });

  it("a body over 1 MiB is refused with 400 naming the limit", async () => {
    const reply = await call(sim, "POST", "/procedural_agents", {
      body: { name: "big", description: "x".repeat(1_100_000), config: {} },
    });
    expect(reply.status).toBe(400);
    expect(reply.body.error.message).toMatch(/larger than 1048576 bytes/);
    expect(reply.body.error.request_id).toMatch(/^req_/);
  });

  it("a slowly sent body is cut off with 408 in the error shape", async () => {
    const { host } = new URL(sim.url);
    // The client never sends the rest nor ends: the answer and the close can only be the server's cut.
    const response = await raw(
      sim.url,
      `POST /procedural_agents HTTP/1.1\r\nHost: ${host}\r\nAuthorization: Bearer ${KEY}\r\n` +
        "Service-Version: 2025-06-19\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{",
      { holdMs: 5000 },
    );
    expect(response).toMatch(/^HTTP\/1\.1 408/);
    expect(response).toMatch(/request-id: req_/);
    expect(jsonOf(response).error.message).toMatch(/not received within 400 ms/);
  });

  it("a key written twice in one object is refused with 400 naming its path, at any depth", async () => {
    const twice = [
      ['{"name":"a","description":"d","config":{},"name":"b"}', "name"],
      [
        '{"name":"a","description":"d","config":{"runtime":{"model":"openai/x","model":"openai/y"}}}',
        "config.runtime.model",
      ],
      // The same key however it is escaped.
      [
        '{"name":"a","description":"d","config":{"filter_statuses":[],"filter\\u005fstatuses":[]}}',
        "config.filter_statuses",
      ],
      [
        '{"name":"a","description":"d","config":{"tool":{"tools":[{"ns":"s","name":"x"},{"ns":"s","ns":"t","name":"y"}]}}}',
        "config.tool.tools[1].ns",
      ],
    ];
    for (const [text, field] of twice) {
      const reply = await call(sim, "POST", "/procedural_agents", { text });
      expect(reply.status, text).toBe(400);
      expect(reply.body.error).toMatchObject({ field, request_id: expect.stringMatching(/^req_/) });
      expect(reply.body.error.message).toBe(`${field}: written twice in one object (a key must be unique)`);
    }
    // Equal keys in different objects, and a key equal to a value, are not duplicates.
    const fine = await call(sim, "POST", "/procedural_agents", {
      text: '{"name":"name","description":"d","config":{"runtime":{"model":"openai/x","prompt":{"type":"fixed","text":"t"}},"tool":{"tools":[{"ns":"s","name":"a"},{"ns":"s","name":"b"}]}}}',
    });
    expect(fine.status, JSON.stringify(fine.body)).toBeLessThan(300);
  });

  it("a body that is not valid UTF-8 is refused with 400, never read with replacement characters", async () => {
    const head = Buffer.from('{"name":"caf');
    const tail = Buffer.from('","description":"d","config":{}}');
    for (const bad of [[0xe9], [0xc3], [0xed, 0xa0, 0x80], [0xff]]) {
      const reply = await call(sim, "POST", "/procedural_agents", {
        text: Buffer.concat([head, Buffer.from(bad), tail]),
      });
      expect(reply.status, String(bad)).toBe(400);
      expect(reply.body.error).toMatchObject({ field: "body", message: "body: not valid UTF-8" });
      expect(reply.body.error.request_id).toMatch(/^req_/);
    }
    const good = await call(sim, "POST", "/procedural_agents", {
      text: Buffer.concat([head, Buffer.from([0xc3, 0xa9]), tail]),
    });
    expect(good.status).toBeLessThan(300);
    const stored = await call(sim, "GET", "/_simulator/agents");
    expect(stored.body.procedural.find((a: { id: string }) => a.id === good.body.id)?.name).toBe("café");
  });

  it("the variant profile refuses both in its own error shape", async () => {
    const variant = await startSimulator({ port: 0, apiKey: KEY, quiet: true, profile: "variant" });
    try {
      const twice = await call(variant, "POST", "/procedural_agents", {
        text: '{"name":"a","name":"b","description":"d","config":{}}',
      });
      expect(twice.status).toBe(400);
      expect(twice.body).toEqual({ detail: "name: written twice in one object (a key must be unique)" });
      expect(twice.headers["x-request-id"]).toMatch(/^req_/);
      const bytes = await call(variant, "POST", "/procedural_agents", {
        text: Buffer.from([...Buffer.from('{"name":"'), 0xff, ...Buffer.from('"}')]),
      });
      expect(bytes.status).toBe(400);
      expect(bytes.body).toEqual({ detail: "body: not valid UTF-8" });
    } finally {
      await variant.close();
    }
  });

  it("headers over the parser's limit get 431 in the error shape with a request id", async () => {
    const { host } = new URL(sim.url);
    const response = await raw(
      sim.url,
      `GET /conversations HTTP/1.1\r\nHost: ${host}\r\nX-Big: ${"a".repeat(20_000)}\r\n\r\n`,
    );
    expect(response).toMatch(/^HTTP\/1\.1 431/);
    expect(response).toMatch(/request-id: req_/);
    expect(jsonOf(response).error).toMatchObject({ type: "error", request_id: expect.stringMatching(/^req_/) });
  });
});

describe("Host header (DNS rebinding)", () => {
  it("a request naming another host is refused; loopback names are served", async () => {
    const refused = await call(sim, "GET", "/conversations", { headers: { host: "evil.example:80" } });
    expect(refused.status).toBe(421);
    expect(refused.body.error).toMatchObject({ field: "Host", request_id: expect.stringMatching(/^req_/) });
    const port = new URL(sim.url).port;
    const admin = await call(sim, "GET", "/_simulator/agents", { headers: { host: `rebind.example:${port}` } });
    expect(admin.status).toBe(421);
    const local = await call(sim, "GET", "/conversations", { headers: { host: `localhost:${port}` } });
    expect(local.status).toBe(200);
  });
});

describe("post_url amplification", () => {
  it("a procedural agent named twice in postprocess_agents is refused", async () => {
    const pa = await createProcedural(sim);
    const reply = await call(sim, "POST", "/conversational_agents", {
      body: { name: "n", description: "d", config: conversationalConfig, postprocess_agents: [pa.id, pa.id] },
    });
    expect(reply.status).toBe(400);
    expect(reply.body.error).toMatchObject({ field: "postprocess_agents.1" });
    expect(reply.body.error.message).toMatch(/named twice/);
  });

  it("deliveries are bounded per second: the rest are recorded as not delivered", async () => {
    let received = 0;
    const hook: Server = createServer((request, response) => {
      received++;
      request.resume();
      response.end("ok");
    });
    await new Promise<void>((resolve) => hook.listen(0, "127.0.0.1", resolve));
    try {
      const port = (hook.address() as { port: number }).port;
      const before = (await ok(sim, "GET", "/_simulator/deliveries")).deliveries.length;
      const ids: string[] = [];
      for (let i = 0; i < 14; i++) {
        const config = { output: { post_url: `http://127.0.0.1:${port}/hook/${i}` } };
        ids.push((await createProcedural(sim, config, `p${i}`)).id);
      }
      const ca = await createConversational(sim, { postprocess_agents: ids });
      await createConversation(sim, ca.id, { context: { simulation: { user_turns: [] } } });
      const deliveries = await waitFor(async () => {
        const list = (await ok(sim, "GET", "/_simulator/deliveries")).deliveries.slice(before);
        return list.length === 14 && list;
      });
      const refused = deliveries.filter((d: { error: string | null }) => /more than 10 deliveries/.test(d.error ?? ""));
      expect(refused).toHaveLength(4);
      expect(received).toBe(10);
    } finally {
      hook.close();
    }
  });
});

describe("cursors", () => {
  it("a well-formed forged cursor is refused with 400", async () => {
    const forged = Buffer.from(JSON.stringify({ after: 3, filters: {} })).toString("base64url");
    const reply = await call(sim, "GET", `/conversations?cursor=${forged}`);
    expect(reply.status).toBe(400);
    expect(reply.body.error).toMatchObject({ field: "cursor" });
    // A real cursor with its position changed is forged too.
    for (let i = 0; i < 25; i++) await createProcedural(sim, {}, `page${i}`);
    const ca = await createConversational(sim);
    for (let i = 0; i < 21; i++) await createConversation(sim, ca.id);
    const first = await ok(sim, "GET", "/conversations");
    expect(first.cursor).toEqual(expect.any(String));
    const [data, mac] = String(first.cursor).split(".");
    const decoded = JSON.parse(Buffer.from(data as string, "base64url").toString());
    const changed = Buffer.from(JSON.stringify({ ...decoded, after: decoded.after + 1 })).toString("base64url");
    expect((await call(sim, "GET", `/conversations?cursor=${changed}.${mac}`)).status).toBe(400);
    expect((await call(sim, "GET", `/conversations?cursor=${first.cursor}`)).status).toBe(200);
  });
});

describe("WebSocket session", () => {
  it("invalid control messages: at most 20 server.error events are stored, then the socket is closed", async () => {
    const ca = await createConversational(sim);
    const conv = await createConversation(sim, ca.id, { context: { simulation: { wait_for_user: true } } });
    const session = openSession(sim, conv.id, { token: conv.channel.token });
    await session.opened;
    for (let i = 0; i < 200; i++) if (session.ws.readyState === 1) session.ws.send("not json");
    const closed = await session.closed;
    expect(closed.code).toBe(1008);
    const agentEnd = openSession(sim, conv.id);
    await agentEnd.opened;
    agentEnd.ws.send(JSON.stringify({ type: "end" }));
    await agentEnd.closed;
    const stored = agentEnd.received.filter((e) => e.payload.type === "server.error");
    expect(stored).toHaveLength(20);
  });
});

describe("persistence cannot be wedged", () => {
  it("after a deep body and two 90 MB WebSocket messages, a marker agent created afterwards survives a restart", async () => {
    const file = path.join(dir, "wedge.json");
    const first = await startSimulator({ port: 0, apiKey: KEY, dataFile: file, eventDelayMs: 1, quiet: true });
    let marker: string;
    try {
      const ca = await createConversational(first);
      const deep = await call(first, "POST", "/conversations", { text: deepRequest(ca.id, 5000) });
      expect(deep.status).toBe(400);
      const conv = await createConversation(first, ca.id, { context: { simulation: { wait_for_user: true } } });
      const huge = JSON.stringify({ type: "user.message", text: "x".repeat(90 * 1024 * 1024) });
      for (let i = 0; i < 2; i++) {
        const session = openSession(first, conv.id, { token: conv.channel.token });
        await session.opened;
        session.ws.send(huge);
        expect((await session.closed).code).toBe(1009);
      }
      marker = (await createProcedural(first, {}, "marker")).id;
      expect((await call(first, "GET", "/_simulator/health")).body).toMatchObject({ ok: true });
    } finally {
      await first.close();
    }
    expect(first.persistenceError()).toBeUndefined();
    const second = await startSimulator({ port: 0, apiKey: KEY, dataFile: file, eventDelayMs: 1, quiet: true });
    try {
      const agents = await ok(second, "GET", "/_simulator/agents");
      expect(agents.procedural.map((a: { id: string }) => a.id)).toContain(marker);
    } finally {
      await second.close();
    }
  }, 60_000);

  it("a record that cannot be serialized is left out; the others are still written", async () => {
    const file = path.join(dir, "unserializable.json");
    const store = await Store.open(file);
    const agent = (id: string, config: Record<string, unknown>): StoredAgent => ({
      kind: "procedural",
      id,
      seq: store.nextSeq(),
      created_at: new Date().toISOString(),
      versions: [{ name: id, description: "", config, version: 1, version_id: `${id}@v1`, created_at: "" }],
    });
    // No request can store such a value any more; planted here as the worst case.
    store.addAgent(agent("pa_poison", { filter_condition: 10n }));
    store.addAgent(agent("pa_marker", {}));
    await store.flush();
    expect(store.writeError).toBeUndefined();
    const state = JSON.parse(await readFile(file, "utf8"));
    expect(state.agents.map((a: { id: string }) => a.id)).toEqual(["pa_marker"]);
  });

  it("a failed write is reported: the health route fails and `agent-iac service` exits 3 on SIGTERM", async () => {
    const sub = path.join(dir, "vanishing");
    const { mkdir } = await import("node:fs/promises");
    await mkdir(sub);
    const file = path.join(sub, "data.json");
    const child = spawn(process.execPath, [CLI, "service", "--port", "0", "--data", file], {
      env: { ...process.env, AGENT_IAC_API_KEY: KEY },
    });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (chunk) => {
      stdout += chunk;
    });
    child.stderr.on("data", (chunk) => {
      stderr += chunk;
    });
    try {
      const url = await waitFor(async () => /listening on (http:\/\/127\.0\.0\.1:\d+)/.exec(stdout)?.[1]);
      const running = { url, apiKey: KEY };
      await createProcedural(running);
      // The simulator may be writing its temp file there at this moment: retry as rm -rf would.
      await rm(sub, { recursive: true, force: true, maxRetries: 10, retryDelay: 20 });
      await createProcedural(running, {}, "after the directory went");
      const health = await waitFor(async () => {
        const reply = await call(running, "GET", "/_simulator/health", { headers: { authorization: null } });
        return reply.status === 503 && reply;
      });
      expect(health.body.persistence).toMatchObject({ ok: false, error: expect.stringMatching(/ENOENT/) });
      const exit = new Promise<number | null>((resolve) => child.once("exit", resolve));
      child.kill("SIGTERM");
      expect(await exit).toBe(3);
      expect(stderr).toMatch(/data file was not saved/);
    } finally {
      if (child.exitCode === null) child.kill("SIGKILL");
    }
  });
});

describe("--data validation", () => {
  const cli = (args: string[]) =>
    new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) => {
      const child = spawn(process.execPath, [CLI, "service", "--port", "0", ...args], {
        env: { ...process.env, AGENT_IAC_API_KEY: KEY },
      });
      let stdout = "";
      let stderr = "";
      child.stdout.on("data", (c) => {
        stdout += c;
      });
      child.stderr.on("data", (c) => {
        stderr += c;
      });
      const timer = setTimeout(() => child.kill("SIGTERM"), 8000);
      child.on("exit", (code) => {
        clearTimeout(timer);
        resolve({ code, stdout, stderr });
      });
    });

  it("a missing directory exits 2 before serving", async () => {
    const result = await cli(["--data", path.join(dir, "no-such-dir", "data.json")]);
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/does not exist/);
    expect(result.stdout).not.toMatch(/listening/);
  });

  it("a file that is not the simulator's exits 2 and never echoes its content", async () => {
    const foreign = path.join(dir, "passwd");
    await writeFile(foreign, "root:x:0:0:SECRET-CONTENT:/root:/bin/bash\n");
    const result = await cli(["--data", foreign]);
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/not a simulator data file/);
    expect(result.stderr + result.stdout).not.toMatch(/SECRET-CONTENT|root:x/);
    expect(await readFile(foreign, "utf8")).toMatch(/^root:x/);
  });
});
