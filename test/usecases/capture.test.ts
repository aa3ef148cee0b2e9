// The capture use case reads a call from a recording or from the service's stream, and decides what
// a capture may hold: the recording's channel with the callee number given, a stream read to
// `conversation.ended` or until it is silent, a Ctrl+C as an interruption; `scenario capture`'s use
// case turns it into the YAML to print, the lines said beside it and the exit code. A recording of a
// real call to the simulator on port 0 (test/helpers/recorded-call.ts), the same simulator's streams.
import { readdir, readFile } from "node:fs/promises";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parse } from "yaml";
import { flagNaming } from "../../src/commands/errors.ts";
import { InterruptedError, InvalidInputError } from "../../src/errors/index.ts";
import { projectContext } from "../../src/settings/index.ts";
import { captureScenario, recordedCall, serviceCall } from "../../src/usecases/capture.ts";
import { type RecordedCall, recordedCall as recordCall } from "../helpers/recorded-call.ts";
import { fakeRun } from "../helpers/run-io.ts";
import { createConversation } from "../simulator/helpers.ts";

let recorded: RecordedCall;
/** The recorded call's conversation id (its recording's first line names it). */
let conversationId: string;

beforeAll(async () => {
  recorded = await recordCall("capture-usecase", { agent: "support", scenario: "greets-and-summarizes" });
  const dir = path.join(recorded.dir, "rec");
  const file = (await readdir(dir, { recursive: true })).find((name) => name.endsWith(".jsonl"));
  const header = JSON.parse((await readFile(path.join(dir, file as string), "utf8")).split("\n")[0] as string);
  conversationId = header.conversation_id;
}, 60_000);
afterAll(async () => {
  await recorded?.close();
});

describe("recordedCall", () => {
  it("the recording's call, its agent and version, with the callee number given in place of the recorded one", async () => {
    const call = await recordedCall(path.join(recorded.dir, "rec"), { conversationId, calleeNo: "+15550100999" });
    expect(call).toMatchObject({
      conversationId,
      agent: "support",
      versionId: recorded.service.held.support?.version_id,
      channel: { callee_no: "+15550100999" },
    });
    expect(call.envelopes.at(-1)?.payload.type).toBe("conversation.ended");
    // Without one, the recorded scenario's own channel.
    const asRecorded = await recordedCall(path.join(recorded.dir, "rec"), { conversationId });
    expect(asRecorded.channel.callee_no).not.toBe("+15550100999");
    expect(asRecorded.channel.callee_no).toMatch(/^\+\d+$/);
  });

  it("a directory that is not there, or holds no recording of the call, is bad input naming --from-recording", async () => {
    const missing = path.join(recorded.dir, "no-such-dir");
    const gone = await recordedCall(missing, { conversationId }).catch((e: unknown) => e);
    expect(gone).toBeInstanceOf(InvalidInputError);
    expect(gone).toMatchObject({ code: "AGENT_IAC_INVALID_INPUT", field: "fromRecording", value: missing });
    const other = await recordedCall(path.join(recorded.dir, "rec"), { conversationId: "conv_other" }).catch(
      (e: unknown) => e,
    );
    expect(other).toBeInstanceOf(InvalidInputError);
    expect((other as InvalidInputError).hint).toMatch(/agent-iac smoke --record DIR/);
    expect(String((other as Error).message)).toContain("no recording of conversation conv_other");
  });
});

