// The judge's gate knows its uncertainty (issue 51): `judge check` in-process against a scripted
// judge on port 0 reports kappa's 95 % interval, the human verdicts' shares and the flip rate; a
// scenario's judge_min_kappa gates on the interval's lower bound, and no gate (judge_min_agreement
// too) accepts labels that hold one human verdict only. The gates are read by `smoke --replay` of a
// real call's recording, before any judge request for the call.
import { readFile, writeFile } from "node:fs/promises";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parseDocument } from "yaml";
import { runInProcess } from "../../helpers/cli.ts";
import { judgeEnv, startTestJudge, type TestJudge } from "../../helpers/judge-server.ts";
import { type RecordedCall, recordedCall } from "../../helpers/recorded-call.ts";

const SCENARIO = "greets-and-summarizes";
const ALWAYS_PASS = "says something polite";
const BY_CALLBACK = "gives a callback number";

describe("the judge's gate knows its uncertainty (judge check, judge_min_kappa, one-verdict labels)", () => {
  let recorded: RecordedCall;
  let judge: TestJudge;
  let dir: string;

  const env = () => judgeEnv(judge, "test-model-2024-08-06", "judge-gate-signing-key-77a1");
  const replay = (cache: string) =>
    runInProcess(["smoke", "--stack", "dev", "--replay", "rec", "--scenario", SCENARIO, "--judge-cache", cache], {
      cwd: dir,
      env: env(),
    });
  const check = (file: string, cache: string) =>
    runInProcess(["judge", "check", file, "--judge-cache", cache, "--json", `${file}.json`], { cwd: dir, env: env() });
  /** Sets the scenario's one judged rubric and its gates. */
  const gated = async (rubric: string, gates: Record<string, number>) => {
    const file = path.join(dir, "agents", "support.yaml");
    const doc = parseDocument(await readFile(file, "utf8"));
    const index = (doc.toJS().smoke as { name: string }[]).findIndex((s) => s.name === SCENARIO);
    doc.setIn(["smoke", index, "expect", "judge"], doc.createNode([rubric]));
    for (const gate of ["judge_min_agreement", "judge_min_kappa"]) doc.deleteIn(["smoke", index, gate]);
    for (const [gate, value] of Object.entries(gates)) doc.setIn(["smoke", index, gate], value);
    await writeFile(file, doc.toString());
  };
  /** Ten labelled transcripts of a rubric: the first `passes` with a callback number, human pass; the rest human fail. */
  const labels = (file: string, rubric: string, passes: number) =>
    writeFile(
      path.join(dir, file),
      `items:\n${Array.from({ length: 10 }, (_, i) =>
        i < passes
          ? `  - { rubric: "${rubric}", human: pass, transcript: ["agent: Hi, this is Maya ${i}.", "agent: call us back at 555-01${i}"] }`
          : `  - { rubric: "${rubric}", human: fail, transcript: ["agent: Hi, this is Maya ${i}."] }`,
      ).join("\n")}\n`,
    );

  beforeAll(async () => {
    recorded = await recordedCall("judge-gate", { agent: "support", scenario: SCENARIO });
    dir = recorded.dir;
    judge = await startTestJudge({
      [ALWAYS_PASS]: [{ verdict: "pass", reason: "always" }],
      [BY_CALLBACK]: (transcript) =>
        /call us back/.test(transcript)
          ? { verdict: "pass", reason: "gives one", cite: /call us back/ }
          : { verdict: "fail", reason: "gives none", cite: /Maya/ },
    });
  }, 120_000);
  afterAll(async () => {
    await judge?.close();
    await recorded?.close();
  });

  it("labels that are all `pass`, with a judge that always says pass, satisfy no gate: exit 2 naming why, before any judge request", async () => {
    await labels("all-pass.yaml", ALWAYS_PASS, 10);
    const measured = await check("all-pass.yaml", "c1");
    expect(measured.code, measured.stderr).toBe(0);
    expect(measured.stdout).toMatch(/agreement 1 \(10\/10\), kappa n\/a .*; human pass 1, fail 0/);
    expect(measured.stdout).toContain("no gate accepts this measurement: every labelled transcript is a human pass");
    // The test judge names itself "test-judge" in its answers; the model asked is pinned, so no warning.
    expect(measured.stdout).toMatch(
      /judge pass 3\/3 \(answered by test-judge, not test-model-2024-08-06\), human pass/,
    );
    expect(measured.stdout).not.toContain("warning:");
    for (const gates of [{ judge_min_agreement: 0.9 }, { judge_min_kappa: 0.2 }] as Record<string, number>[]) {
      await gated(ALWAYS_PASS, gates);
      const asked = judge.requests.length;
      const run = await replay("c1");
      expect(run.code, run.stdout + run.stderr).toBe(2);
      expect(run.stderr).toContain(
        `"${ALWAYS_PASS}" cannot pass ${Object.keys(gates)[0]}: every labelled transcript is a human pass: a judge that always says pass would agree with all of them`,
      );
      expect(judge.requests.length).toBe(asked);
    }
  });

  it("judge_min_kappa gates on the 95 % interval's lower bound: perfect agreement over 10 balanced labels (kappa 1, lower bound 0.445) passes 0.4 and fails 0.5", async () => {
    await labels("balanced.yaml", BY_CALLBACK, 5);
    const measured = await check("balanced.yaml", "c2");
    expect(measured.code, measured.stderr).toBe(0);
    expect(measured.stdout).toContain(
      `"${BY_CALLBACK}": agreement 1 (10/10), kappa 1 (95 % CI 0.445 to 1, 10 distinct item(s)); human pass 0.5, fail 0.5; vote consistency 1, flip rate 0`,
    );
    const json = JSON.parse(await readFile(path.join(dir, "reports", "balanced.yaml.json"), "utf8"));
    expect(json.overall.kappa_interval.low).toBeCloseTo(0.445, 3);
    expect(json.overall.human).toEqual({ pass: 5, fail: 5 });

    await gated(BY_CALLBACK, { judge_min_kappa: 0.5 });
    const refused = await replay("c2");
    expect(refused.code, refused.stdout + refused.stderr).toBe(2);
    expect(refused.stderr).toMatch(
      /"gives a callback number" has kappa 1 whose 95 % interval's lower bound 0\.445 \(.*, over 10\) is below judge_min_kappa 0\.5/,
    );

    await gated(BY_CALLBACK, { judge_min_kappa: 0.4 });
    const trusted = await replay("c2");
    // Past the gate, the call is judged: the recorded greeting gives no callback number.
    expect(trusted.code, trusted.stdout + trusted.stderr).toBe(1);
    expect(trusted.stdout).toContain(
      `✗ judge: ${BY_CALLBACK}: fail 3/3 (answered by test-judge, not test-model-2024-08-06): gives none`,
    );
  });

  it("validate --stack warns of a judge model name that moves, and not of a pinned one", async () => {
    await gated(BY_CALLBACK, {});
    const moving = await runInProcess(["validate", "--stack", "dev"], {
      cwd: dir,
      env: { ...env(), AGENT_IAC_JUDGE_MODEL: "gpt-4o-latest" },
    });
    expect(moving.code, moving.stderr).toBe(0);
    expect(moving.stderr).toContain('warning: agents:judgeModel "gpt-4o-latest" moves ("latest" names');
    const checked = await runInProcess(["judge", "check", "all-pass.yaml", "--judge-cache", "c4"], {
      cwd: dir,
      env: { ...env(), AGENT_IAC_JUDGE_MODEL: "gpt-4o-latest" },
    });
    expect(checked.code, checked.stderr).toBe(0);
    expect(checked.stdout).toContain('warning: agents:judgeModel "gpt-4o-latest" moves');
    const pinned = await runInProcess(["validate", "--stack", "dev"], { cwd: dir, env: env() });
    expect(pinned.code, pinned.stderr).toBe(0);
    expect(pinned.stderr).not.toContain("moves");
    // The smoke report says it too: on the terminal and in the JSON report's notes.
    const run = await runInProcess(
      ["smoke", "--stack", "dev", "--replay", "rec", "--scenario", SCENARIO, "--judge-cache", "c4", "--json", "w.json"],
      { cwd: dir, env: { ...env(), AGENT_IAC_JUDGE_MODEL: "gpt-4o-latest" } },
    );
    expect(run.code, run.stderr).toBe(1);
    expect(run.stdout).toContain('warning: agents:judgeModel "gpt-4o-latest" moves');
    const report = JSON.parse(await readFile(path.join(dir, "reports", "w.json"), "utf8"));
    expect(report.notes).toContainEqual(expect.stringContaining('agents:judgeModel "gpt-4o-latest" moves'));
  });

  it("the model id the judge's endpoint says answered is recorded per judgement (cached votes too) and shown where it is not the one asked", async () => {
    await gated(BY_CALLBACK, {});
    const run = (model: string) =>
      runInProcess(
        [
          "smoke",
          "--stack",
          "dev",
          "--replay",
          "rec",
          "--scenario",
          SCENARIO,
          "--judge-cache",
          "c2",
          "--json",
          "m.json",
          "--junit",
          "m.xml",
          "--html",
          "m.html",
        ],
        { cwd: dir, env: { ...env(), AGENT_IAC_JUDGE_MODEL: model } },
      );
    const judgement = async () =>
      JSON.parse(await readFile(path.join(dir, "reports", "m.json"), "utf8")).results[0].assertions.find(
        (a: { judgement?: unknown }) => a.judgement,
      ).judgement;
    // The test judge answers as "test-judge" whatever it is asked for.
    for (const pass of ["asked", "cached"]) {
      const asked = await run("test-model-2024-08-06");
      expect(asked.code, pass).toBe(1);
      expect(asked.stdout).toContain("fail 3/3 (answered by test-judge, not test-model-2024-08-06): gives none");
      expect(await judgement()).toMatchObject({ model: "test-model-2024-08-06", answered_model: "test-judge" });
      const junit = await readFile(path.join(dir, "reports", "m.xml"), "utf8");
      expect(junit).toContain("fail 3/3 (answered by test-judge, not test-model-2024-08-06)");
      const html = await readFile(path.join(dir, "reports", "m.html"), "utf8");
      expect(html.match(/agreement with human labels[^<]*/)?.[0]).toBe(
        "agreement with human labels 100 % over 10, kappa 1.00 (95 % CI 0.44–1.00)",
      );
      expect(html).toMatch(
        /judged by <code>test-model-2024-08-06<\/code> <span class="warn-text">\(answered by <code>test-judge<\/code>\)/,
      );
    }
    const same = await run("test-judge");
    expect(same.stdout).not.toContain("answered by");
    expect(await judgement()).toMatchObject({ model: "test-judge", answered_model: "test-judge" });
  });
});
