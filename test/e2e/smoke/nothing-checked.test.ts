// Nothing checked is never passed (issue 41): `smoke --replay` in which every recording is skipped
// (its scenario is gone from the agent files) evaluates no scenario: exit 3, said on the terminal,
// and the JUnit report is no green suite. In-process over a recording of a real call to the
// simulator on port 0.
import { readFile, writeFile } from "node:fs/promises";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runInProcess } from "../../helpers/cli.ts";
import { type RecordedCall, recordedCall } from "../../helpers/recorded-call.ts";

const SCENARIO = "greets-and-summarizes";

describe("nothing checked is never passed", () => {
  let recorded: RecordedCall;
  let dir: string;
  beforeAll(async () => {
    recorded = await recordedCall("nothing-checked", { agent: "support", scenario: SCENARIO });
    dir = recorded.dir;
    expect(recorded.verdicts).toEqual(["passed"]);
  }, 120_000);
  afterAll(async () => {
    await recorded?.close();
  });

  it("a replay whose every recording is skipped exits 3 and says nothing was checked", async () => {
    const replay = () =>
      runInProcess(["smoke", "--stack", "dev", "--replay", "rec", "--json", "r.json", "--junit", "r.xml"], {
        cwd: dir,
        env: process.env,
      });
    const before = await replay();
    expect(before.code, before.stdout + before.stderr).toBe(0);
    // The scenario is renamed in the agent files: its recording no longer belongs to any scenario.
    const file = path.join(dir, "agents", "support.yaml");
    await writeFile(file, (await readFile(file, "utf8")).replace(`name: ${SCENARIO}`, "name: renamed-scenario"));
    const run = await replay();
    expect(run.stdout + run.stderr).toMatch(/skipped 1 recording\(s\) of support\/greets-and-summarizes/);
    expect(run.code).toBe(3);
    expect(run.stdout).toContain("nothing was checked: no scenario was evaluated, so this run is not a pass");
    const report = JSON.parse(await readFile(path.join(dir, "reports", "r.json"), "utf8"));
    expect(report.scenarios.every((s: { verdict: string }) => s.verdict === "not_run")).toBe(true);
  });
});
