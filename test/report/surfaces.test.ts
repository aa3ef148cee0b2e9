// One report, five surfaces: the terminal summary, the job summary, the HTML top, JUnit and the
// JSON summary all count the same scenarios (calls second), and the verdict mark follows the exit
// code — a run that exits 0 shows no failure mark anywhere, its flaky scenario shows as flaky.
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { emitReport, htmlReport, jobSummary, junitXml, reportJson, terminalSummary } from "../../src/report/index.ts";
import { type CallResult, callResultSchema, type Report, readReport } from "../../src/results/index.ts";
import { scenarioKey } from "../../src/smoke/gates.ts";
import { reportFromCalls, type ScenarioGate } from "../../src/smoke/reports.ts";

const VERSION = "ca_s@v3";

function call(scenario: string, iteration: number, passed: boolean, responseMs: number): CallResult {
  return callResultSchema.parse({
    agent: "support",
    scenario,
    iteration,
    status: passed ? "passed" : "failed",
    version_id: VERSION,
    conversation_id: `conv_${scenario}_${iteration}`,
    assertions: [
      {
        description: 'says "this is Maya"',
        passed,
        ...(passed ? {} : { detail: "no completed agent message matched", context: ["agent: hello"] }),
      },
    ],
    transcript: ["agent: hello"],
    latency: { first_response_ms: 200, response_ms: [responseMs], tool_ms: [] },
    timings: { duration_ms: 1000 },
  });
}

function gate(scenario: string, minPass: number, bounds: ScenarioGate["bounds"] = {}): [string, ScenarioGate] {
  return [
    scenarioKey("support", scenario, VERSION),
    { agent: "support", scenario, versionId: VERSION, plannedIterations: 3, minPass, bounds },
  ];
}

/** greets passes, flaky passes 2 of 3 (min_pass 2); slow passes 3/3 but its p95 is 1,240 ms over a 1,000 ms bound. */
function runOf(withSlow: boolean): Report {
  const calls = [
    ...[1, 2, 3].map((i) => call("greets", i, true, 300)),
    ...[1, 2, 3].map((i) => call("flaky", i, i !== 2, 300)),
    ...(withSlow ? [1, 2, 3].map((i) => call("slow", i, true, i === 3 ? 1240 : 900)) : []),
  ];
  const gates = new Map([
    gate("greets", 3),
    gate("flaky", 2),
    ...(withSlow ? [gate("slow", 3, { response_p95_ms: 1000 })] : []),
  ]);
  return reportFromCalls(calls, gates, { stack: "dev" });
}

/** The counts each surface shows, read back from its own text. */
function surfaces(report: Report) {
  const terminal = terminalSummary(report);
  const [, passed, failed, flaky] =
    /^(\d+) passed, (\d+) failed(?:, (\d+) flaky)?$/m.exec(terminal.trim().split("\n").at(-1) ?? "") ?? [];
  const summary = jobSummary(report);
  const row =
    summary
      .split("\n")[4]
      ?.split("|")
      .map((c) => c.trim()) ?? [];
  const html = htmlReport(report);
  const tile = (name: string) => Number(new RegExp(`data-summary="${name}"><span class="n">(\\d+)<`).exec(html)?.[1]);
  const junit = junitXml(report);
  const suites = /<testsuites [^>]*tests="(\d+)" failures="(\d+)" errors="(\d+)"/.exec(junit) ?? [];
  const json = JSON.parse(reportJson(report)).summary;
  return {
    terminal: { passed: Number(passed), failed: Number(failed), flaky: Number(flaky ?? 0) },
    jobSummary: { scenarios: Number(row[1]), passed: Number(row[2]), flaky: Number(row[3]), failed: Number(row[4]) },
    html: { passed: tile("passed"), failed: tile("failed"), flaky: tile("flaky") },
    junit: {
      scenarios: Number(suites[1]),
      passed: Number(suites[1]) - Number(suites[2]) - Number(suites[3]),
      failed: Number(suites[2]),
      flaky: (junit.match(/<testcase [^>]*>\s*<properties>.*?<\/properties>\s*<flakyFailure/gs) ?? []).length,
    },
    json: { scenarios: json.scenarios, passed: json.passed, failed: json.failed, flaky: json.flaky, calls: json.calls },
    texts: { terminal, summary, html, junit },
  };
}

