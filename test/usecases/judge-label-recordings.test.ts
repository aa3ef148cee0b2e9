// `judge label RECORDINGS`: a directory of recordings (smoke --record DIR) is replayed through the
// configured judge, as `smoke --replay DIR` replays it (with the judge cache), and its judged
// expectations are sampled as a report's are. In-process, over a recording of a real call to the
// simulator on port 0, judged by a scripted judge on port 0.
import { readFile, writeFile } from "node:fs/promises";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parseDocument } from "yaml";
import { runInProcess } from "../helpers/cli.ts";
import { startTestJudge, type TestJudge } from "../helpers/judge-server.ts";
import { type RecordedCall, recordedCall } from "../helpers/recorded-call.ts";

const SCENARIO = "greets-and-summarizes";
const RUBRIC = "gives a callback number";

describe("judge label over a directory of recordings", () => {
  let recorded: RecordedCall;
  let judge: TestJudge;

  beforeAll(async () => {
    recorded = await recordedCall("judge-label-rec", { agent: "support", scenario: SCENARIO });
    judge = await startTestJudge({ [RUBRIC]: [{ verdict: "fail", reason: "no callback number is given" }] });
    // The scenario now asks the judge (as after a rubric is added): replay judges the recorded call.
    const file = path.join(recorded.dir, "agents", "support.yaml");
    const doc = parseDocument(await readFile(file, "utf8"));
    const index = (doc.toJS().smoke as { name: string }[]).findIndex((s) => s.name === SCENARIO);
    doc.setIn(["smoke", index, "expect", "judge"], doc.createNode([{ rubric: RUBRIC }]));
    doc.deleteIn(["smoke", index, "judge_min_agreement"]);
    doc.deleteIn(["smoke", index, "judge_min_kappa"]);
    await writeFile(file, doc.toString());
  }, 120_000);
  afterAll(async () => {
    await judge?.close();
    await recorded?.close();
  });

  const judged = {
    AGENT_IAC_JUDGE_MODEL: "test-judge-2026-01-01",
    AGENT_IAC_JUDGE_CACHE_KEY: "judge-label-recordings-key-7a3e",
  };

  /** Runs `judge label rec`, reads the first served item through the page's own route, then Ctrl+C. */
  async function label(env: NodeJS.ProcessEnv) {
    let item: Record<string, unknown> | undefined;
    let fetched: Promise<void> | undefined;
    const run = await runInProcess(["judge", "label", "rec", "--labels", "labels.yaml", "--judge-cache", "jc"], {
      cwd: recorded.dir,
      env,
      onWrite: (text, io) => {
        const url = /open (http:\/\/127\.0\.0\.1:\d+\/\?token=\S+)/.exec(text)?.[1];
        if (!url) return;
        const address = new URL(url);
        address.pathname = "/api/item";
        address.searchParams.set("i", "0");
        fetched = fetch(address)
          .then((response) => response.json())
          .then((body) => {
            item = body as Record<string, unknown>;
          })
          .finally(() => io.signal("SIGINT"));
      },
    });
    await fetched;
    return { ...run, item };
  }

  it("replays the recordings through the judge and serves the judged expectation; a second run reads the cache", async () => {
    const env = { ...process.env, ...judged, AGENT_IAC_JUDGE_BASE_URL: judge.url };
    const first = await label(env);
    expect(first.code, first.stdout + first.stderr).toBe(130);
    expect(first.stdout).toContain("judge label: replayed 1 recorded call(s) of rec through the judge");
    expect(first.stdout).toMatch(/1 item\(s\) of 1 judged expectation\(s\)/);
    // The judge was asked about the recorded conversation.
    expect(judge.requests.length).toBeGreaterThan(0);
    expect(judge.requests.every((r) => r.rubric.includes(RUBRIC))).toBe(true);
    // The item served is the recorded call's transcript under the rubric, the verdict kept back.
    expect(first.item?.rubric).toBe(RUBRIC);
    expect(JSON.stringify(first.item?.lines)).toContain("this is Maya");
    expect(`${first.stdout}${JSON.stringify(first.item)}`).not.toContain("no callback number is given");
    const asked = judge.requests.length;
    const second = await label(env);
    expect(second.code, second.stdout + second.stderr).toBe(130);
    expect(judge.requests.length).toBe(asked);
    expect(second.item?.rubric).toBe(RUBRIC);
  });

  it("without a judge configured, refuses the recordings with the advice, exit 2, nothing called", async () => {
    const env: NodeJS.ProcessEnv = { ...process.env, ...judged };
    delete env.AGENT_IAC_JUDGE_BASE_URL;
    const asked = judge.requests.length;
    const run = await label(env);
    expect(run.code).toBe(2);
    expect(run.stderr).toContain(
      "judge label rec replays the recordings through the judge, but no judge is configured",
    );
    expect(run.stderr).toContain("AGENT_IAC_JUDGE_BASE_URL");
    expect(judge.requests.length).toBe(asked);
  });
});
