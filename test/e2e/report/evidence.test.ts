// `agent-iac report merge` refuses what is not evidence (issue 41), in-process: a report with no
// scenario, a report of a future version, calls whose verdicts do not follow from their recorded
// expectations (exit 2 naming the file), and a missing shard, whose calls are failed iterations on
// every surface — never ✅, never "not run".
import { mkdtemp, readFile, rm, truncate, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { reportJson } from "../../../src/report/index.ts";
import { type CallResult, callResultSchema, reportSchema } from "../../../src/results/index.ts";
import { scenarioKey } from "../../../src/smoke/gates.ts";
import { reportFromCalls, type ScenarioGate } from "../../../src/smoke/reports.ts";
import { runInProcess } from "../../helpers/cli.ts";

const call = (iteration: number, passed: boolean): CallResult =>
  callResultSchema.parse({
    agent: "support",
    scenario: "greets",
    iteration,
    status: passed ? "passed" : "failed",
    version_id: "ca_1@v1",
    timings: { duration_ms: 10 },
    assertions: [{ description: "ends", passed }],
    outcome: { kind: passed ? "passed" : "failed" },
  });

const gates = (plannedIterations: number, minPass: number) =>
  new Map<string, ScenarioGate>([
    [
      scenarioKey("support", "greets", "ca_1@v1"),
      { agent: "support", scenario: "greets", versionId: "ca_1@v1", plannedIterations, minPass, bounds: {} },
    ],
  ]);

describe("report merge refuses what is not evidence", () => {
  let dir: string;
  const write = async (name: string, value: unknown) => {
    const file = path.join(dir, name);
    await writeFile(file, typeof value === "string" ? value : JSON.stringify(value));
    return file;
  };
  const shard = (name: string, index: number, count: number, calls: CallResult[], g = gates(6, 6)) =>
    write(name, reportJson(reportFromCalls(calls, g, { shard: { index, count } })));

  beforeAll(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), "report-evidence-"));
  });
  afterAll(() => rm(dir, { recursive: true, force: true }));

  it("a report with no scenario: exit 2 naming the file, and no green summary", async () => {
    const empty = await write("empty.json", { format: "agent-iac-report" });
    const run = await runInProcess(["report", "merge", empty, "--junit", path.join(dir, "empty.xml")]);
    expect(run.code).toBe(2);
    expect(run.stderr).toContain(`${empty}: not evidence a merge can count: it has no scenario`);
    expect(run.stdout).not.toContain("0 passed, 0 failed");
  });

  it("a report of a future version: exit 2 naming the file and the version", async () => {
    const good = JSON.parse(await readFile(await shard("v.json", 1, 1, [call(1, true)], gates(1, 1)), "utf8"));
    const future = await write("future.json", { ...good, version: 99 });
    const run = await runInProcess(["report", "merge", future]);
    expect(run.code).toBe(2);
    expect(run.stderr).toContain(`${future}: a report of version 99, newer than this agent-iac reads`);
  });

  it("a call edited to passed over its failed expectation: exit 2 naming the file and the call", async () => {
    const real = JSON.parse(await readFile(await shard("real.json", 1, 1, [call(1, false)], gates(1, 1)), "utf8"));
    real.results[0].status = "passed";
    real.results[0].outcome.kind = "passed";
    const forged = await write("forged.json", real);
    const run = await runInProcess(["report", "merge", forged]);
    expect(run.code).toBe(2);
    expect(run.stderr).toContain(
      `${forged}: not evidence a merge can count: support/greets#1 is "passed" although 1 of its expectations failed`,
    );
    real.results[0].outcome.kind = "failed";
    const mixed = await write("mixed.json", real);
    expect((await runInProcess(["report", "merge", mixed])).stderr).toContain(
      'says status "passed" but outcome "failed"',
    );
  });

  it("a shard whose stated verdict or summary its own calls do not give: exit 2 naming the file, never merged green", async () => {
    // Two shards of a scenario needing 4 of 4: shard 2's two calls failed; its report is edited to a pass.
    const one = await shard("edit-1.json", 1, 2, [call(1, true), call(2, true)], gates(4, 4));
    const real = JSON.parse(
      await readFile(await shard("edit-2.json", 2, 2, [call(3, false), call(4, false)], gates(4, 4)), "utf8"),
    );
    const edited = structuredClone(real);
    edited.scenarios[0].verdict = "passed";
    edited.summary = { ...edited.summary, passed: 1, failed: 0 };
    const verdict = await write("edit-2-verdict.json", edited);
    const run = await runInProcess(["report", "merge", one, verdict]);
    expect(run.code).toBe(2);
    expect(run.stderr).toContain(`${verdict}: support/greets is stated "passed" but its own calls give "failed"`);
    expect(run.stdout).not.toContain("1 passed, 0 failed");
    // The summary alone edited (the verdict left as the calls give it).
    const summary = structuredClone(real);
    summary.summary = { ...summary.summary, calls_passed: 2, calls_failed: 0 };
    const counted = await write("edit-2-summary.json", summary);
    const bySummary = await runInProcess(["report", "merge", one, counted]);
    expect(bySummary.code).toBe(2);
    expect(bySummary.stderr).toContain(
      `${counted}: its summary states calls_passed 2, its own scenarios and calls give 0`,
    );
    // Unedited, the two shards merge to the whole run's failure.
    const whole = await runInProcess(["report", "merge", one, path.join(dir, "edit-2.json")]);
    expect(whole.code, whole.stderr).toBe(1);
  });

  it("calls beyond the iterations a shard plans: exit 2 before anything is counted", async () => {
    const real = JSON.parse(await readFile(await shard("many.json", 1, 1, [call(1, true)], gates(1, 1)), "utf8"));
    // 2,000 passing calls of a scenario planned once (each with its own iteration number).
    real.results = Array.from({ length: 2000 }, (_, i) => ({ ...real.results[0], iteration: i + 1 }));
    real.summary = { ...real.summary, calls: 2000, calls_passed: 2000 };
    const many = await write("many-forged.json", real);
    const run = await runInProcess(["report", "merge", many]);
    expect(run.code).toBe(2);
    expect(run.stderr).toContain(`${many}: support/greets#2 is beyond the 1 iteration(s) the report plans for it`);
  });

  it("a shard report larger than 32 MB: exit 2 naming the file, refused before it is read", async () => {
    const big = path.join(dir, "big.json");
    await writeFile(big, "");
    // A sparse file: its size is what counts, its content is never parsed.
    await truncate(big, 32 * 1024 * 1024 + 1);
    const run = await runInProcess(["report", "merge", big]);
    expect(run.code).toBe(2);
    expect(run.stderr).toContain(`${big}: it is larger than ${32 * 1024 * 1024} bytes`);
    expect(run.stderr).not.toContain("not JSON");
  });

  it("a missing shard's calls are failed iterations on every surface, and the merge exits 2 naming the shard", async () => {
    // 6 planned iterations, min_pass 6, over 3 shards; shard 3 (iterations 5 and 6) never uploaded.
    const a = await shard("s1.json", 1, 3, [call(1, true), call(2, true)]);
    const b = await shard("s2.json", 2, 3, [call(3, true), call(4, true)]);
    const files = { json: path.join(dir, "m.json"), junit: path.join(dir, "m.xml"), html: path.join(dir, "m.html") };
    const run = await runInProcess([
      "report",
      "merge",
      a,
      b,
      "--json",
      files.json,
      "--junit",
      files.junit,
      "--html",
      files.html,
    ]);
    expect(run.code).toBe(2);
    expect(run.stderr).toContain("no report of shard(s) 3/3");
    const merged = reportSchema.parse(JSON.parse(await readFile(files.json, "utf8")));
    expect(merged.scenarios.map((s) => `${s.verdict} ${s.passes}/${s.iterations}`)).toEqual(["failed 4/6"]);
    const lost = merged.results.filter((r) => r.iteration > 4);
    expect(lost.map((r) => r.outcome.kind)).toEqual(["failed", "failed"]);
    expect(merged.summary).toMatchObject({ passed: 0, failed: 1 });
    expect(run.stdout).toMatch(/0 passed, 1 failed/);
    expect(await readFile(files.junit, "utf8")).toMatch(/failures="1"/);
    const html = await readFile(files.html, "utf8");
    expect(html).toContain("no report of shard(s) 3/3");
    expect(html).not.toContain("not needed");
  });
});
