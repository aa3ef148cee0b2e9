// Judged expectations end to end: `agent-iac smoke` against the simulator on port 0 after a real
// `pulumi up`, with a scripted OpenAI-compatible judge on port 0.
import { mkdtemp, readdir, readFile, writeFile } from "node:fs/promises";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parseDocument } from "yaml";
import { type AgentsProject, agentsProject, deployStack } from "../../helpers/agents-project.ts";
import { runInProcess } from "../../helpers/cli.ts";
import { startTestJudge, type TestJudge } from "../../helpers/judge-server.ts";
import { type PulumiSandbox, pulumiSandbox } from "../../helpers/pulumi.ts";
import { requestCounts, startTestSimulator } from "../../helpers/simulator.ts";

const API_KEY = "sk-judge-e2e-service-4b1d";
const JUDGE_KEY = "sk-judge-e2e-judge-9e77c2";
const TOKEN_PATTERN = /tok_[A-Za-z0-9_-]{24}/;

type Assertion = {
  description: string;
  passed: boolean;
  detail: string | null;
  context: string[];
  judgement?: {
    verdict: string;
    agreement: string;
    uncertain: boolean;
    reason: string;
    lines: number[];
    cached_votes: number;
  };
};
type Report = {
  results: { status: string; error: string | null; transcript: string[]; assertions: Assertion[] }[];
  notes: string[];
};

