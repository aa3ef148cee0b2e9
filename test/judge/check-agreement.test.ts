// `judge check`'s evidence: an item labelled again is counted once (by rubric and transcript), and the
// interval says how many distinct items it rests on; two labellers give human–human kappa, a second
// model judge–judge kappa, each with its interval; --within-humans gates on them; labels made for
// another rubric wording or judge model are said to be stale. A real scripted judge on port 0.
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { rubricHash } from "../../src/judge/index.ts";
import { runInProcess } from "../helpers/cli.ts";
import { startTestJudge, type TestJudge } from "../helpers/judge-server.ts";

/** Item k's transcript line; the judges below answer by k. */
const line = (k: number) => `agent: Hello, this is item ${k}.`;
const itemOf = (transcript: string) => Number(/item (\d+)\./.exec(transcript)?.[1]);

// judge-a passes items 1–6; judge-b passes items 1–4, 7 and 8; both fail the rest.
const JUDGE_A = new Set([1, 2, 3, 4, 5, 6]);
const JUDGE_B = new Set([1, 2, 3, 4, 7, 8]);

describe("judge check: evidence counted once, human–human and judge–judge kappa", () => {
  let judge: TestJudge;
  let dir: string;
  beforeAll(async () => {
    judge = await startTestJudge({
      repeated: (transcript) => ({ verdict: transcript.includes("I can refund that") ? "pass" : "fail" }),
      greets: (transcript, model) => {
        const passes = model === "judge-b" ? JUDGE_B : JUDGE_A;
        return { verdict: passes.has(itemOf(transcript)) ? "pass" : "fail" };
      },
    });
    dir = await mkdtemp(path.join(os.tmpdir(), "agent-iac-check-agreement-"));
  });
  afterAll(async () => {
    await judge.close();
    await rm(dir, { recursive: true, force: true });
  });

  const check = async (name: string, text: string, model: string, ...args: string[]) => {
    await writeFile(path.join(dir, name), text);
    const json = path.join(dir, `${name}.json`);
    const before = judge.requests.length;
    const run = await runInProcess(["judge", "check", name, "--no-judge-cache", "--json", json, ...args], {
      cwd: dir,
      env: {
        ...process.env,
        AGENT_IAC_JUDGE_BASE_URL: judge.url,
        AGENT_IAC_JUDGE_MODEL: model,
        AGENT_IAC_JUDGE_API_KEY: "sk-check-agreement-test",
        AGENT_IAC_JUDGE_CACHE_KEY: "check-agreement-test-key",
      },
    });
    const result = run.code <= 1 ? JSON.parse(await readFile(json, "utf8")) : undefined;
    return { ...run, result, requests: judge.requests.length - before };
  };

  it("counts two transcripts repeated 30 times as 2 items, and the interval says so", async () => {
    const items = Array.from({ length: 30 }, () => [
      '  - { rubric: "repeated: offers a refund", transcript: ["agent: I can refund that."], human: pass, votes: 1 }',
      '  - { rubric: "repeated: offers a refund", transcript: ["agent: Goodbye."], human: fail, votes: 1 }',
    ]).flat();
    const run = await check("repeated.yaml", `items:\n${items.join("\n")}\n`, "judge-a");
    expect(run.code, run.stderr).toBe(0);
    // Each distinct item is judged once: 2 requests, not 60.
    expect(run.requests).toBe(2);
    // Two items, both agreeing: po 1, pe 0.5 · 0.5 + 0.5 · 0.5 = 0.5, kappa 1. Wilson 95 % of 2/2:
    // low = 2 / (2 + 1.96²) = 0.3424, so kappa's low = (0.3424 − 0.5) / 0.5 = −0.315 (not 0.88, as 60 "items" gave).
    expect(run.result.overall.items).toBe(2);
    expect(run.result.overall.labels).toBe(60);
    expect(run.result.overall.kappa).toBe(1);
    expect(run.result.overall.kappa_interval.low).toBeCloseTo(-0.3152, 3);
    expect(run.stdout).toContain("kappa 1 (95 % CI -0.315 to 1, 2 distinct item(s))");
    expect(run.stdout).toContain("60 labels of 2 distinct item(s): an item labelled again is counted once");
    expect(run.stdout).toContain("(labelled 30 times, counted once)");
  });

  // Ten items, each labelled by ann then bob: ann passes 1–5, bob passes 1–4 and 6.
  const ANN = new Set([1, 2, 3, 4, 5]);
  const BOB = new Set([1, 2, 3, 4, 6]);
  const twoLabellers = () => {
    const rows = [];
    for (let k = 1; k <= 10; k++) {
      for (const [who, passes] of [
        ["ann", ANN],
        ["bob", BOB],
      ] as const) {
        rows.push(
          `  - { rubric: "greets the caller", transcript: [${JSON.stringify(line(k))}], human: ${passes.has(k) ? "pass" : "fail"}, labeller: ${who} }`,
        );
      }
    }
    return `votes: 1\nitems:\n${rows.join("\n")}\n`;
  };

  it("reports human–human and judge–judge kappa with their intervals, computed by hand", async () => {
    const run = await check("two.yaml", twoLabellers(), "judge-a", "--second-judge", "judge-b");
    expect(run.code, run.stderr).toBe(0);
    // 10 items, each asked once of each judge.
    expect(run.requests).toBe(20);
    const overall = run.result.overall;
    // judge–human (ann's label, the first of each item, against judge-a): agree on 1–5 and 7–10, 9/10.
    // po 0.9; ann passes 0.5, judge-a 0.6: pe = 0.5 · 0.6 + 0.5 · 0.4 = 0.5; kappa (0.9 − 0.5) / 0.5 = 0.8.
    // Wilson 95 % of 9/10: [0.5958, 0.9821] → kappa [0.1917, 0.9642].
    expect(overall.items).toBe(10);
    expect(overall.kappa).toBeCloseTo(0.8, 10);
    expect(overall.kappa_interval.low).toBeCloseTo(0.1917, 3);
    expect(overall.kappa_interval.high).toBeCloseTo(0.9642, 3);
    // human–human, ann × bob: agree on 1–4 and 7–10, 8/10: po 0.8; both pass 0.5: pe 0.5; kappa 0.6.
    // Wilson 95 % of 8/10: [0.4902, 0.9433] → kappa [(0.4902 − 0.5) / 0.5, (0.9433 − 0.5) / 0.5] = [−0.0197, 0.8866].
    expect(overall.human_human.items).toBe(10);
    expect(overall.human_human.kappa).toBeCloseTo(0.6, 10);
    expect(overall.human_human.kappa_interval.low).toBeCloseTo(-0.0197, 3);
    expect(overall.human_human.kappa_interval.high).toBeCloseTo(0.8866, 3);
    // judge–judge, judge-a × judge-b: agree on 1–4, 9, 10, 6/10: po 0.6; both pass 0.6:
    // pe = 0.6 · 0.6 + 0.4 · 0.4 = 0.52; kappa (0.6 − 0.52) / 0.48 = 0.1667.
    // Wilson 95 % of 6/10: [0.3127, 0.8318] → kappa [(0.3127 − 0.52) / 0.48, (0.8318 − 0.52) / 0.48] = [−0.4319, 0.6496].
    expect(run.result.second_model).toBe("judge-b");
    expect(overall.judge_judge.items).toBe(10);
    expect(overall.judge_judge.kappa).toBeCloseTo(0.08 / 0.48, 10);
    expect(overall.judge_judge.kappa_interval.low).toBeCloseTo(-0.4319, 3);
    expect(overall.judge_judge.kappa_interval.high).toBeCloseTo(0.6496, 3);
    expect(run.stdout).toContain(
      "human–human (two labellers, the same items): agreement 0.8 (8/10), kappa 0.6 (95 % CI -0.02 to 0.887, 10 distinct item(s))",
    );
    expect(run.stdout).toContain(
      "judge–judge (judge-a and judge-b): agreement 0.6 (6/10), kappa 0.167 (95 % CI -0.432 to 0.65, 10 distinct item(s))",
    );
  });

  it("--within-humans holds when the judge's lower bound reaches the labellers', and refuses (exit 1) when not", async () => {
    // judge-a: low 0.1917 ≥ the labellers' −0.0197.
    const holds = await check("gate-a.yaml", twoLabellers(), "judge-a", "--within-humans");
    expect(holds.code, holds.stderr).toBe(0);
    expect(holds.stdout).toContain("gate (--within-humans): holds");
    // judge-b against ann: agree on 1–4, 6, 9, 10, 7/10; ann passes 0.5, judge-b 0.6: pe 0.5, kappa 0.4;
    // Wilson 95 % of 7/10 low 0.3968 → kappa low −0.206, below the labellers' −0.0197.
    const refused = await check("gate-b.yaml", twoLabellers(), "judge-b", "--within-humans");
    expect(refused.code).toBe(1);
    expect(refused.stdout).toContain("gate (--within-humans): refused: the judge's kappa lower bound -0.206");
    expect(refused.result.gate).toContain("below the labellers' own -0.02");
  });

  it("says a label made for another judge model, or an edited rubric, is stale", async () => {
    const text = [
      "items:",
      `  - { rubric: "greets the caller", transcript: [${JSON.stringify(line(1))}], human: pass, votes: 1, judge: { verdict: pass, model: judge-old } }`,
      `  - { rubric: "greets the caller warmly", transcript: [${JSON.stringify(line(7))}], human: fail, votes: 1, rubric_sha256: ${rubricHash("greets the caller")} }`,
      `  - { rubric: "greets the caller", transcript: [${JSON.stringify(line(8))}], human: fail, votes: 1, rubric_sha256: ${rubricHash("greets the caller")}, judge: { verdict: fail, model: judge-a } }`,
      `  - { rubric: "greets the caller", transcript: [${JSON.stringify(line(9))}], human: skip, votes: 1, labeller: ann }`,
    ].join("\n");
    const run = await check("stale.yaml", `${text}\n`, "judge-a");
    expect(run.code, run.stderr).toBe(0);
    expect(run.result.stale).toEqual([
      "stale.yaml:2: labelled for judge model judge-old, measured now for judge-a",
      "stale.yaml:3: the rubric changed since it was labelled",
    ]);
    expect(run.stdout).toContain("stale: 2 label(s) were made for another rubric or judge model");
    // A skipped item (judge label's s) is neither judged nor counted.
    expect(run.requests).toBe(3);
    expect(run.result.overall.items).toBe(3);
  });
});
