// listRecords driven directly against the simulator (port 0, two items a page): the pages read one
// after another and written as they arrive (a table with its count and note, or NDJSON), the
// connection told before any request, an API failure as the client's typed error (status, reason,
// request id), and the client closed when the use case ends, whether it succeeded or failed.
import { mkdtemp, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { type Client, createClient } from "../../src/api/index.ts";
import { AuthenticationError, ConfigError, NotFoundError } from "../../src/errors/index.ts";
import { type Connection, projectContext } from "../../src/settings/index.ts";
import { listRecords } from "../../src/usecases/index.ts";
import { requestCounts, simulatorCall, startTestSimulator } from "../helpers/simulator.ts";
import { socketsDuring } from "../helpers/sockets.ts";

type Sim = Awaited<ReturnType<typeof startTestSimulator>>;
let sim: Sim;
let seed: Client;
let dir: string;
const conversations: string[] = [];

/** What the use case wrote, as one string. */
function output() {
  let text = "";
  return { out: { write: (chunk: string) => (text += chunk) }, text: () => text };
}

/** A request on the simulator's address, from a project whose environment holds `key`. */
function request(list: Parameters<typeof listRecords>[0]["list"], key = sim.apiKey) {
  return {
    project: projectContext({ cwd: dir, env: { AGENT_IAC_API_KEY: key } }),
    stack: "dev",
    baseUrl: sim.url,
    list,
    query: {},
  };
}

const ndjson = (text: string) =>
  text
    .trim()
    .split("\n")
    .filter(Boolean)
    .map((line) => JSON.parse(line) as Record<string, unknown>);

beforeAll(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), "agent-iac-lists-"));
  sim = await startTestSimulator({ port: 0, eventDelayMs: 1, pageSize: 2, quiet: true });
  seed = createClient({ baseUrl: sim.url, apiKey: sim.apiKey });
  const agent = await seed.conversationalAgents.create({ name: "lists", description: "d", config: {} });
  for (let i = 0; i < 5; i++) {
    const conversation = await seed.conversations.create({
      agent_id: agent.id,
      channel: { type: "phone", callee_no: "+15550100" },
      context: { simulation: { user_turns: ["Bye."] } },
    });
    conversations.push(conversation.id);
    await simulatorCall(sim, "POST", "/_simulator/feedbacks", {
      conversation_id: conversation.id,
      rating: "good",
      reasons: ["fast"],
    });
  }
});
afterAll(async () => {
  await seed?.close();
  await sim?.close();
  await rm(dir, { recursive: true, force: true });
});

