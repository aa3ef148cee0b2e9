// `smoke --replay`'s use case: the current expectations of the stack file's project evaluated
// against recorded calls, offline. What it decides: a judge only for recorded judged scenarios
// (none needed for those not recorded, which are said "not recorded (not run)", with the
// recordings' directory as the user named it), the judge's model warned of when its name moves.
// A recording of a real call to the simulator on port 0, and a judge as a real HTTP server.
import { cp, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { parseDocument } from "yaml";
import { ConfigError } from "../../src/errors/index.ts";
import { projectContext } from "../../src/settings/index.ts";
import { replayRun } from "../../src/usecases/replay.ts";
import { startTestJudge, type TestJudge } from "../helpers/judge-server.ts";
import { type RecordedCall, recordedCall } from "../helpers/recorded-call.ts";

const SCENARIO = "greets-and-summarizes";
let recorded: RecordedCall;
let judge: TestJudge;
let agentFile: string;
let original: string;
let outside: string;

const out = () => {
  let text = "";
  return { write: (chunk: string) => (text += chunk), text: () => text };
};

/** The support agent's file with its recorded scenario changed by `edit`, and `extra` scenarios added. */
async function editSupport(edit: Record<string, unknown>, ...extra: Record<string, unknown>[]) {
  const doc = parseDocument(original);
  const first = doc.toJS().smoke[0] as Record<string, unknown>;
  doc.setIn(["smoke", 0], doc.createNode({ ...first, ...edit }));
  for (const scenario of extra) doc.addIn(["smoke"], doc.createNode({ ...first, ...scenario }));
  await writeFile(agentFile, doc.toString());
}

const run = (env: NodeJS.ProcessEnv, dir = path.join(recorded.dir, "rec"), said = out()) =>
  replayRun(
    {
      stack: "dev",
      project: projectContext({ cwd: recorded.dir, env }),
      dir,
      selection: { agents: ["support"] },
    },
    { out: said },
  );

beforeAll(async () => {
  recorded = await recordedCall("replay-usecase", { agent: "support", scenario: SCENARIO });
  expect(recorded.verdicts).toEqual(["passed"]);
  agentFile = path.join(recorded.dir, "agents", "support.yaml");
  original = await readFile(agentFile, "utf8");
  outside = await mkdtemp(path.join(os.tmpdir(), "replay-outside-"));
  await cp(path.join(recorded.dir, "rec"), outside, { recursive: true });
  judge = await startTestJudge({
    "introduces herself": (transcript) => ({ verdict: /Maya/.test(transcript) ? "pass" : "fail" }),
  });
}, 60_000);
afterEach(async () => {
  await writeFile(agentFile, original);
});
afterAll(async () => {
  await judge?.close();
  await recorded?.close();
  await rm(outside, { recursive: true, force: true });
});

describe("replayRun", () => {
  it("the recorded call against today's expectations: a change to them decides the verdict, no service asked", async () => {
    const passed = await run({});
    expect(passed.scenarios.map((s) => [s.scenario, s.verdict])).toEqual([[SCENARIO, "passed"]]);
    await editSupport({ expect: { says: ["this is Bob"] } });
    const failed = await run({});
    expect(failed.scenarios.map((s) => [s.scenario, s.verdict])).toEqual([[SCENARIO, "failed"]]);
    expect(failed.notes.filter((n) => n.startsWith("not recorded"))).toEqual([]);
  });

  it("a selected judged scenario never recorded is 'not recorded (not run)', needs no judge, and is named as the user named the directory", async () => {
    const said = out();
    const never = { name: "judged-never-recorded", expect: { judge: ["introduces herself"] } };
    await editSupport({}, never);
    const report = await run({}, path.join(recorded.dir, "rec"), said);
    const note = "not recorded (not run): support/judged-never-recorded: no recording of it in rec";
    expect(report.notes).toContain(note);
    expect(said.text()).toContain(`${note}\n`);
    expect(report.scenarios.map((s) => [s.scenario, s.verdict])).toEqual([[SCENARIO, "passed"]]);
    // A directory outside the project is named as it is.
    const elsewhere = await run({}, outside);
    expect(elsewhere.notes).toContain(
      `not recorded (not run): support/judged-never-recorded: no recording of it in ${outside}`,
    );
  });

  it("a recorded judged scenario needs a judge: none configured is a configuration error, one configured is asked", async () => {
    await editSupport({ expect: { judge: ["introduces herself by name"] } });
    const error = await run({}).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ConfigError);
    expect(String((error as Error).message)).toContain(
      `scenario(s) support/${SCENARIO} have judged expectations (expect.judge), but no judge is configured for stack dev`,
    );
    const before = judge.requests.length;
    const env = {
      AGENT_IAC_JUDGE_BASE_URL: judge.url,
      AGENT_IAC_JUDGE_MODEL: "gpt-4o",
      AGENT_IAC_JUDGE_CACHE_KEY: "replay-usecase-key",
    };
    const report = await run(env);
    expect(judge.requests.length).toBeGreaterThan(before);
    expect(report.scenarios.map((s) => [s.scenario, s.verdict])).toEqual([[SCENARIO, "passed"]]);
    // The judge's model name moves: said in the report, where its verdicts are read.
    expect(report.notes).toContainEqual(expect.stringMatching(/^warning: .*"gpt-4o" moves/));
  });
});