describe("serviceCall", () => {
  /** The recorded call's simulator as a stack's connection (the use case opens and closes its client). */
  const service = () => {
    const { sim } = recorded.service;
    const connection = {
      baseUrl: sim.url,
      apiKey: sim.apiKey,
      serviceVersion: undefined,
      keySource: "AGENT_IAC_API_KEY" as const,
      loopback: true,
    };
    return { connection, stack: "dev" };
  };
  const controller = () => new AbortController();

  it("the stream of a conversation read to its end; the channel is the callee number given", async () => {
    const { sim, held } = recorded.service;
    const created = await createConversation(sim, held.support?.id as string);
    const call = await serviceCall(
      { conversationId: created.id, calleeNo: "+15550100123", idleSeconds: 30, ...service() },
      { signal: controller().signal },
    );
    const types = call.envelopes.map((e) => e.payload.type);
    expect(types[0]).toBe("conversation.started");
    expect(types.at(-1)).toBe("conversation.ended");
    expect(types.filter((t) => t === "conversation.ended")).toHaveLength(1);
    expect(call).toMatchObject({ conversationId: created.id, channel: { callee_no: "+15550100123" } });
  });

  it("a stream gone silent before its end: what was read is the capture", async () => {
    const { sim, held } = recorded.service;
    // A conversation that waits for a caller line that never comes: its stream goes silent.
    const waiting = await createConversation(sim, held.support?.id as string, {
      context: { simulation: { user_turns: [], wait_for_user: true } },
    });
    const call = await serviceCall(
      { conversationId: waiting.id, calleeNo: "+15550100123", idleSeconds: 1, ...service() },
      { signal: controller().signal },
    );
    const types = call.envelopes.map((e) => e.payload.type);
    expect(types[0]).toBe("conversation.started");
    expect(types).not.toContain("conversation.ended");
  });

  it("an interrupted read is an InterruptedError saying how much was read", async () => {
    const stopped = controller();
    stopped.abort();
    const error = await serviceCall(
      { conversationId, calleeNo: "+15550100123", idleSeconds: 30, ...service() },
      { signal: stopped.signal },
    ).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(InterruptedError);
    expect(error).toMatchObject({ code: "AGENT_IAC_INTERRUPTED" });
    expect(String(error)).toContain("the stream was closed after 0 event(s)");
  });
});

describe("captureScenario", () => {
  /** The recorded call's project, its key for the simulator in the run's environment. */
  const project = () => projectContext({ cwd: recorded.dir, env: { AGENT_IAC_API_KEY: recorded.service.sim.apiKey } });
  const call = { stack: "dev", idleSeconds: 30 };

  it("from a recording named relative to the project: the YAML is the report, the notes end with what it holds, exit 0, no service asked", async () => {
    const run = fakeRun();
    const outcome = await captureScenario(
      { ...call, conversationId, project: project(), fromRecording: "rec", calleeNo: "+15550100999", name: "mine" },
      run.io,
    );
    expect(outcome.code).toBe(0);
    expect(outcome.report).toMatch(new RegExp(`^# Captured from conversation ${conversationId} \\(support, ca_`));
    const [scenario] = parse(outcome.report ?? "") as {
      name: string;
      channel: { callee_no: string };
      caller?: { turns: string[] };
      expect: { tool_calls?: string[] };
    }[];
    expect(scenario).toMatchObject({ name: "mine", channel: { callee_no: "+15550100999" } });
    const turns = scenario?.caller?.turns.length ?? 0;
    const tools = scenario?.expect.tool_calls?.length ?? 0;
    expect(outcome.notes.at(-1)).toBe(`captured ${turns} caller turn(s) and ${tools} tool(s) from ${conversationId}\n`);
    for (const note of outcome.notes.slice(0, -1)) expect(note).toMatch(/^note: [^\n]+\n$/);
    expect(run.connections).toEqual([]);
  });

  it("from the service: the stack's connection is said to the run, the stream read to its end", async () => {
    const { sim, held } = recorded.service;
    const created = await createConversation(sim, held.support?.id as string);
    const run = fakeRun();
    const outcome = await captureScenario(
      { ...call, conversationId: created.id, project: project(), baseUrl: sim.url, calleeNo: "+15550100123" },
      run.io,
    );
    expect(run.connections).toEqual([sim.url]);
    expect(outcome.code).toBe(0);
    expect(parse(outcome.report ?? "")).toEqual([
      expect.objectContaining({ name: `captured ${created.id}`, channel: { callee_no: "+15550100123" } }),
    ]);
    expect(outcome.notes.join("")).not.toContain("the events end before conversation.ended");
  });

  it("from the service without a callee number: bad input naming --callee-no (exit 2), before any connection", async () => {
    const run = fakeRun();
    const error = await captureScenario({ ...call, conversationId, project: project() }, run.io).catch(
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(InvalidInputError);
    expect(error).toMatchObject({ code: "AGENT_IAC_INVALID_INPUT", field: "calleeNo" });
    expect((error as InvalidInputError).describe(flagNaming)).toEqual({
      message: "--callee-no is needed to capture from the service: its events do not say the channel",
      hint: "or capture from a recording of the call: --from-recording DIR",
    });
    expect(run.connections).toEqual([]);
  });
});
