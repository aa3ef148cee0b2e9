// The transcript as data (TranscriptBuilder) following the interface's four rules; the line each
// entry prints as is checked through the commands' entryLine.
import { describe, expect, test } from "vitest";
import { type Transcript, TranscriptBuilder } from "../../src/api/index.ts";
import { entryLine } from "../../src/render/index.ts";

let n = 0;
const ev = (payload: Record<string, unknown>) => ({
  id: `e${++n}`,
  created_at: "2025-06-19T12:00:00Z",
  payload: payload as { type: string },
});
function build(...payloads: Record<string, unknown>[]): TranscriptBuilder {
  const builder = new TranscriptBuilder();
  for (const payload of payloads) builder.add(ev(payload));
  return builder;
}
const run = (...payloads: Record<string, unknown>[]): Transcript => build(...payloads).transcript;
const lines = (t: Transcript) => t.entries.map(entryLine);

describe("TranscriptBuilder", () => {
  test("rule 1: deltas with the same generation_id concatenate, in arrival order, into one incomplete message", () => {
    const t = run(
      { type: "agent.message.delta", generation_id: "g1", text_delta: "Hello, " },
      { type: "agent.message.delta", generation_id: "g2", text_delta: "Other" },
      { type: "agent.message.delta", generation_id: "g1", text_delta: "world" },
    );
    expect(t.messages).toEqual([
      { generationId: "g1", text: "Hello, world", complete: false },
      { generationId: "g2", text: "Other", complete: false },
    ]);
    expect(t.entries).toEqual([
      { kind: "agent", message: { generationId: "g1", text: "Hello, world", complete: false } },
      { kind: "agent", message: { generationId: "g2", text: "Other", complete: false } },
    ]);
    expect(lines(t)).toEqual(["agent: Hello, world …", "agent: Other …"]);
  });

  test("rule 2: completed makes it complete with its text (the final text wins over the deltas)", () => {
    const t = run(
      { type: "agent.message.delta", generation_id: "g1", text_delta: "Helo" },
      { type: "agent.message.completed", generation_id: "g1", text: "Hello." },
    );
    expect(t.messages).toEqual([{ generationId: "g1", text: "Hello.", complete: true }]);
    expect(lines(t)).toEqual(["agent: Hello."]);
  });

  test("a completed message without deltas; a late delta does not change a completed message", () => {
    const t = run(
      { type: "agent.message.completed", generation_id: "g9", text: "Only this." },
      { type: "agent.message.delta", generation_id: "g9", text_delta: " extra" },
    );
    expect(t.messages).toEqual([{ generationId: "g9", text: "Only this.", complete: true }]);
  });

  test("rule 3: tool calls joined by call_id", () => {
    const t = run(
      { type: "agent.tool_call.created", call_id: "c1", name: "lookup", arguments: { q: 1 } },
      { type: "agent.tool_call.created", call_id: "c2", name: "other" },
      { type: "agent.tool_call.returned", call_id: "c1", name: "lookup", arguments: { q: 1 }, result: { ok: true } },
    );
    expect(t.toolCalls).toEqual([
      { callId: "c1", name: "lookup", arguments: { q: 1 }, result: { ok: true }, returned: true },
      { callId: "c2", name: "other", arguments: undefined, returned: false },
    ]);
    expect(t.entries.map((e) => e.kind === "tool" && e.call.callId)).toEqual(["c1", "c2"]);
    expect(lines(t)).toEqual(['tool lookup({"q":1}) → {"ok":true}', "tool other({}) …"]);
  });

  test("a returned call without its created event; an error result", () => {
    const t = run({ type: "agent.tool_call.returned", call_id: "c7", name: "transfer", error: { message: "busy" } });
    expect(t.toolCalls).toEqual([
      { callId: "c7", name: "transfer", arguments: undefined, error: { message: "busy" }, returned: true },
    ]);
    expect(lines(t)[0]).toBe('tool transfer({}) → error {"message":"busy"}');
  });

  test("rule 4: unknown types and malformed known payloads are ignored (nothing changes)", () => {
    const builder = build({ type: "agent.message.delta", generation_id: "g", text_delta: "x" });
    const before = builder.transcript;
    expect(builder.add(ev({ type: "agent.thinking", foo: 1 }))).toBe(false);
    expect(builder.add(ev({ type: "agent.message.delta", generation_id: "g" }))).toBe(false);
    expect(builder.add({ payload: undefined as never })).toBe(false);
    expect(builder.lastChanged).toBeUndefined();
    expect(builder.transcript).toEqual(before);
  });

  test("user turns, server errors, start and end are kept for smoke checks", () => {
    const t = run(
      { type: "conversation.started" },
      { type: "user.message.received", text: "Hi" },
      { type: "server.error", error: { message: "boom" } },
      { type: "conversation.ended" },
    );
    expect(t).toMatchObject({ started: true, ended: true, userMessages: ["Hi"], errors: [{ message: "boom" }] });
    expect(t.entries).toEqual([
      { kind: "user", text: "Hi" },
      { kind: "error", error: { message: "boom" } },
    ]);
    expect(lines(t)).toEqual(["user: Hi", 'error: {"message":"boom"}']);
  });

  test("a snapshot does not change with later events", () => {
    const builder = build({ type: "agent.message.delta", generation_id: "g", text_delta: "a" });
    const before = builder.transcript;
    const snapshot = JSON.stringify(before);
    builder.add(ev({ type: "agent.message.delta", generation_id: "g", text_delta: "b" }));
    builder.add(ev({ type: "agent.tool_call.created", call_id: "c", name: "t" }));
    expect(JSON.stringify(before)).toBe(snapshot);
    expect(builder.transcript.messages[0]?.text).toBe("ab");
  });
});
