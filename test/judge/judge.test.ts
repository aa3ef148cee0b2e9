// The judge against a real OpenAI-compatible HTTP server on port 0, scripted per rubric.
import { mkdtemp, readdir, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  checkJudge,
  Judge,
  JudgeClient,
  LabelledFileError,
  readLabelledFile,
  VoteCache,
} from "../../src/judge/index.ts";
import { startTestJudge, type TestJudge } from "../helpers/judge-server.ts";

const KEY = "sk-judge-test-7f3a9c21e4";
const TRANSCRIPT = [
  "agent: Hello, this is Acme support.",
  "user: I want my money back.",
  'tool lookup_order({"order":"A1"}) → {"status":"delivered"}',
  "agent: I can offer you a refund of 20 dollars.",
  "user: Thanks, bye.",
];

describe("the judge client", () => {
  let server: TestJudge;
  let dir: string;
  const judgeWith = (options: { cache?: boolean; read?: boolean; timeoutSec?: number } = {}) =>
    new Judge(
      new JudgeClient({
        baseUrl: server.url,
        model: "test-model",
        apiKey: KEY,
        timeoutSec: options.timeoutSec ?? 5,
        retryBaseDelayMs: 1,
      }),
      options.cache === false
        ? undefined
        : new VoteCache(dir, { read: options.read ?? true, env: process.env, within: dir }),
    );

  beforeAll(async () => {
    dir = await mkdtemp(path.join(tmpdir(), "judge-cache-"));
    server = await startTestJudge(
      {
        "offers a refund": [{ verdict: "pass", reason: "the agent offers 20 dollars", cite: /refund/ }],
        "confirms the date": [{ verdict: "fail", reason: "no date is ever confirmed", lines: [4, 5] }],
        "is polite": [{ verdict: "pass" }, { verdict: "fail", reason: "curt" }, { verdict: "pass" }],
        malformed: [{ malformed: "{verdict: pass" }],
        refused: [{ refusal: "I can't help with that." }],
        "rate limited": [
          { status: 429, retryAfter: "0" },
          { verdict: "pass", lines: [2] },
        ],
        stalls: [{ stall: true }],
        "cites nonsense": [{ verdict: "pass", lines: [99] }],
        "in prose": [{ verdict: "fail", lines: [1], inText: true }],
        "server down": [{ status: 503 }],
      },
      { apiKey: KEY },
    );
  });
  afterAll(async () => {
    await server?.close();
    await rm(dir, { recursive: true, force: true });
  });

  it("asks with response_format json_schema, the numbered transcript and the key; passes with cited lines", async () => {
    const judge = judgeWith({ cache: false });
    const judgement = await judge.judge({ rubric: "offers a refund before transferring", votes: 3 }, TRANSCRIPT);
    expect(judgement).toMatchObject({ verdict: "pass", agreement: "3/3", uncertain: false, lines: [4], error: null });
    expect(judgement.reason).toBe("the agent offers 20 dollars");
    const sent = server.requests.at(-1);
    expect(sent?.authorization).toBe(`Bearer ${KEY}`);
    expect(sent?.body.model).toBe("test-model");
    expect(sent?.body.response_format).toMatchObject({ type: "json_schema", json_schema: { strict: true } });
    expect(JSON.stringify(sent?.body.messages)).toContain("4: agent: I can offer you a refund of 20 dollars.");
    expect(JSON.stringify(sent?.body.messages)).toContain('3: tool lookup_order({\\"order\\":\\"A1\\"})');
    await judge.client.close();
  });

  it("fails with the judge's reason and lines; a 2-to-1 split passes as 2/3, uncertain", async () => {
    const judge = judgeWith({ cache: false });
    const failed = await judge.judge({ rubric: "confirms the date", votes: 3 }, TRANSCRIPT);
    expect(failed).toMatchObject({
      verdict: "fail",
      agreement: "3/3",
      reason: "no date is ever confirmed",
      lines: [4, 5],
    });
    const split = await judge.judge({ rubric: "is polite", votes: 3 }, TRANSCRIPT);
    expect(split).toMatchObject({ verdict: "pass", agreement: "2/3", votes_for: 2, uncertain: true });
    expect(split.votes.map((v) => v.verdict).sort()).toEqual(["fail", "pass", "pass"]);
    await judge.client.close();
  });

  it("a malformed answer, a refusal, cited lines that do not exist: an error, never a pass", async () => {
    const judge = judgeWith({ cache: false });
    const malformed = await judge.judge({ rubric: "malformed", votes: 1 }, TRANSCRIPT);
    expect(malformed.verdict).toBe("error");
    expect(malformed.error).toMatch(/not JSON/);
    const refused = await judge.judge({ rubric: "refused", votes: 1 }, TRANSCRIPT);
    expect(refused.verdict).toBe("error");
    expect(refused.error).toMatch(/the judge refused: "I can't help with that."/);
    const nonsense = await judge.judge({ rubric: "cites nonsense", votes: 1 }, TRANSCRIPT);
    expect(nonsense.verdict).toBe("error");
    expect(nonsense.error).toMatch(/cited line\(s\) 99, which the transcript does not have \(it has 5\)/);
    await judge.client.close();
  });

  it("reads JSON inside prose from a server that ignores response_format", async () => {
    const judge = judgeWith({ cache: false });
    const judgement = await judge.judge({ rubric: "in prose", votes: 1 }, TRANSCRIPT);
    expect(judgement).toMatchObject({ verdict: "fail", lines: [1] });
    await judge.client.close();
  });

  it("retries a 429 and then answers; a 5xx that never ends is an error after the bounded retries", async () => {
    const judge = judgeWith({ cache: false });
    const before = server.requests.filter((r) => r.rubric === "rate limited").length;
    const judgement = await judge.judge({ rubric: "rate limited", votes: 1 }, TRANSCRIPT);
    expect(judgement).toMatchObject({ verdict: "pass", lines: [2] });
    expect(server.requests.filter((r) => r.rubric === "rate limited").length - before).toBe(2);
    const down = await judge.judge({ rubric: "server down", votes: 1 }, TRANSCRIPT);
    expect(down.verdict).toBe("error");
    expect(down.error).toMatch(/503/);
    expect(server.requests.filter((r) => r.rubric === "server down")).toHaveLength(4);
    await judge.client.close();
  });

  it("a stalled response ends at the request deadline as an error", async () => {
    const judge = judgeWith({ cache: false, timeoutSec: 0.5 });
    const judgement = await judge.judge({ rubric: "stalls", votes: 1 }, TRANSCRIPT);
    // The deadline's own words: the stalled response was cut at 500 ms, not left to hang.
    expect(judgement.verdict).toBe("error");
    expect(judgement.error).toMatch(/no complete response within 500 ms/);
    await judge.client.close();
  });

  it("never puts the key in an error", async () => {
    const judge = new Judge(
      new JudgeClient({ baseUrl: server.url, model: "m", apiKey: "sk-wrong-key-0000111122", timeoutSec: 5 }),
    );
    const judgement = await judge.judge({ rubric: "offers a refund", votes: 1 }, TRANSCRIPT);
    expect(judgement.verdict).toBe("error");
    expect(judgement.error).toMatch(/401/);
    expect(JSON.stringify(judgement)).not.toContain("sk-wrong-key-0000111122");
    await judge.client.close();
  });

  it("caches each vote: the same transcript asks nothing again; a changed rubric or --no-judge-cache asks again", async () => {
    const count = () => server.requests.filter((r) => r.rubric.startsWith("offers a refund")).length;
    const first = judgeWith();
    const start = count();
    const a = await first.judge({ rubric: "offers a refund", votes: 3 }, TRANSCRIPT);
    expect(count() - start).toBe(3);
    expect(first.stats).toEqual({ requests: 3, cached: 0 });
    const again = judgeWith();
    const b = await again.judge({ rubric: "offers a refund", votes: 3 }, TRANSCRIPT);
    expect(count() - start).toBe(3);
    expect(again.stats).toEqual({ requests: 0, cached: 3 });
    expect(b).toMatchObject({ verdict: a.verdict, reason: a.reason, lines: a.lines, cached_votes: 3 });
    const changed = await again.judge({ rubric: "offers a refund, politely", votes: 3 }, TRANSCRIPT);
    expect(changed.cached_votes).toBe(0);
    expect(count() - start).toBe(6);
    const fresh = judgeWith({ read: false });
    await fresh.judge({ rubric: "offers a refund", votes: 3 }, TRANSCRIPT);
    expect(fresh.stats.requests).toBe(3);
    expect(count() - start).toBe(9);
    const files = await readdir(path.join(dir, "votes"), { recursive: true });
    expect(files.some((f) => f.endsWith(".json"))).toBe(true);
    for (const judge of [first, again, fresh]) await judge.client.close();
  });

  it("judge check: agreement, kappa and consistency per rubric against labelled transcripts", async () => {
    const file = path.join(dir, "labels.yaml");
    await writeFile(
      file,
      [
        "votes: 3",
        "items:",
        '  - rubric: "offers a refund"',
        `    transcript: ${JSON.stringify(TRANSCRIPT)}`,
        "    human: pass",
        '  - rubric: "confirms the date"',
        `    transcript: ${JSON.stringify(TRANSCRIPT)}`,
        "    human: pass",
        '  - rubric: "is polite"',
        `    transcript: ${JSON.stringify(TRANSCRIPT.slice(0, 2))}`,
        "    human: pass",
      ].join("\n"),
    );
    const judge = judgeWith({ cache: false });
    const result = await checkJudge(await readLabelledFile(file, dir), judge, async () => []);
    await judge.client.close();
    expect(result.overall.items).toBe(3);
    // refund: pass = pass; date: fail ≠ pass; polite: votes fail, pass, pass… (its script continues) — judged per item.
    const refund = result.rubrics.find((r) => r.rubric === "offers a refund");
    expect(refund).toMatchObject({ items: 1, agreement: 1, consistency: 1 });
    const date = result.rubrics.find((r) => r.rubric === "confirms the date");
    expect(date).toMatchObject({ items: 1, agreement: 0 });
    expect(date?.confusion.human_pass_judge_fail).toBe(1);
  });

  it("a labelled file with problems names file:line", async () => {
    const file = path.join(dir, "bad.yaml");
    await writeFile(
      file,
      ["items:", "  - rubric: ok", "    human: maybe", "    transcript: [a]", "votes: 2"].join("\n"),
    );
    const error = await readLabelledFile(file, dir).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(LabelledFileError);
    const text = (error as Error).message;
    expect(text).toContain(`${file}:3: items.0.human:`);
    expect(text).toContain(`${file}:5: votes: must be odd`);
  });
});