describe("listRecords", () => {
  test("NDJSON: every item of every page, one JSON object per line, each page its own request", async () => {
    const before = (await requestCounts(sim)).by_route["GET /conversations"] ?? 0;
    const { out, text } = output();
    const listed = await listRecords({ ...request("conversations"), format: "ndjson" }, { out });
    const items = ndjson(text());
    expect(items.map((item) => item.id).sort()).toEqual([...conversations].sort());
    expect(listed).toEqual({ items: 5, notes: [], code: 0 });
    // Five items two a page: three pages, read one after another.
    expect(((await requestCounts(sim)).by_route["GET /conversations"] ?? 0) - before).toBe(3);
  });

  test("a table: the header, a row per item, the count; --limit stops paging once it has its items", async () => {
    const { out, text } = output();
    const listed = await listRecords({ ...request("conversations"), format: "table" }, { out });
    const lines = text().trimEnd().split("\n");
    expect(lines[0]).toMatch(/^ID\s+AGENT_ID\s+STATUS\s+DIRECTION/);
    expect(lines).toHaveLength(1 + 5 + 1);
    expect(lines.at(-1)).toBe("5 items");
    expect(listed.items).toBe(5);

    const before = (await requestCounts(sim)).by_route["GET /conversations"] ?? 0;
    const limited = output();
    const three = await listRecords({ ...request("conversations"), format: "table", limit: 3 }, { out: limited.out });
    expect(three.items).toBe(3);
    expect(limited.text().trimEnd().split("\n").at(-1)).toBe("3 items");
    // Three items need two pages of two, not the third.
    expect(((await requestCounts(sim)).by_route["GET /conversations"] ?? 0) - before).toBe(2);
  });

  test("feedbacks: the first page's reasons are a note of the table; NDJSON is the items alone", async () => {
    const table = output();
    const listed = await listRecords(
      { ...request("feedbacks"), query: { service_id: sim.serviceId }, format: "table" },
      { out: table.out },
    );
    expect(listed.items).toBe(5);
    expect(listed.notes).toEqual([expect.stringMatching(/^reasons: \{.*"fast"/)]);
    expect(table.text()).not.toContain("reasons: {");
    const json = output();
    const asJson = await listRecords(
      { ...request("feedbacks"), query: { service_id: sim.serviceId }, format: "ndjson" },
      { out: json.out },
    );
    expect(asJson.notes).toEqual([]);
    expect(ndjson(json.text())).toHaveLength(5);
  });

  test("tells the connection it reads from, then closes the client it opened", async () => {
    const told: Connection[] = [];
    const before = (await requestCounts(sim)).count;
    const { out } = output();
    const run = await socketsDuring(() =>
      listRecords(
        { ...request("procedures"), format: "ndjson" },
        {
          out,
          onConnection: (connection) => told.push(connection),
        },
      ),
    );
    expect(run.error).toBeUndefined();
    expect(told).toEqual([expect.objectContaining({ baseUrl: sim.url })]);
    expect((await requestCounts(sim)).count).toBeGreaterThan(before);
    expect(run.sockets.length).toBeGreaterThan(0);
    expect(run.sockets.every((socket) => socket.destroyed)).toBe(true);
  });

  test("a refused key is the client's AuthenticationError (status, reason, request id); the client is closed", async () => {
    const { out, text } = output();
    const told: Connection[] = [];
    const run = await socketsDuring(() =>
      listRecords(
        { ...request("conversations", "sk_wrong_secret"), format: "table" },
        { out, onConnection: (connection) => told.push(connection) },
      ),
    );
    // The command explains the failure in the terms of the connection it was told of first.
    expect(told).toEqual([expect.objectContaining({ baseUrl: sim.url, keySource: expect.any(String) })]);
    expect(run.error).toBeInstanceOf(AuthenticationError);
    const error = run.error as AuthenticationError;
    expect(error.status).toBe(401);
    expect(error.requestId).toEqual(expect.any(String));
    expect(error.message).toMatch(/401/);
    expect(error.message).not.toContain("sk_wrong_secret");
    // Nothing was written of a list that was never read.
    expect(text()).toBe("");
    expect(run.sockets.length).toBeGreaterThan(0);
    expect(run.sockets.every((socket) => socket.destroyed)).toBe(true);
  });

  test("an unknown conversation's procedures: NotFoundError with its status and request id", async () => {
    const { out } = output();
    const failed = await listRecords(
      { ...request("conversation procedures"), conversationId: "conv_nope", format: "ndjson" },
      { out },
    ).catch((error: unknown) => error);
    expect(failed).toBeInstanceOf(NotFoundError);
    expect((failed as NotFoundError).status).toBe(404);
    expect((failed as NotFoundError).requestId).toEqual(expect.any(String));
  });

  test("no key on an address that is not loopback: a ConfigError before any request", async () => {
    const { out } = output();
    const failed = await listRecords(
      {
        ...request("conversations"),
        project: projectContext({ cwd: dir, env: {} }),
        baseUrl: "https://agents.example.invalid",
        format: "ndjson",
      },
      { out },
    ).catch((error: unknown) => error);
    expect(failed).toBeInstanceOf(ConfigError);
    expect((failed as ConfigError).message).toMatch(/no API key/);
  });
});
