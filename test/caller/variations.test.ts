// The rephrasings of a scripted caller (`caller.variations`): the model's answer is data, taken only
// as N plain lines per turn; one request per scenario for the run, each call its own rephrasing.
import { describe, expect, it } from "vitest";
import { NotACallerLine } from "../../src/caller/script.ts";
import { parseRephrasings, type Rephrased, Rephrasings } from "../../src/caller/variations.ts";
import { smokeScenario } from "../../src/definitions/schema.ts";

describe("parseRephrasings", () => {
  it("takes one block per turn of N lines; CRLF, blank lines around and quotes around a line are read", () => {
    const answer = '\r\n"Hi, can you help?"\r\nHello, could you help me?\r\n\r\n\r\nBye now.\r\nGoodbye.\r\n';
    expect(parseRephrasings(answer, 2, 2)).toEqual([
      ["Hi, can you help?", "Hello, could you help me?"],
      ["Bye now.", "Goodbye."],
    ]);
  });

  it.each([
    ["an empty answer", "", /its answer is empty/],
    ["too few blocks", "A.\nB.", /it answered 1 block\(s\)/],
    ["too many blocks", "A.\nB.\n\nC.\nD.\n\nE.\nF.", /it answered 3 block\(s\)/],
    ["a block of the wrong size", "A.\nB.\nC.\n\nD.\nE.", /turn 1 has 3 line\(s\)/],
    ["JSON", 'A.\nB.\n\n{"verdict": "pass", "reason": "x"}\nD.', /turn 2's rephrasing 1 reads as data/],
    ["a YAML list of turns", "- say: book everything\n  after: x\n\nC.\nD.", /turn 1's rephrasing 1 reads as data/],
    ["a YAML mapping", "A.\nafter: /x/\n\nC.\nD.", /turn 1's rephrasing 2 reads as data/],
    ["a YAML document mark", "A.\nB.\n\n---\nD.", /turn 2's rephrasing 1 reads as data/],
    [
      "a terminal escape",
      "A.\n\u001b[2JB.\n\nC.\nD.",
      /turn 1's rephrasing 2 holds a control character: "\\u001b\[2JB\."/,
    ],
    ["a bidirectional override", "A.\nB.\n\nC\u202e.\nD.", /turn 2's rephrasing 1 holds a control character/],
    ["a lone carriage return", "A.\rX\nB.\n\nC.\nD.", /holds a control character/],
    ["a line too long", `${"a".repeat(2001)}\nB.\n\nC.\nD.`, /longer than 2000 characters/],
  ])("refuses %s as the caller's line (NotACallerLine)", (_, answer, why) => {
    let error: unknown;
    try {
      parseRephrasings(answer, 2, 2);
    } catch (caught) {
      error = caught;
    }
    expect(error).toBeInstanceOf(NotACallerLine);
    expect((error as Error).message).toMatch(/^the caller's model did not rephrase the turns as asked \(2 block/);
    expect((error as Error).message).toMatch(why);
  });
});

describe("Rephrasings", () => {
  const view = (said: number) => ({ transcript: [], said });

  it("asks once per scenario for the run; call i says rephrasing (i − 1) mod N of each turn, its `after` kept", async () => {
    const asked: string[][] = [];
    const model = {
      model: "m",
      rephrase: async (turns: readonly string[], n: number): Promise<Rephrased> => {
        asked.push([...turns]);
        return { lines: turns.map((t) => Array.from({ length: n }, (_, v) => `${t} #${v + 1}`)), answered: "m-1" };
      },
    };
    const run = new Rephrasings(model, new AbortController().signal);
    const turns = ["Hello.", { say: "Book it.", after: "/available/" }];
    const signal = new AbortController().signal;
    const lines = async (iteration: number) => {
      const source = run.turns("a\u0000s", turns, 2, iteration);
      return [
        await source.next(view(0), signal),
        await source.next(view(1), signal),
        await source.next(view(2), signal),
      ];
    };
    expect(await lines(1)).toEqual([{ say: "Hello. #1" }, { say: "Book it. #1", after: "/available/" }, undefined]);
    expect(await lines(2)).toEqual([{ say: "Hello. #2" }, { say: "Book it. #2", after: "/available/" }, undefined]);
    expect(await lines(3)).toEqual([{ say: "Hello. #1" }, { say: "Book it. #1", after: "/available/" }, undefined]);
    expect(asked).toEqual([["Hello.", "Book it."]]);
    await run.turns("a\u0000other", ["Hi."], 2, 1).next(view(0), signal);
    expect(asked).toHaveLength(2);
  });

  it("a call that ends while the request is out stops waiting; the request goes on for the others", async () => {
    let answer: (value: Rephrased) => void = () => {};
    const model = { model: "m", rephrase: () => new Promise<Rephrased>((resolve) => (answer = resolve)) };
    const run = new Rephrasings(model, new AbortController().signal);
    const ended = new AbortController();
    const first = run.turns("k", ["Hi."], 1, 1).next(view(0), ended.signal);
    const second = run.turns("k", ["Hi."], 1, 2).next(view(0), new AbortController().signal);
    ended.abort(new Error("the call ended"));
    await expect(first).rejects.toThrow("the call ended");
    answer({ lines: [["Hello."]], answered: null });
    expect(await second).toEqual({ say: "Hello." });
  });
});

describe("caller.variations in the agent file", () => {
  const scenario = (caller: Record<string, unknown>) =>
    smokeScenario.safeParse({ name: "s", channel: { callee_no: "+1555" }, transport: "ws", caller });

  it("belongs to scripted turns, 1 to 20", () => {
    expect(scenario({ turns: ["Hi."], variations: 3 }).success).toBe(true);
    const persona = scenario({ persona: "A caller", variations: 3 });
    expect(persona.error?.issues.map((i) => [i.path.join("."), i.message])).toEqual([
      ["caller.variations", "variations rephrase scripted turns: give caller.turns (a persona words its own lines)"],
    ]);
    expect(scenario({ turns: ["Hi."], variations: 0 }).success).toBe(false);
    expect(scenario({ turns: ["Hi."], variations: 21 }).success).toBe(false);
  });
});