describe("one report on five surfaces", () => {
  it("counts scenarios the same everywhere, calls second, and says why a 3/3 scenario failed", async () => {
    const report = runOf(true);
    const s = surfaces(report);
    const expected = { passed: 2, failed: 1, flaky: 1 };
    expect(s.terminal).toEqual(expected);
    expect(s.jobSummary).toEqual({ scenarios: 3, ...expected });
    expect(s.html).toEqual(expected);
    expect(s.junit).toEqual({ scenarios: 3, ...expected });
    expect(s.json).toEqual({ scenarios: 3, ...expected, calls: 9 });
    // Calls are the second figure, labelled as such.
    expect(s.texts.terminal).toContain("calls: 8 of 9 passed, 1 failed, 0 could not complete");
    expect(s.texts.summary).toContain("| 8 / 1 / 0 |");
    expect(s.texts.html).toContain('data-summary="call_counts">8 / 1 / 0<');
    // Why the verdict differs from the passes, on the terminal, the job summary and JUnit.
    expect(s.texts.terminal).toContain(
      "support/slow: 3/3 passed, latency response p95 1,240 ms over 1,000 ms → failed",
    );
    expect(s.texts.summary).toContain("3 of 3 iterations passed, latency response p95 1,240 ms over 1,000 ms");
    expect(s.texts.junit).toContain("✗ latency response p95 1,240 ms over 1,000 ms");
    expect(s.texts.html).toContain("<dd data-why>latency response p95 1,240 ms over 1,000 ms</dd>");
    // It fails the run: the mark is a failure mark everywhere.
    expect(await emitReport(report, { within: os.tmpdir(), env: {} })).toBe(1);
    expect(s.texts.summary.startsWith("### ❌ agent-iac smoke on dev: 3 scenarios: 2 passed (1 flaky), 1 failed")).toBe(
      true,
    );
    expect(s.texts.html).toMatch(/<p class="headline" data-exit-code="1" data-mark="❌">/);
  });

  it("a run that exits 0 with a flaky scenario shows no failure mark on any surface", async () => {
    const report = runOf(false);
    expect(await emitReport(report, { within: os.tmpdir(), env: {} })).toBe(0);
    const s = surfaces(report);
    expect(s.terminal).toEqual({ passed: 2, failed: 0, flaky: 1 });
    expect(s.json).toMatchObject({ scenarios: 2, passed: 2, failed: 0, flaky: 1 });
    expect(s.junit).toEqual({ scenarios: 2, passed: 2, failed: 0, flaky: 1 });
    expect(s.texts.summary).not.toMatch(/❌|✗/);
    expect(s.texts.summary.startsWith("### ⚠️ agent-iac smoke on dev: 2 scenarios: 2 passed (1 flaky), 0 failed")).toBe(
      true,
    );
    const top = s.texts.html.slice(0, s.texts.html.indexOf('id="scenarios-title"'));
    expect(top).not.toMatch(/❌|✗/);
    expect(top).toMatch(/<p class="headline" data-exit-code="0" data-mark="⚠️">/);
    expect(s.texts.junit).not.toMatch(/<failure|<error/);
    expect(s.texts.terminal).toContain("support/flaky: 2/3 passed (67 %, 95 % CI 21–94 %, min_pass 2) → flaky");
  });

  it("reads a version 2 report (its summary counted calls) with the scenario counts of today", async () => {
    const dir = await mkdtemp(path.join(os.tmpdir(), "report-v2-"));
    try {
      const current = JSON.parse(reportJson(runOf(true)));
      const file = path.join(dir, "old.json");
      // As version 2 wrote it: passed/failed/errors were calls.
      const summary = { scenarios: 3, calls: 9, passed: 8, failed: 1, flaky: 1, errors: 0, regressions: 0 };
      await writeFile(file, JSON.stringify({ ...current, version: 2, summary }));
      const read = await readReport(file, dir);
      expect(read.summary).toMatchObject({ scenarios: 3, passed: 2, failed: 1, flaky: 1, calls: 9, calls_passed: 8 });
      expect(surfaces(read).junit).toEqual({ scenarios: 3, passed: 2, failed: 1, flaky: 1 });
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it("reads a version 3 report (no outcomes): each call's outcome from its status, its message never read", async () => {
    const dir = await mkdtemp(path.join(os.tmpdir(), "report-v3-"));
    try {
      const current = JSON.parse(reportJson(runOf(false)));
      // As version 3 wrote it: no `outcome`; an interrupted call was an "error" whose message said so.
      const results = current.results.map(({ outcome: _, ...call }: Record<string, unknown>, i: number) =>
        i === 5
          ? { ...call, status: "error", error: "interrupted: the smoke run was stopped before this call finished" }
          : call,
      );
      const summary = { scenarios: 2, passed: 1, failed: 0, errors: 1, calls: 6, calls_passed: 5, calls_errors: 1 };
      const file = path.join(dir, "v3.json");
      await writeFile(file, JSON.stringify({ ...current, version: 3, summary, results, interrupted: true }));
      const read = await readReport(file, dir);
      expect(read.version).toBe(3);
      expect(read.results.map((c) => c.outcome.kind)).toEqual([
        "passed",
        "passed",
        "passed",
        "passed",
        "failed",
        "error",
      ]);
      expect(read.results[5]?.outcome).toEqual({
        kind: "error",
        stage: null,
        request: null,
        http_status: null,
        code: null,
      });
      // Recounted: the fields version 3 did not have are there.
      expect(read.summary).toMatchObject({ calls: 6, calls_passed: 4, calls_failed: 1, calls_errors: 1 });
      expect(read.summary).toMatchObject({ calls_not_run: 0, calls_interrupted: 0 });
      // Its interrupted flag still says the run was stopped; every surface renders it.
      expect(await emitReport(read, { within: os.tmpdir(), env: {} })).toBe(130);
      expect(htmlReport(read)).toContain('data-outcome="error"');
      expect(terminalSummary(read)).toContain("calls: 4 of 6 passed, 1 failed, 1 could not complete");
      // A version 3 call the schema allowed as not_run reads as not run.
      expect(callResultSchema.parse({ ...results[0], status: "not_run" }).outcome.kind).toBe("not_run");
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