describe("judged expectations (agent-iac smoke)", () => {
  let sandbox: PulumiSandbox;
  let sim: Awaited<ReturnType<typeof startTestSimulator>>;
  let judge: TestJudge;
  let project: AgentsProject;
  let runs = 0;
  const everything: string[] = [];

  const smoke = async (args: string[], options: { judge?: boolean; env?: Record<string, string> } = {}) => {
    const n = runs++;
    const files = { junit: `j-${n}.xml`, json: `j-${n}.json`, html: `j-${n}.html` };
    const judgeEnv =
      options.judge === false
        ? {}
        : {
            AGENT_IAC_JUDGE_BASE_URL: judge.url,
            AGENT_IAC_JUDGE_MODEL: "test-model",
            AGENT_IAC_JUDGE_API_KEY: JUDGE_KEY,
          };
    const result = await runInProcess(
      ["smoke", "--stack", "test", "--junit", files.junit, "--json", files.json, "--html", files.html, ...args],
      {
        cwd: project.dir,
        env: { ...process.env, ...sandbox.env, AGENT_IAC_API_KEY: API_KEY, ...judgeEnv, ...options.env },
      },
    );
    const read = (file: string) => readFile(path.join(project.dir, "reports", file), "utf8").catch(() => "");
    const [junit, json, html] = await Promise.all([read(files.junit), read(files.json), read(files.html)]);
    everything.push(result.stdout, result.stderr, junit, json, html);
    return { ...result, junit, html, report: json ? (JSON.parse(json) as Report) : undefined };
  };

  /** Adds a scenario to support.yaml (replacing one of the same name). */
  const scenario = async (value: Record<string, unknown>) => {
    const file = path.join(project.dir, "agents", "support.yaml");
    const doc = parseDocument(await readFile(file, "utf8"));
    const list = (doc.toJS().smoke ?? []) as { name: string }[];
    const index = list.findIndex((s) => s.name === value.name);
    if (index >= 0) doc.setIn(["smoke", index], doc.createNode(value));
    else doc.addIn(["smoke"], doc.createNode(value));
    await writeFile(file, doc.toString());
  };
  const judged = (name: string, judgeList: unknown[], extra: Record<string, unknown> = {}) =>
    scenario({ name, channel: { callee_no: "+15550100100" }, expect: { judge: judgeList }, ...extra });

  beforeAll(async () => {
    sandbox = await pulumiSandbox();
    sim = await startTestSimulator({ port: 0, apiKey: API_KEY, eventDelayMs: 1, quiet: true });
    judge = await startTestJudge(
      {
        "introduces herself": [{ verdict: "fail", reason: "the agent never gives a callback number", cite: /Maya/ }],
        "sounds friendly": [
          { verdict: "pass", cite: /Maya/ },
          { verdict: "fail", reason: "flat" },
          { verdict: "pass" },
        ],
        garbage: [{ malformed: "<html>oops</html>" }],
        stalls: [{ stall: true }],
        alternates: [{ verdict: "pass" }, { verdict: "fail", reason: "no" }, { verdict: "pass" }],
        replayed: [{ verdict: "fail", reason: "replayed reason", cite: /Maya/ }],
      },
      { apiKey: JUDGE_KEY },
    );
    project = await agentsProject(sandbox, { baseUrl: sim.url, apiKey: API_KEY });
    await deployStack(project.stack);
  });
  afterAll(async () => {
    await project?.cleanup();
    await judge?.close();
    await sim?.close();
    await sandbox?.cleanup();
  });

  it("no judge configured: exit 2 naming the settings, before any request to the service", async () => {
    await judged("needs-a-judge", ["introduces herself with a callback number"]);
    const before = (await requestCounts(sim)).count;
    const run = await smoke(["--scenario", "needs-a-judge"], { judge: false });
    expect(run.code).toBe(2);
    expect(run.stderr).toMatch(/agents:judgeBaseUrl \(or AGENT_IAC_JUDGE_BASE_URL\)/);
    expect(run.stderr).toMatch(/agents:judgeModel \(or AGENT_IAC_JUDGE_MODEL\)/);
    expect(run.stderr).toContain("support/needs-a-judge");
    expect((await requestCounts(sim)).count).toBe(before);
    expect(judge.requests).toHaveLength(0);
  });

  it("a rubric the judge fails: exit 1 with the reason and the cited lines on every surface", async () => {
    await judged("judged-fail", ["introduces herself with a callback number"]);
    const run = await smoke(["--scenario", "judged-fail", "--no-judge-cache"]);
    expect(run.code).toBe(1);
    const reason = "the agent never gives a callback number";
    expect(run.stdout).toContain(reason);
    expect(run.stdout).toMatch(
      /judge: introduces herself with a callback number: fail 3\/3 \(answered by test-judge, not test-model\): .* \(lines \d+/,
    );
    const assertion = run.report?.results[0]?.assertions.find((a) => a.judgement);
    expect(assertion?.judgement).toMatchObject({ verdict: "fail", agreement: "3/3", reason });
    const cited = assertion?.judgement?.lines ?? [];
    expect(cited.length).toBeGreaterThan(0);
    const line = run.report?.results[0]?.transcript[(cited[0] as number) - 1] as string;
    expect(line).toMatch(/Maya/);
    expect(assertion?.context).toContain(line);
    expect(run.junit).toContain(reason);
    expect(run.junit).toContain(line.replace(/"/g, "&quot;").replace(/'/g, "&apos;").slice(0, 20));
    expect(run.html).toContain(reason);
    expect(run.html).toMatch(/class="judgement" data-verdict="fail"/);
    expect(run.html).toMatch(new RegExp(`turn agent pointed" id="[^"]*-e${(cited[0] as number) - 1}"`));
    expect(run.stdout).toContain("judge test-model: 3 request(s), 0 vote(s) from the cache (--no-judge-cache)");
    // A second call with the same transcript costs nothing and gets the same verdict.
    const again = await smoke(["--scenario", "judged-fail"]);
    expect(again.code).toBe(1);
    expect(again.stdout).toContain("judge test-model: 0 request(s), 3 vote(s) from the cache");
    expect(again.report?.results[0]?.assertions.find((a) => a.judgement)?.judgement).toMatchObject({
      verdict: "fail",
      reason,
      lines: cited,
      cached_votes: 3,
    });
  });

  it("2 of 3 votes pass: passed, shown as 2/3 and uncertain", async () => {
    await judged("judged-split", ["sounds friendly"]);
    const run = await smoke(["--scenario", "judged-split", "--no-judge-cache"]);
    expect(run.code).toBe(0);
    expect(run.stdout).toMatch(/judged: pass 2\/3 \(uncertain\) "sounds friendly"/);
    const judgement = run.report?.results[0]?.assertions.find((a) => a.judgement)?.judgement;
    expect(judgement).toMatchObject({ verdict: "pass", agreement: "2/3", uncertain: true });
    expect(run.html).toMatch(/<span class="votes">2\/3<\/span> <span class="warn-text">uncertain/);
    expect(run.junit).toContain("judged &quot;sounds friendly&quot;: pass 2/3 (uncertain)");
  });

  it("votes: auto with a judge that alternates: inconclusive, the judge's fault, on every surface; never a pass, exit 1", async () => {
    // pass, fail, pass, fail …: 9 votes end 5 to 4, and the 9th would have decided it.
    let n = 0;
    judge.script["flips forever"] = () => (n++ % 2 === 0 ? { verdict: "pass" } : { verdict: "fail", reason: "no" });
    await judged("judged-unsettled", [{ rubric: "flips forever", votes: "auto", max_votes: 9 }]);
    const run = await smoke(["--scenario", "judged-unsettled", "--no-judge-cache", "--concurrency", "1"]);
    expect(run.code, run.stdout + run.stderr).toBe(1);
    const report = run.report as Report & {
      results: { outcome: { kind: string; code: string | null; stage: string | null }; fault: string | null }[];
      scenarios: { verdict: string }[];
      summary: { passed: number; inconclusive?: number };
    };
    // The undecided call is not placed again: the judge is in doubt, not the call (and the budget counts no second call).
    expect(report.results.length).toBe(1);
    for (const result of report.results) {
      expect(result.status).toBe("inconclusive");
      expect(result.outcome).toMatchObject({ kind: "inconclusive", stage: "judge", code: "judge_unsettled" });
      expect(result.fault).toBe("judge");
      expect(result.error).toMatch(/^inconclusive: the judge did not settle "flips forever"/);
      const judgement = result.assertions.find((a) => a.judgement)?.judgement;
      expect(judgement).toMatchObject({ verdict: "inconclusive", uncertain: true, lines: [] });
      expect(judgement?.reason).toBe("5 pass, 4 fail after 9 votes: not settled at 95 %");
    }
    expect(report.scenarios[0]?.verdict).toBe("inconclusive");
    expect(report.summary).toMatchObject({ passed: 0, inconclusive: 1 });
    expect(run.stdout).toMatch(
      /\? support\/judged-unsettled#1 .*inconclusive: the judge did not settle .*\(fault: judge\)/,
    );
    expect(run.stdout).not.toMatch(/✓ support\/judged-unsettled/);
    expect(run.stdout).toContain(
      "support/judged-unsettled: 0/1 passed, too few of its calls were conclusive → inconclusive",
    );
    expect(run.stdout).toContain("calls 1 inconclusive: 1 judge");
    expect(run.junit).toContain(
      '<failure message="inconclusive: too few of its calls were conclusive" type="inconclusive">',
    );
    expect(run.junit).toContain("fault: judge");
    expect(run.html).toMatch(/data-status="inconclusive" data-outcome="inconclusive"[^>]* data-fault="judge"/);
    expect(run.html).toContain("calls 1 inconclusive: 1 judge");
    expect(run.html).not.toMatch(/data-exit-code="0"/);
  });

  it("a judge answering garbage, or stalling: exit 3, never 0", async () => {
    await judged("judged-garbage", [{ rubric: "garbage", votes: 1 }]);
    const garbage = await smoke(["--scenario", "judged-garbage"]);
    expect(garbage.code).toBe(3);
    expect(garbage.stdout).toMatch(/judge could not decide "garbage".*not JSON/);
    expect(garbage.report?.results[0]?.status).toBe("error");
    await judged("judged-stall", [{ rubric: "stalls", votes: 1 }]);
    const stall = await smoke(["--scenario", "judged-stall"], { env: { AGENT_IAC_JUDGE_TIMEOUT_SEC: "1" } });
    expect(stall.code).toBe(3);
    expect(stall.stdout).toMatch(/no complete response within 1 s/);
  });

  it("iterations with a threshold: the judge's verdict per iteration counts towards min_pass", async () => {
    await judged("judged-iterations", [{ rubric: "alternates", votes: 1 }], { iterations: 3, min_pass: 2 });
    const run = await smoke(["--scenario", "judged-iterations", "--no-judge-cache", "--concurrency", "1"]);
    expect(run.code).toBe(0);
    expect(run.stdout).toMatch(/support\/judged-iterations: 2\/3 passed .*→ flaky/);
  });

  it("the dry run counts judge requests", async () => {
    const run = await smoke(["--scenario", "judged-split", "--dry-run"]);
    expect(run.code).toBe(0);
    expect(run.stdout).toContain("3 judge request(s) per call");
    expect(run.stdout).toMatch(/at most 3 judge request\(s\)/);
  });

  it("judge check measures agreement with labels; judge_min_agreement refuses (exit 2) until it is measured, then the report carries it", async () => {
    const rubric = "introduces herself with a callback number";
    await judged("trusted-judge", [rubric], { judge_min_agreement: 0.9 });
    const refused = await smoke(["--scenario", "trusted-judge"]);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toMatch(/was never measured with test-model/);
    const labels = path.join(project.dir, "labels.yaml");
    const lines = ["agent: Hi, this is Maya from Northwind.", "user: bye"];
    // Ten labelled transcripts (a gate needs at least 10 per rubric): 3 the human passed, 7 failed.
    await writeFile(
      labels,
      [
        "items:",
        ...Array.from({ length: 10 }, (_, i) =>
          i < 3
            ? `  - { rubric: "${rubric}", human: pass, transcript: ${JSON.stringify([...lines, `agent: call us at 555-0${i}`])} }`
            : `  - { rubric: "${rubric}", human: fail, transcript: ${JSON.stringify([...lines.slice(0, 1), `user: ${i}`])} }`,
        ),
      ].join("\n"),
    );
    const env = {
      ...process.env,
      ...sandbox.env,
      AGENT_IAC_JUDGE_BASE_URL: judge.url,
      AGENT_IAC_JUDGE_MODEL: "test-model",
      AGENT_IAC_JUDGE_API_KEY: JUDGE_KEY,
    };
    const check = await runInProcess(["judge", "check", "labels.yaml", "--stack", "test", "--json", "check.json"], {
      cwd: project.dir,
      env,
    });
    everything.push(check.stdout, check.stderr);
    expect(check.code).toBe(0);
    // The judge fails all ten; the human failed seven: agreement 7/10, kappa 0 (the judge never passes).
    expect(check.stdout).toMatch(
      /"introduces herself with a callback number": agreement 0\.7 \(7\/10\), kappa 0 \(95 % CI -1 to 0\.641, 10 distinct item\(s\)\); human pass 0\.3, fail 0\.7; vote consistency 1, flip rate 0/,
    );
    expect(check.stdout).toContain("pass×pass 0, pass×fail 3, fail×pass 0, fail×fail 7");
    const below = await smoke(["--scenario", "trusted-judge"]);
    expect(below.code).toBe(2);
    expect(below.stderr).toMatch(/agreed with its human labels 0\.7 of the time .* below judge_min_agreement 0\.9/);
    await judged("trusted-judge", [rubric], { judge_min_agreement: 0.6 });
    const run = await smoke(["--scenario", "trusted-judge"]);
    expect(run.code).toBe(1);
    const judgement = run.report?.results[0]?.assertions.find((a) => a.judgement)?.judgement as Record<string, unknown>;
    expect(judgement.calibration).toMatchObject({ items: 10 });
    expect((judgement.calibration as { kappa: number }).kappa).toBeCloseTo(0, 10);
    expect((judgement.calibration as { agreement: number }).agreement).toBeCloseTo(0.7, 10);
    expect(run.html).toContain("agreement with human labels 70 % over 10");
  });

  it("record, then replay from the cache with the judge stopped: the same verdicts; a changed rubric asks again", async () => {
    const cache = await mkdtemp(path.join(project.dir, "cache-"));
    await judged("judged-replay", ["replayed rubric"]);
    const recorded = await smoke(["--scenario", "judged-replay", "--record", "rec", "--judge-cache", cache]);
    expect(recorded.code).toBe(1);
    const before = recorded.report?.results[0]?.assertions.find((a) => a.judgement)?.judgement;
    // A recording can be labelled: judge check reads its transcript as the judge saw it.
    const recordings = await readdir(path.join(project.dir, "rec", "support"));
    const recording = recordings.find((f) => f.startsWith("judged-replay")) as string;
    await writeFile(
      path.join(project.dir, "rec-labels.yaml"),
      `items:\n  - { rubric: "replayed rubric", human: fail, recording: rec/support/${recording} }\n`,
    );
    const check = await runInProcess(["judge", "check", "rec-labels.yaml", "--stack", "test", "--judge-cache", cache], {
      cwd: project.dir,
      env: {
        ...process.env,
        ...sandbox.env,
        AGENT_IAC_JUDGE_BASE_URL: judge.url,
        AGENT_IAC_JUDGE_MODEL: "test-model",
        AGENT_IAC_JUDGE_API_KEY: JUDGE_KEY,
      },
    });
    everything.push(check.stdout, check.stderr);
    expect(check.code, check.stderr).toBe(0);
    expect(check.stdout).toMatch(
      /✓ line 2 "replayed rubric": judge fail 3\/3 \(answered by test-judge, not test-model\), human fail: replayed reason/,
    );
    const asked = judge.requests.length;
    await judge.close();
    const replay = await smoke(["--replay", "rec", "--scenario", "judged-replay", "--judge-cache", cache]);
    expect(replay.code).toBe(1);
    expect(judge.requests.length).toBe(asked);
    const after = replay.report?.results[0]?.assertions.find((a) => a.judgement)?.judgement;
    expect(after).toMatchObject({
      verdict: before?.verdict,
      reason: before?.reason,
      lines: before?.lines,
      cached_votes: 3,
    });
    expect(replay.stdout).toContain("all 3 vote(s) came from the judge cache");
    // A changed rubric is not in the cache: replay asks (the judge is down: an error, never a pass) and says so.
    await judged("judged-replay", ["replayed rubric, reworded"]);
    const changed = await smoke(["--replay", "rec", "--scenario", "judged-replay", "--judge-cache", cache]);
    expect(changed.code).toBe(3);
    expect(changed.stdout).toMatch(/3 vote\(s\) were not in the judge cache \(a new or changed rubric/);
  });

  it("never shows the judge key or a stream token on any surface", () => {
    const all = everything.join("\n");
    expect(all.length).toBeGreaterThan(1000);
    expect(all).not.toContain(JUDGE_KEY);
    expect(all).not.toContain(API_KEY);
    expect(all).not.toMatch(TOKEN_PATTERN);
    // What the judge was sent: transcripts, never the service's key or a stream token.
    const sent = JSON.stringify(judge.requests.map((r) => r.body));
    expect(sent).toContain("this is Maya");
    expect(sent).not.toContain(API_KEY);
    expect(sent).not.toMatch(TOKEN_PATTERN);
  });
});
