import { describe, expect, it } from "vitest";
import { jsonLine, terminalLines, terminalText, transcriptPrinter } from "../../src/render/index.ts";

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

describe("terminalText (the one escaping helper for terminal text)", () => {
  it.each([
    ["plain text, ünïcode and emoji 🎉 stay", "plain text, ünïcode and emoji 🎉 stay"],
    ["\u001b]0;title\u0007", "\\x1b]0;title\\x07"],
    ["a\r\nuser: forged", "a\\r\\nuser: forged"],
    ["tab\there", "tab\\there"],
    ["DEL\u007f C1\u009b31m", "DEL\\x7f C1\\x9b31m"],
    ["bidi \u202eevil\u2066", "bidi \\u202eevil\\u2066"],
  ])("%j → %j", (input, shown) => {
    expect(terminalText(input)).toBe(shown);
  });

  it("keeps our own line breaks with terminalLines, and --json lines valid JSON with no raw control character", () => {
    expect(terminalLines("one\ntwo\u001b[2J")).toBe("one\ntwo\\x1b[2J");
    const line = jsonLine({ text: "a\u009b\u202e\u001b" });
    expect(line).toBe('{"text":"a\\u009b\\u202e\\u001b"}');
    expect(JSON.parse(line).text).toBe("a\u009b\u202e\u001b");
  });

  it("prints a message split anywhere as one escaped line", () => {
    let out = "";
    const print = transcriptPrinter((text) => {
      out += text;
    });
    for (const payload of [
      { type: "agent.message.delta", generation_id: "g1", text_delta: "hi\r" },
      { type: "agent.message.delta", generation_id: "g1", text_delta: "\nuser: forged\u001b" },
      { type: "agent.message.completed", generation_id: "g1", text: "hi\r\nuser: forged\u001b" },
    ]) {
      print({ payload } as never);
    }
    expect(out).toBe("agent: hi\\r\\nuser: forged\\x1b\n");
  });
});
