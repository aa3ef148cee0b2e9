// A run in another project than the process's cwd (its CommandIO's, the process left where it is)
// reads and shows that project's files, side by side with another. The runs that reach the Pulumi
// CLI: test/e2e/start/run-environment.test.ts.
import { existsSync } from "node:fs";
import { mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { CommandIO, runCli } from "../../src/commands/index.ts";
import { reportJson } from "../../src/report/index.ts";
import { type CallResult, reportSchema } from "../../src/results/index.ts";
import { scenarioKey } from "../../src/smoke/gates.ts";
import { reportFromCalls, type ScenarioGate } from "../../src/smoke/reports.ts";
import { runInProcess } from "../helpers/cli.ts";

const dirs: string[] = [];
afterAll(() => Promise.all(dirs.map((dir) => rm(dir, { recursive: true, force: true }))));

async function projectWith(file: string, text: string): Promise<string> {
  const dir = await mkdtemp(path.join(os.tmpdir(), "agent-iac-inproc-"));
  dirs.push(dir);
  await writeFile(path.join(dir, "Pulumi.yaml"), "name: inproc\nruntime: nodejs\n");
  await mkdir(path.join(dir, "agents"));
  await writeFile(path.join(dir, "agents", file), text);
  return dir;
}

/** `agent-iac <args>` with `cwd` as the run's directory, nothing of the process changed. */
async function run(args: string[], cwd: string): Promise<{ code: number; stderr: string }> {
  let stderr = "";
  const io = new CommandIO(
    { stdout: { write: () => true }, stderr: { write: (text: string) => (stderr += text) }, env: {}, cwd },
    () => {},
  );
  const code = await runCli(args, io);
  return { code, stderr };
}

describe("in-process runs", () => {
  it("validate reads the run's project, says its paths from there, and leaves the process alone", async () => {
    const cwd = process.cwd();
    const env = process.env;
    const [broken, other] = await Promise.all([
      projectWith("bad.yaml", "key: [\n"),
      projectWith("odd.yaml", "key: [\n"),
    ]);
    // Side by side: each says its own file, relative to its own project.
    const [a, b] = await Promise.all([run(["validate"], broken), run(["validate"], other)]);
    expect(a.code).toBe(1);
    expect(a.stderr).toMatch(/^agents\/bad\.yaml:\d+:\d+: /);
    expect(b.code).toBe(1);
    expect(b.stderr).toMatch(/^agents\/odd\.yaml:\d+:\d+: /);
    expect(process.cwd()).toBe(cwd);
    expect(process.env).toBe(env);
  });

  it("report merge and schema --out read and write the run's project's files, side by side, the process untouched", async () => {
    const cwd = process.cwd();
    const env = process.env;
    // Two projects, each with two shard reports of the same names: one run all passed, one failed.
    const [passing, failing] = await Promise.all([shardsIn(["passed", "passed"]), shardsIn(["passed", "failed"])]);
    const merge = (dir: string) =>
      runInProcess(["report", "merge", "shard-1.json", "shard-2.json", "--json", "merged.json"], {
        cwd: dir,
        env: { PATH: env.PATH },
      });
    const schema = (dir: string) => runInProcess(["schema", "--out", "schema.json"], { cwd: dir, env: {} });
    const [a, b, sa, sb] = await Promise.all([merge(passing), merge(failing), schema(passing), schema(failing)]);
    expect([a.code, b.code], `${a.stderr}\n${b.stderr}`).toEqual([0, 1]);
    const summary = async (dir: string) =>
      JSON.parse(await readFile(path.join(dir, "reports", "merged.json"), "utf8")).summary;
    expect(await summary(passing)).toMatchObject({ passed: 1, failed: 0 });
    expect(await summary(failing)).toMatchObject({ passed: 0, failed: 1 });
    // Said as named; written in each run's project, nothing in the process's directory.
    expect([sa.stdout, sb.stdout]).toEqual(["wrote schema.json\n", "wrote schema.json\n"]);
    for (const dir of [passing, failing]) expect(existsSync(path.join(dir, "schema.json"))).toBe(true);
    expect(existsSync(path.join(cwd, "schema.json"))).toBe(false);
    expect(existsSync(path.join(cwd, "reports", "merged.json"))).toBe(false);
    expect(process.cwd()).toBe(cwd);
    expect(process.env).toBe(env);
  });
});

/** A project holding shard-1.json and shard-2.json: one call each, of one scenario whose every call must pass. */
async function shardsIn(statuses: [CallResult["status"], CallResult["status"]]): Promise<string> {
  const dir = await mkdtemp(path.join(os.tmpdir(), "agent-iac-inproc-shards-"));
  dirs.push(dir);
  const gates = new Map<string, ScenarioGate>([
    [
      scenarioKey("support", "greets", "ca_1@v1"),
      { agent: "support", scenario: "greets", versionId: "ca_1@v1", plannedIterations: 2, minPass: 2, bounds: {} },
    ],
  ]);
  for (const [i, status] of statuses.entries()) {
    const call = reportSchema.shape.results.unwrap().element.parse({
      agent: "support",
      scenario: "greets",
      iteration: i + 1,
      status,
      version_id: "ca_1@v1",
      timings: { duration_ms: 10 },
      assertions: [{ description: "ends", passed: status === "passed", detail: null, context: [] }],
    });
    const report = reportFromCalls([call], gates, { shard: { index: i + 1, count: 2 } });
    await writeFile(path.join(dir, `shard-${i + 1}.json`), reportJson(report));
  }
  return dir;
}
