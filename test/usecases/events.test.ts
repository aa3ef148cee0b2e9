// followConversationEvents driven directly against the simulator (port 0): the stream written as it
// arrives (a transcript, or one envelope per line) to conversation.ended, the stream token used
// only with its events URL (a refused one said as the token's fault), a stop as an
// InterruptedError naming what arrived, an API failure as the client's typed error (status,
// reason, request id), and the client closed when the use case ends.
import { mkdtemp, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { type Client, createClient } from "../../src/api/index.ts";
import {
  ConfigError,
  InterruptedError,
  InvalidInputError,
  NotFoundError,
  plainNaming,
} from "../../src/errors/index.ts";
import { projectContext } from "../../src/settings/index.ts";
import { followConversationEvents } from "../../src/usecases/index.ts";
import { startTestSimulator } from "../helpers/simulator.ts";
import { socketsDuring } from "../helpers/sockets.ts";

type Sim = Awaited<ReturnType<typeof startTestSimulator>>;
let sim: Sim;
let seed: Client;
let dir: string;
let agentId: string;
let ended: Awaited<ReturnType<Client["conversations"]["create"]>>;

function output() {
  let text = "";
  return { out: { write: (chunk: string) => (text += chunk) }, text: () => text };
}

/** A request on the simulator's address, from a project whose environment is `env` (the API key by default). */
function request(conversationId: string, env: NodeJS.ProcessEnv = { AGENT_IAC_API_KEY: sim.apiKey }) {
  return {
    project: projectContext({ cwd: dir, env }),
    stack: "dev",
    baseUrl: sim.url,
    conversationId,
    format: "ndjson" as const,
  };
}

const never = new AbortController().signal;

beforeAll(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), "agent-iac-events-"));
  sim = await startTestSimulator({ port: 0, eventDelayMs: 5, quiet: true });
  seed = createClient({ baseUrl: sim.url, apiKey: sim.apiKey });
  agentId = (
    await seed.conversationalAgents.create({
      name: "events",
      description: "d",
      config: { personas: [{ name: "Grace" }] },
    })
  ).id;
  ended = await seed.conversations.create({
    agent_id: agentId,
    channel: { type: "phone", callee_no: "+15550100" },
    context: { simulation: { user_turns: ["I want a refund", "Bye."] } },
  });
  for await (const _ of seed.conversations.events(ended.id)) {
    // until the conversation has ended
  }
});
afterAll(async () => {
  await seed?.close();
  await sim?.close();
  await rm(dir, { recursive: true, force: true });
});

describe("followConversationEvents", () => {
  test("NDJSON: one envelope per line, to conversation.ended; the client is closed", async () => {
    const { out, text } = output();
    const run = await socketsDuring(() => followConversationEvents(request(ended.id), { out, signal: never }));
    expect(run.error).toBeUndefined();
    const lines = text().trim().split("\n");
    const envelopes = lines.map((line) => JSON.parse(line) as { payload: { type: string } });
    expect(envelopes[0]?.payload.type).toBe("conversation.started");
    expect(envelopes.at(-1)?.payload.type).toBe("conversation.ended");
    expect(run.result).toEqual({ events: envelopes.length, notes: [], code: 0 });
    expect(run.sockets.length).toBeGreaterThan(0);
    expect(run.sockets.every((socket) => socket.destroyed)).toBe(true);
  });

  test("a transcript: a line per turn, ending with the conversation's end", async () => {
    const { out, text } = output();
    await followConversationEvents({ ...request(ended.id), format: "transcript" }, { out, signal: never });
    expect(text()).toContain("user: I want a refund\n");
    expect(text()).toMatch(/^agent: Hello, this is Grace\./m);
    expect(text().trimEnd().endsWith("(conversation ended)")).toBe(true);
  });

  test("with a stream token and its events URL, no API key is needed; a refused token is the token's fault", async () => {
    const { out, text } = output();
    const env = { AGENT_IAC_STREAM_TOKEN: ended.channel.token };
    const eventsUrl = ended.channel.events_url;
    await followConversationEvents(
      { ...request(ended.id, env), baseUrl: undefined, eventsUrl },
      { out, signal: never },
    );
    expect(text()).toContain('"conversation.ended"');

    const other = await seed.conversations.create({
      agent_id: agentId,
      channel: { type: "phone", callee_no: "+15550101" },
    });
    const run = await socketsDuring(() =>
      followConversationEvents(
        { ...request(ended.id, { AGENT_IAC_STREAM_TOKEN: other.channel.token }), baseUrl: undefined, eventsUrl },
        { out: output().out, signal: never },
      ),
    );
    expect(run.error).toBeInstanceOf(ConfigError);
    const refused = run.error as ConfigError;
    expect(refused.message).toContain("the service refused the stream token from AGENT_IAC_STREAM_TOKEN");
    expect(refused.message).toMatch(/403: .*request id req_/);
    expect(refused.message).not.toContain(other.channel.token);
    expect(run.sockets.every((socket) => socket.destroyed)).toBe(true);
  });

  test("an events URL that is no URL: the input named, the address shown without its query", async () => {
    const failed = await followConversationEvents(
      { ...request(ended.id), eventsUrl: "not a url?token=tok_secret" },
      { out: output().out, signal: never },
    ).catch((error: unknown) => error);
    expect(failed).toBeInstanceOf(InvalidInputError);
    expect((failed as InvalidInputError).field).toBe("eventsUrl");
    expect((failed as InvalidInputError).describe(plainNaming).message).toBe("eventsUrl is not a URL: not a url");
  });

  test("an unknown conversation: NotFoundError with its status and request id", async () => {
    const failed = await followConversationEvents(request("conv_nope"), { out: output().out, signal: never }).catch(
      (error: unknown) => error,
    );
    expect(failed).toBeInstanceOf(NotFoundError);
    expect((failed as NotFoundError).status).toBe(404);
    expect((failed as NotFoundError).requestId).toEqual(expect.any(String));
  });

  test("a stop closes the stream: an InterruptedError naming what arrived, the client closed", async () => {
    const live = await seed.conversations.create({
      agent_id: agentId,
      channel: { type: "phone", callee_no: "+15550102" },
      context: { simulation: { user_turns: ["one", "two", "three", "four", "five", "Bye."] } },
    });
    const stop = new AbortController();
    let written = 0;
    // Stopped as soon as the first envelope is written, long before the conversation ends.
    const out = { write: () => (written++ === 0 ? stop.abort() : undefined) };
    const run = await socketsDuring(() =>
      followConversationEvents({ ...request(live.id), format: "ndjson" }, { out, signal: stop.signal }),
    );
    expect(run.error).toBeInstanceOf(InterruptedError);
    expect((run.error as InterruptedError).message).toMatch(/^interrupted: the stream was closed after \d+ events?$/);
    expect(written).toBeGreaterThan(0);
    expect(run.sockets.every((socket) => socket.destroyed)).toBe(true);
  });
});
