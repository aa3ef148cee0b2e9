// `smoke --replay DIR` replays what DIR holds: a selected scenario with no recording in it is "not
// recorded" (not run), said so, and needs no judge, even when its expectations are judged. In-process
// over a recording of a real call to the simulator on port 0, with no judge configured.
import { readFile, writeFile } from "node:fs/promises";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parseDocument } from "yaml";
import { runInProcess } from "../../helpers/cli.ts";
import { type RecordedCall, recordedCall } from "../../helpers/recorded-call.ts";

const SCENARIO = "greets-and-summarizes";

describe("a judged scenario with no recording in the replayed directory", () => {
  let recorded: RecordedCall;
  beforeAll(async () => {
    recorded = await recordedCall("replay-not-recorded", { agent: "support", scenario: SCENARIO });
    expect(recorded.verdicts).toEqual(["passed"]);
  }, 120_000);
  afterAll(async () => {
    await recorded?.close();
  });

  it("is not recorded (not run), not a judge error: the recorded scenario is replayed", async () => {
    const file = path.join(recorded.dir, "agents", "support.yaml");
    const doc = parseDocument(await readFile(file, "utf8"));
    const never = { name: "judged-never-recorded", expect: { judge: ["offers a callback"] } };
    doc.addIn(["smoke"], doc.createNode({ ...(doc.toJS().smoke[0] as object), ...never }));
    await writeFile(file, doc.toString());
    // No judge is configured anywhere (no AGENT_IAC_JUDGE_* in the environment).
    const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith("AGENT_IAC_JUDGE")));
    const run = await runInProcess(["smoke", "--stack", "dev", "--replay", "rec", "--json", "r.json"], {
      cwd: recorded.dir,
      env,
    });
    expect(run.stderr).not.toContain("no judge is configured");
    expect(run.code, run.stdout + run.stderr).toBe(0);
    const note = /not recorded \(not run\): .*support\/judged-never-recorded: no recording of them in rec/;
    expect(run.stdout).toMatch(note);
    const report = JSON.parse(await readFile(path.join(recorded.dir, "reports", "r.json"), "utf8"));
    expect(report.scenarios.map((s: { scenario: string; verdict: string }) => [s.scenario, s.verdict])).toEqual([
      [SCENARIO, "passed"],
    ]);
    expect(report.notes.some((n: string) => note.test(n))).toBe(true);
  });
});
