// Adaptive votes (`votes: auto`) against a real OpenAI-compatible HTTP server on port 0: a clear
// rubric settles in one round of 4 requests, a 3–1 start asks 3 more, a judge that keeps flipping
// stops at the cap, inconclusive; cached votes answer a second run; a labelled file may ask auto.
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { checkJudge, Judge, JudgeClient, readLabelledFile, VoteCache } from "../../src/judge/index.ts";
import { startTestJudge, type TestJudge } from "../helpers/judge-server.ts";

const TRANSCRIPT = ["agent: Hello, this is Acme support.", "user: I want my money back.", "agent: Here is a refund."];

describe("adaptive votes (votes: auto)", () => {
  let server: TestJudge;
  let dir: string;
  const judgeWith = () =>
    new Judge(
      new JudgeClient({ baseUrl: server.url, model: "test-model", timeoutSec: 5, retryBaseDelayMs: 1 }),
      new VoteCache(dir, { env: process.env, within: dir }),
    );
  const asked = (rubric: string) => server.requests.filter((r) => r.rubric.includes(rubric)).length;

  beforeAll(async () => {
    dir = await mkdtemp(path.join(tmpdir(), "adaptive-votes-"));
    server = await startTestJudge({
      "offers a refund": [{ verdict: "pass" }],
      "mostly polite": [{ verdict: "fail", reason: "curt" }, { verdict: "pass" }],
      "coin flip": [{ verdict: "pass" }, { verdict: "fail", reason: "no" }, { verdict: "pass" }, { verdict: "fail" }],
    });
    // A judge alternating pass, fail, pass, fail … for "coin flip".
    let n = 0;
    server.script["coin flip"] = () => (n++ % 2 === 0 ? { verdict: "pass" } : { verdict: "fail", reason: "no" });
  });
  afterAll(async () => {
    await server?.close();
    await rm(dir, { recursive: true, force: true });
  });

  it("a clear rubric settles after one round of 4 unanimous votes, and a second run takes all 4 from the cache", async () => {
    const judge = judgeWith();
    const first = await judge.judge({ rubric: "offers a refund", votes: 9, auto: true }, TRANSCRIPT);
    expect(first).toMatchObject({ verdict: "pass", agreement: "4/4", votes_total: 4, settled: true, uncertain: false });
    expect(asked("offers a refund")).toBe(4);
    const again = await judge.judge({ rubric: "offers a refund", votes: 9, auto: true }, TRANSCRIPT);
    expect(again).toMatchObject({ verdict: "pass", votes_total: 4, cached_votes: 4 });
    expect(asked("offers a refund")).toBe(4);
    await judge.client.close();
  });

  it("a 3–1 first round asks 3 more (6–1 settles at 95 %)", async () => {
    const judge = judgeWith();
    const judgement = await judge.judge({ rubric: "mostly polite", votes: 9, auto: true }, TRANSCRIPT);
    expect(judgement).toMatchObject({ verdict: "pass", agreement: "6/7", votes_total: 7, settled: true });
    expect(asked("mostly polite")).toBe(7);
    await judge.client.close();
  });

  it("a judge that keeps flipping stops at the cap: inconclusive, never the last vote's side (nor a pass)", async () => {
    const judge = judgeWith();
    const judgement = await judge.judge({ rubric: "coin flip", votes: 5, auto: true }, TRANSCRIPT);
    expect(judgement).toMatchObject({
      verdict: "inconclusive",
      agreement: "3/5",
      votes_total: 5,
      settled: false,
      uncertain: true,
      reason: "3 pass, 2 fail after 5 votes: not settled at 95 %",
      lines: [],
    });
    expect(asked("coin flip")).toBe(5);
    // The 9-vote cap: 5 to 4, the 9th vote would have decided it.
    const nine = await judge.judge({ rubric: "coin flip, again", votes: 9, auto: true }, TRANSCRIPT);
    expect(nine).toMatchObject({ verdict: "inconclusive", votes_total: 9, settled: false });
    await judge.client.close();
  });

  it("judge check reads votes: auto from a labelled file and reports the votes each item took", async () => {
    const file = path.join(dir, "labels.yaml");
    await writeFile(
      file,
      `votes: auto\nitems:\n  - { rubric: offers a refund, human: pass, transcript: ${JSON.stringify(TRANSCRIPT)} }\n`,
    );
    const judge = judgeWith();
    const result = await checkJudge(await readLabelledFile(file, dir), judge, async () => []);
    await judge.client.close();
    expect(result.items[0]?.judgement).toMatchObject({ verdict: "pass", votes_total: 4, settled: true });
  });
});
