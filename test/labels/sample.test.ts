// The labelling sample: stratified by the judge's verdict and rubric, seeded, each conversation once.
import { describe, expect, it } from "vitest";
import { judgedItems, stratifiedSample } from "../../src/labels/index.ts";
import { judgedReport } from "./fixture.ts";

const RUBRICS = ["greets the caller", "offers a refund"];

/** `n` calls, the judge passing 90 % of them (every 10th fails), the rubrics taking turns. */
const report = (n: number, conversations = n) =>
  judgedReport(
    Array.from({ length: n }, (_, i) => ({
      rubric: RUBRICS[i % 2] as string,
      verdict: i % 10 === 9 ? ("fail" as const) : ("pass" as const),
      transcript: [`agent: call ${i}`],
      conversation: `conv_${i % conversations}`,
    })),
  );

describe("the labelling sample", () => {
  it("holds both verdicts from a report where the judge passed 90 %, for every seed", () => {
    const items = judgedItems([report(100)]);
    expect(items.filter((i) => i.judge.verdict === "fail")).toHaveLength(10);
    for (const seed of ["1", "2", "3", "labels", "x"]) {
      for (const size of [2, 5, 10, 40]) {
        const sample = stratifiedSample(items, size, seed);
        expect(sample).toHaveLength(size);
        const verdicts = new Set(sample.map((i) => i.judge.verdict));
        expect(verdicts, `seed ${seed}, size ${size}`).toEqual(new Set(["pass", "fail"]));
      }
    }
  });

  it("draws every stratum (verdict × rubric) in turn: 9 of 3 strata take 3 each", () => {
    // Fails (i % 10 === 9) are all of rubric 2 ("offers a refund"): strata pass×greets, pass×refund, fail×refund.
    const sample = stratifiedSample(judgedItems([report(100)]), 9, "1");
    const count = (verdict: string, rubric: string) =>
      sample.filter((i) => i.judge.verdict === verdict && i.rubric === rubric).length;
    expect([
      count("fail", "offers a refund"),
      count("pass", "greets the caller"),
      count("pass", "offers a refund"),
    ]).toEqual([3, 3, 3]);
  });

  it("takes each conversation once, and is the same for the same seed (a second run resumes on it)", () => {
    // 100 judged expectations over 20 conversations.
    const items = judgedItems([report(100, 20)]);
    const sample = stratifiedSample(items, 40, "7");
    expect(sample).toHaveLength(20);
    expect(new Set(sample.map((i) => i.conversation)).size).toBe(20);
    expect(stratifiedSample(items, 40, "7")).toEqual(sample);
    expect(stratifiedSample(items, 40, "8").map((i) => i.conversation)).not.toEqual(sample.map((i) => i.conversation));
  });

  it("leaves out judged expectations that are errors", () => {
    const r = report(4);
    const first = r.results[0]?.assertions[0]?.judgement;
    if (first) first.verdict = "error";
    expect(judgedItems([r])).toHaveLength(3);
  });
});
