// The capture use case reads a call from a recording or from the service's stream, and decides what
// a capture may hold: the recording's channel with the callee number given, a stream read to
// `conversation.ended` or until it is silent, a Ctrl+C as an interruption. A recording of a real
// call to the simulator on port 0 (test/helpers/recorded-call.ts), the same simulator's streams.
import { readdir, readFile } from "node:fs/promises";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { InterruptedError, InvalidInputError } from "../../src/errors/index.ts";
import { captureCall, recordedCall, serviceCall } from "../../src/usecases/capture.ts";
import { type RecordedCall, recordedCall as recordCall } from "../helpers/recorded-call.ts";
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
    // …and the draft made of it names where it came from.
    const draft = captureCall(call, { name: "from-recording" });
    expect(draft.yaml).toContain("name: from-recording");
    expect(draft.yaml).toContain("+15550100999");
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
