import { describe, expect, it } from "vitest";
import { evaluate, type Observation } from "../../src/smoke/expectations.ts";
import { argumentMatches, MatchTimeout, textMatcher } from "../../src/smoke/matchers.ts";

function observation(overrides: Partial<Observation> = {}): Observation {
  return {
    agentMessages: [
      { text: "Hello, this is Ava. How can I help you today?", complete: true },
      { text: "I have used check_availability for you.", complete: true },
      { text: "Thank you for", complete: false },
    ],
    toolCalls: [
      {
        callId: "c1",
        name: "check_availability",
        arguments: { request: "Is Tuesday free?", slots: 2 },
        returned: true,
      },
    ],
    errors: [],
    ended: true,
    durationSec: 3.2,
    procedures: [{ key: "call-summary", agentId: "pa_1", status: "completed" }],
    entries: [
      { kind: "agent", message: { generationId: "g", text: "Hello, this is Ava.", complete: true } },
      { kind: "user", text: "Is Tuesday free?" },
      { kind: "tool", call: { callId: "c1", name: "check_availability", arguments: {}, returned: false } },
      { kind: "agent", message: { generationId: "g", text: "done", complete: true } },
    ],
    ...overrides,
  };
}

describe("matchers", () => {
  it("matches phrases case-insensitively and /regex/flags as regular expressions", () => {
    expect(textMatcher("THIS IS ava").test("Hello, this is Ava.")).toBe(true);
    expect(textMatcher("/this is \\w+\\./").test("Hello, this is Ava.")).toBe(true);
    expect(textMatcher("/THIS/").test("this")).toBe(false);
    expect(textMatcher("/THIS/i").test("this")).toBe(true);
    // A global flag must not make repeated tests alternate.
    const global = textMatcher("/a/g");
    expect([global.test("a"), global.test("a")]).toEqual([true, true]);
  });

  it("matches arguments exactly or by regex on their text", () => {
    expect(argumentMatches(2, 2)).toBe(true);
    expect(argumentMatches({ a: 1 }, { a: 1 })).toBe(true);
    expect(argumentMatches("Tuesday", "Is Tuesday free?")).toBe(false);
    expect(argumentMatches("/tuesday/i", "Is Tuesday free?")).toBe(true);
    expect(argumentMatches("/^\\d+$/", 42)).toBe(true);
  });
});

describe("regular expressions run with a time bound", () => {
  // The loader refuses nested quantifiers; this is the second line of defence for what it misses.
  const slow = "/^(a|a)*$/";
  const text = `${"a".repeat(40)}!`;

  it("stops a catastrophically backtracking expression instead of hanging", () => {
    // Unbounded, (a|a)* on 40 a's and a "!" backtracks through 2^40 paths: returning at all is the bound.
    const matcher = textMatcher(slow, 200);
    expect(() => matcher.test(text)).toThrow(MatchTimeout);
    expect(() => matcher.test(text)).toThrow(/200 ms/);
  });

  it("fails the assertion that used it, naming the expression, and evaluates the rest", () => {
    const assertions = evaluate(
      { says: [slow, "this is ava"], no_errors: false, ends: false },
      observation({
        agentMessages: [
          { text, complete: true },
          { text: "this is Ava", complete: true },
        ],
      }),
    );
    expect(assertions.map((a) => a.passed)).toEqual([false, true]);
    expect(assertions[0]?.detail).toMatch(/^\/\^\(a\|a\)\*\$\/ did not finish within 1000 ms/);
  });
});

describe("evaluate", () => {
  it("passes when every expectation holds, and counts each one", () => {
    const assertions = evaluate(
      {
        says: ["this is ava", "/used \\w+ for you/"],
        never_says: ["refund"],
        tool_calls: [
          "check_availability",
          { name: "check_availability", arguments: { request: "/tuesday/i", slots: 2 } },
        ],
        max_duration_sec: 10,
        procedures: { "call-summary": "completed" },
      },
      observation(),
    );
    expect(assertions.map((a) => a.passed)).toEqual(Array(9).fill(true));
    expect(assertions.map((a) => a.description)).toContain("no server.error events");
    expect(assertions.map((a) => a.description)).toContain("the conversation ends");
  });

  it("says only counts completed messages and names the missing phrase", () => {
    const [says] = evaluate({ says: ["thank you for"], no_errors: false, ends: false }, observation());
    expect(says?.passed).toBe(false);
    expect(says?.detail).toContain('"thank you for"');
    expect(says?.context?.[0]).toMatch(/^agent/);
  });

  it("never_says fails on any message, complete or not", () => {
    const [never] = evaluate({ never_says: ["thank you"], no_errors: false, ends: false }, observation());
    expect(never?.passed).toBe(false);
    expect(never?.detail).toContain("Thank you for");
  });

  it("tool_calls explain a missing call and a call with other arguments", () => {
    const [missing, wrongArgs] = evaluate(
      {
        tool_calls: ["book_appointment", { name: "check_availability", arguments: { slots: 3 } }],
        no_errors: false,
        ends: false,
      },
      observation(),
    );
    expect(missing?.detail).toBe("book_appointment was never called (called: check_availability)");
    expect(wrongArgs?.passed).toBe(false);
    expect(wrongArgs?.detail).toContain("never with matching arguments");
  });

  it("fails on server errors, a missing end, a long call and a procedure in another state", () => {
    const assertions = evaluate(
      { max_duration_sec: 1, procedures: { "call-summary": "completed", "qa-scorer": "completed" } },
      observation({
        errors: [{ message: "boom" }],
        ended: false,
        procedures: [
          { key: "call-summary", agentId: "pa_1", status: "failed", error: "x" },
          { key: "qa-scorer", agentId: "pa_2" },
        ],
      }),
    );
    expect(assertions.filter((a) => !a.passed).map((a) => a.description)).toEqual([
      "no server.error events",
      "the conversation ends",
      "lasts at most 1 s",
      "procedure call-summary ends completed",
      "procedure qa-scorer ends completed",
    ]);
    expect(assertions.at(-2)?.detail).toBe('procedure call-summary is failed (error: "x") (the last status seen)');
    expect(assertions.at(-1)?.detail).toContain("no procedure of qa-scorer");
  });

  it("evaluates nothing when every default is switched off", () => {
    expect(evaluate({ no_errors: false, ends: false }, observation())).toEqual([]);
  });
});

describe("each assertion's identity", () => {
  it("names its kind and key apart from its words, in the order the expectations are written", () => {
    const assertions = evaluate(
      {
        says: ["this is ava"],
        never_says: ["/goodbye/i"],
        tool_calls: ["check_availability", { name: "book_appointment", arguments: { slots: 2 } }],
        max_duration_sec: 10,
        procedures: { "call-summary": "completed" },
      },
      observation(),
    );
    expect(assertions.map(({ kind, key, description }) => [kind, key, description])).toEqual([
      ["says", "this is ava", 'says "this is ava"'],
      ["never_says", "/goodbye/i", "never says /goodbye/i"],
      ["tool_calls", "check_availability", "calls tool check_availability"],
      ["tool_calls", 'book_appointment {"slots":2}', 'calls tool book_appointment with {"slots":2}'],
      ["no_errors", "no_errors", "no server.error events"],
      ["ends", "ends", "the conversation ends"],
      ["max_duration_sec", "max_duration_sec", "lasts at most 10 s"],
      ["procedures", "call-summary", "procedure call-summary ends completed"],
    ]);
  });
});
