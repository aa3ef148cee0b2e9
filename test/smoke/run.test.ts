// The smoke runner: reports hold every planned call whatever stopped the run, and a waiting call
// shows progress (a status line on a terminal, a line every interval in CI).
import { readFile } from "node:fs/promises";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { AgentDefinition } from "../../src/definitions/index.ts";
import type { HeldAgent } from "../../src/provider/index.ts";
import { terminalSummary, writeReportFiles } from "../../src/report/index.ts";
import { finishedCalls, reportSchema } from "../../src/results/index.ts";
import type { PlannedCall, Progress } from "../../src/smoke/call.ts";
import { runSmoke } from "../../src/smoke/index.ts";
import { progressPrinter, StatusLine } from "../../src/smoke/run.ts";
import { type ExampleService, exampleService } from "../helpers/simulator.ts";

describe("runSmoke", () => {
  let sim: ExampleService["sim"];
  let agents: AgentDefinition[];
  let outputs: Record<string, HeldAgent>;
  let dir: string;
  let service: ExampleService;

  beforeAll(async () => {
    // Slow events: each call takes seconds, so the run can be interrupted with calls in flight.
    service = await exampleService({ eventDelayMs: 400 });
    ({ sim, agents, held: outputs, dir } = service);
  });
  afterAll(() => service?.close());

  it("writes JUnit and JSON with every planned call when the run is interrupted", async () => {
    const junitFile = path.join(dir, "smoke.xml");
    const jsonFile = path.join(dir, "smoke.json");
    let printed = "";
    const {
      results,
      exitCode,
      report: run,
    } = await runSmoke({
      definitions: agents,
      held: outputs,
      selection: {},
      connection: { baseUrl: sim.url, apiKey: sim.apiKey },
      concurrency: 1,
      onReport: (report) => writeReportFiles(report, { junit: junitFile, json: jsonFile }, process.cwd()),
      out: { write: (text: string) => (printed += text), isTTY: false },
      signal: AbortSignal.timeout(500),
    });
    // Stopped by the signal (not by each call's own timeout): the report says so and its exit code is 130 (the calls' errors are in it).
    expect(exitCode).toBe(130);
    const planned = agents.reduce((n, a) => n + a.smoke.length, 0);
    expect(results).toHaveLength(planned);
    // The call in flight is interrupted at the stage it was in; the others were never placed.
    expect(results[0]?.outcome).toMatchObject({ kind: "interrupted" });
    expect(results[0]?.outcome.stage).toBeDefined();
    expect(results[0]?.error).toBe("interrupted: the smoke run was stopped before this call finished");
    expect(results.slice(1).map((r) => [r.status, r.outcome])).toEqual(
      Array(planned - 1).fill(["not_run", { kind: "not_run", code: "run_stopped" }]),
    );
    expect(results.slice(1).map((r) => r.error)).toEqual(
      Array(planned - 1).fill("not run: the smoke run was stopped first"),
    );
    expect(finishedCalls(run.results)).toBe(0);
    const report = reportSchema.parse(JSON.parse(await readFile(jsonFile, "utf8")));
    expect(report.results.map((r) => [r.status, r.outcome.kind])).toEqual([
      ["error", "interrupted"],
      ...Array(planned - 1).fill(["not_run", "not_run"]),
    ]);
    // The interrupted call's scenario was cut short (interrupted, not "could not complete"); the others' did not run.
    expect(report.summary).toMatchObject({
      errors: 0,
      interrupted: 1,
      not_run: planned - 1,
      passed: 0,
      calls: 1,
      calls_interrupted: 1,
      calls_not_run: planned - 1,
    });
    const junit = await readFile(junitFile, "utf8");
    expect(junit.match(/<testcase /g)).toHaveLength(planned);
    expect(junit.match(/<skipped message="not run: the smoke run was stopped first"\/>/g)).toHaveLength(planned - 1);
    // Each call's line as it ended; the closing count is the report's (src/report's terminal summary).
    expect(printed).toContain(`! ${results[0]?.agent}/${results[0]?.scenario}#1`);
    expect(printed).toContain(`○ ${results[1]?.agent}/${results[1]?.scenario}#1`);
    expect(run.interrupted).toBe(true);
    expect(terminalSummary(run)).toContain(`0 passed, 0 failed, 1 interrupted, ${planned - 1} not run`);
    expect(terminalSummary(run)).toContain(
      `calls: 0 of ${planned} passed, 0 failed, 0 could not complete, 1 interrupted, ${planned - 1} not run`,
    );
  });
});

describe("progress", () => {
  const progress = (call: PlannedCall, remainingMs: number): Progress => ({
    call,
    waitingFor: "procedures call-summary → completed",
    lastSeen: "call-summary pending",
    remainingMs,
  });
  const call = { agent: "support", scenario: { name: "greets" }, iteration: 1 } as PlannedCall;

  it("prints a line per interval in CI, saying what the call waits for, what it saw and the time left", async () => {
    let printed = "";
    const print = progressPrinter(new StatusLine({ write: (text: string) => (printed += text) }), 100);
    print(progress(call, 9000));
    expect(printed).toBe("");
    await new Promise((resolve) => setTimeout(resolve, 120));
    print(progress(call, 8800));
    print(progress(call, 8790));
    expect(printed).toBe(
      "… support/greets#1 waits for procedures call-summary → completed; last seen: call-summary pending; 9 s left\n",
    );
  });

  it("redraws one status line on a terminal and clears it before other output", () => {
    let printed = "";
    const status = new StatusLine({ write: (text: string) => (printed += text), isTTY: true, columns: 60 });
    const print = progressPrinter(status);
    print(progress(call, 5000));
    print(progress(call, 4000));
    status.output.write("✓ done\n");
    expect(printed.split("\r\x1b[2K")).toEqual([
      "",
      "support/greets#1 waits for procedures call-summary → compl…",
      "support/greets#1 waits for procedures call-summary → compl…",
      "✓ done\n",
    ]);
  });
});
