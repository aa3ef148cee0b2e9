// `agent-iac report merge` as a user runs it: merged verdicts and exit codes from shard reports,
// and clear usage errors (exit 2) for files that are not shard reports of one run.
import { execFileSync } from "node:child_process";
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { reportJson } from "../../src/report/index.ts";
import { type CallResult, reportSchema } from "../../src/results/index.ts";
import { scenarioKey } from "../../src/smoke/gates.ts";
import { reportFromCalls, type ScenarioGate } from "../../src/smoke/reports.ts";
import { runInProcess } from "../helpers/cli.ts";

const call = (iteration: number, status: CallResult["status"], scenario = "greets"): CallResult =>
  callResultSchemaDefaults({
    scenario,
    iteration,
    status,
    assertions: [{ description: "ends", passed: status === "passed", detail: null, context: [] }],
  });

/** Scenario name → its gate (every iteration must pass). */
const gatesOf = (planned: Record<string, number>) =>
  new Map<string, ScenarioGate>(
    Object.entries(planned).map(([scenario, n]) => [
      scenarioKey("support", scenario, "ca_1@v1"),
      { agent: "support", scenario, versionId: "ca_1@v1", plannedIterations: n, minPass: n, bounds: {} },
    ]),
  );

/** One shard's JSON report of the given calls, as `smoke --shard I/N --json` writes it. */
async function shardFile(
  name: string,
  index: number,
  count: number,
  gates: Map<string, ScenarioGate>,
  calls: CallResult[],
) {
  const file = path.join(dir, name);
  await writeFile(file, reportJson(reportFromCalls(calls, gates, { shard: { index, count } })));
  return file;
}

function callResultSchemaDefaults(extra: Partial<CallResult>): CallResult {
  return reportSchema.shape.results.unwrap().element.parse({
    agent: "support",
    scenario: "greets",
    iteration: 1,
    status: "passed",
    version_id: "ca_1@v1",
    timings: { duration_ms: 10 },
    ...extra,
  });
}

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), "report-merge-"));
});
afterAll(() => rm(dir, { recursive: true, force: true }));

describe("agent-iac report merge", () => {
  it("merges shards into the whole run's verdict and exit code, and writes JSON and JUnit", async () => {
    const gates = new Map<string, ScenarioGate>([
      [
        scenarioKey("support", "greets", "ca_1@v1"),
        { agent: "support", scenario: "greets", versionId: "ca_1@v1", plannedIterations: 4, minPass: 4, bounds: {} },
      ],
    ]);
    const shard = async (index: number, calls: CallResult[]) => {
      const file = path.join(dir, `shard-${index}.json`);
      await writeFile(file, reportJson(reportFromCalls(calls, gates, { shard: { index, count: 2 } })));
      return file;
    };
    const a = await shard(1, [call(1, "passed"), call(2, "passed")]);
    const b = await shard(2, [call(3, "failed"), call(4, "passed")]);
    const json = path.join(dir, "merged.json");
    const junit = path.join(dir, "merged.xml");
    const run = await runInProcess(["report", "merge", a, b, "--json", json, "--junit", junit]);
    expect(run.code).toBe(1);
    expect(run.stdout.trim().split("\n").at(-1)).toBe("0 passed, 1 failed");
    const merged = reportSchema.parse(JSON.parse(await readFile(json, "utf8")));
    expect(merged.scenarios.map((s) => `${s.verdict} ${s.passes}/${s.iterations}`)).toEqual(["failed 3/4"]);
    expect(await readFile(junit, "utf8")).toMatch(/<failure message="ends — 3 of 4 iterations passed \(min_pass 4\)"/);
    // Shard 2's report missing: its calls count as failed iterations, and the merge is refused (issue 41).
    const half = await runInProcess(["report", "merge", a]);
    expect(half.code).toBe(2);
    expect(half.stderr).toContain("no report of shard(s) 2/2");
  });

  it("refuses a FIFO and a directory before opening them, exit 2: a FIFO's read blocks until a writer comes", async () => {
    const fifo = path.join(dir, "shard.json");
    execFileSync("mkfifo", [fifo]);
    const pipe = await runInProcess(["report", "merge", fifo]);
    expect(pipe.code).toBe(2);
    expect(pipe.stderr).toContain(`${fifo}: it is not a regular file (a FIFO, socket or device is never read)`);
    const folder = await runInProcess(["report", "merge", dir]);
    expect(folder.code).toBe(2);
    expect(folder.stderr).toContain(`${dir}: it is a directory, not a file`);
  });

  it("with a missing shard, claims no decision: its calls are said to be in a missing shard's report", async () => {
    const gates = gatesOf({ greets: 6 });
    const a = await shardFile("lost-1.json", 1, 2, gates, [call(1, "passed"), call(2, "passed"), call(3, "passed")]);
    const json = path.join(dir, "lost.json");
    const run = await runInProcess(["report", "merge", a, "--json", json]);
    expect(run.code).toBe(2);
    expect(run.stdout).not.toContain("decided after");
    expect(run.stdout).toContain("support/greets: 3/6 passed");
    expect(run.stdout).toContain("3 in a missing shard's report, counted failed → failed");
    const merged = reportSchema.parse(JSON.parse(await readFile(json, "utf8")));
    expect(merged.scenarios[0]).toMatchObject({
      verdict: "failed",
      decided_after: null,
      calls_saved: 0,
      shard_missing: 3,
    });
  });

  it("explains a scenario one run planned and the other did not: not run, in the tally, exit 3", async () => {
    const a = await shardFile("lists-1.json", 1, 2, gatesOf({ greets: 2, extra: 2 }), [call(1, "passed")]);
    const b = await shardFile("lists-2.json", 2, 2, gatesOf({ greets: 2 }), [call(2, "passed")]);
    const run = await runInProcess(["report", "merge", a, b]);
    expect(run.code).toBe(3);
    expect(run.stdout).toContain("support/extra: 0/0 passed, no call in this report → not_run");
    expect(run.stdout.trim().split("\n").at(-1)).toBe("1 passed, 0 failed, 1 not run");
    expect(run.stderr).toContain(
      `support/extra: 0 of 2 planned iterations in the reports; ${b} does not plan it: the reports come from runs with different scenario lists`,
    );
    expect(run.stderr).toContain("and it is not run (exit 3)");
  });

  it("refuses what is not a report, an unreadable file and an unknown subcommand with exit 2", async () => {
    const foreign = path.join(dir, "foreign.json");
    await writeFile(foreign, JSON.stringify({ hello: "world" }));
    const notReport = await runInProcess(["report", "merge", foreign]);
    expect(notReport.code).toBe(2);
    expect(notReport.stderr).toContain(`${foreign}: not an agent-iac report`);
    const missing = await runInProcess(["report", "merge", path.join(dir, "nope.json")]);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain(`${path.join(dir, "nope.json")}: cannot read it (ENOENT)`);
    expect((await runInProcess(["report", "frob"])).code).toBe(2);
  });
});
