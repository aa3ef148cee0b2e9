import { describe, expect, it } from "vitest";
import { transcriptPrinter } from "../../src/render/index.ts";

const events = [
  { type: "conversation.started" },
  { type: "agent.message.delta", generation_id: "g1", text_delta: "Hello, " },
  { type: "agent.message.delta", generation_id: "g1", text_delta: "this is Maya." },
  { type: "agent.message.completed", generation_id: "g1", text: "Hello, this is Maya." },
  { type: "user.message.received", text: "Check Tuesday" },
  { type: "agent.tool_call.created", call_id: "c1", name: "check_availability", arguments: { day: "Tue" } },
  { type: "agent.tool_call.returned", call_id: "c1", name: "check_availability", result: { ok: true } },
  { type: "agent.message.delta", generation_id: "g2", text_delta: "Tuesday is fre" },
  { type: "agent.message.completed", generation_id: "g2", text: "Tuesday is open." },
  { type: "some.future.event", detail: 1 },
  { type: "server.error", error: { message: "late" } },
  { type: "conversation.ended" },
].map((payload) => ({ payload }));

function print(options?: Parameters<typeof transcriptPrinter>[1]): string {
  let out = "";
  const printer = transcriptPrinter((text) => {
    out += text;
  }, options);
  for (const event of events) printer(event as never);
  return out;
}

describe("transcriptPrinter", () => {
  it("streams agent text, prints each entry once, a returned call again, and the end", () => {
    expect(print()).toBe(
      [
        "agent: Hello, this is Maya.",
        "user: Check Tuesday",
        'tool check_availability({"day":"Tue"}) …',
        'tool check_availability({"day":"Tue"}) → {"ok":true}',
        "agent: Tuesday is fre",
        "agent (final): Tuesday is open.",
        'error: {"message":"late"}',
        "(conversation ended)",
        "",
      ].join("\n"),
    );
  });

  it("prints complete messages only, each line prefixed, when text does not stream", () => {
    const lines = print({ prefix: "[a] ", streamText: false }).trimEnd().split("\n");
    expect(lines[0]).toBe("[a] agent: Hello, this is Maya.");
    expect(lines).toContain("[a] agent: Tuesday is open.");
    expect(lines.every((line) => line.startsWith("[a] "))).toBe(true);
    expect(lines.filter((line) => line.includes("Tuesday is fre"))).toEqual([]);
  });
});
