// An interrupted repeated scenario (issue 41): the calls it never placed are "not run" on every
// surface — in the results, never left out as "not needed", and no "decided after 1 of 8" — when
// the stop cut one of its calls short. The simulator on port 0 holds every second conversation
// create for 20 s, so one call of the scenario passes (settling min_pass 1 of 8) while the other is
// still in flight when the run is stopped.
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import type { AgentDefinition } from "../../src/definitions/index.ts";
import { htmlReport, jobSummary, junitXml, terminalSummary } from "../../src/report/index.ts";
import type { Report } from "../../src/results/index.ts";
import { runSmoke } from "../../src/smoke/index.ts";
import { type ExampleService, exampleService, simulatorCall } from "../helpers/simulator.ts";

describe("an interrupted repeated scenario", () => {
  let service: ExampleService;

  beforeAll(async () => {
    service = await exampleService({ eventDelayMs: 2 });
  });
  afterEach(async () => {
    await simulatorCall(service.sim, "DELETE", "/_simulator/faults");
  });
  afterAll(() => service?.close());

  /** The support agent's scenario repeated 8 times with `fields`, run 2 at a time and stopped after the first pass. */
  async function stoppedRun(fields: Record<string, unknown>): Promise<Report> {
    const support = service.agents.find((a) => a.key === "support") as AgentDefinition;
    const scenario = support.smoke[0] as (typeof support.smoke)[number];
    const repeated = { ...support, smoke: [{ ...scenario, iterations: 8, ...fields }] } as AgentDefinition;
    // Every agent defined (the support agent's procedures are the procedural agents'), only it called.
    const definitions = service.agents.map((a) => (a.key === "support" ? repeated : a));
    await simulatorCall(service.sim, "POST", "/_simulator/faults", {
      route: "POST /conversations",
      rate: 0.5,
      latency_ms: 20_000,
    });
    const stop = new AbortController();
    const { report } = await runSmoke({
      definitions,
      held: service.held,
      selection: { agents: ["support"] },
      connection: { baseUrl: service.sim.url, apiKey: service.sim.apiKey },
      concurrency: 2,
      out: { write: () => true, isTTY: false },
      signal: stop.signal,
      onReport: (partial) => {
        if (partial.results.some((r) => r.outcome.kind === "passed")) stop.abort();
      },
    });
    return report;
  }

  it("min_pass 1 of 8: one passed, one cut short, the six never placed are not run (not 'not needed', no 'decided after')", async () => {
    const report = await stoppedRun({ min_pass: 1 });
    expect(report.interrupted).toBe(true);
    expect(report.results.map((r) => r.outcome.kind).sort()).toEqual([
      "interrupted",
      ...Array(6).fill("not_run"),
      "passed",
    ]);
    expect(report.results.filter((r) => r.outcome.kind === "not_run").map((r) => r.error)).toEqual(
      Array(6).fill("not run: the smoke run was stopped first"),
    );
    const [summary] = report.scenarios;
    expect(summary).toMatchObject({ iterations: 8, planned_iterations: 8, decided_after: null, calls_saved: 0 });
    expect(report.summary.calls_not_run).toBe(6);
    expect(report.summary.calls_saved ?? 0).toBe(0);
    for (const [surface, text] of [
      ["terminal", terminalSummary(report)],
      ["job summary", jobSummary(report)],
      ["junit", junitXml(report)],
      ["html", htmlReport(report)],
    ]) {
      expect(text, surface).not.toMatch(/not needed|decided after/);
    }
    // The scenario met min_pass 1 (its verdict stands); JUnit lists each call, the six as not run.
    expect(junitXml(report).match(/iteration \d: not run/g)).toHaveLength(6);
  });

  it("a sequential test (pass_rate) stopped mid-round: its unplaced calls are not run, nothing 'decided'", async () => {
    const report = await stoppedRun({ pass_rate: 0.5, confidence: 0.8 });
    expect(report.interrupted).toBe(true);
    const kinds = report.results.map((r) => r.outcome.kind);
    expect(kinds.filter((k) => k === "passed")).toHaveLength(1);
    expect(kinds.filter((k) => k === "interrupted")).toHaveLength(1);
    expect(report.results.length).toBe(report.scenarios[0]?.planned_iterations);
    expect(kinds.filter((k) => k === "not_run").length).toBe(kinds.length - 2);
    expect(report.scenarios[0]).toMatchObject({ decided_after: null, calls_saved: 0 });
    expect(terminalSummary(report)).not.toMatch(/not needed|decided after/);
  });

  it("a scenario the stop cut short is counted interrupted, not 'could not complete', on every surface", async () => {
    // All 8 needed (min_pass 8): one passed, one cut short, six never placed.
    const report = await stoppedRun({});
    expect(report.interrupted).toBe(true);
    expect(report.scenarios[0]?.verdict).toBe("error");
    expect(report.summary).toMatchObject({ errors: 0, interrupted: 1 });
    const last = terminalSummary(report).trim().split("\n").at(-1);
    expect(last).toMatch(/^0 passed, 0 failed, 1 interrupted/);
    expect(terminalSummary(report)).toMatch(
      /support\/[^:]+: 1\/8 passed.*, interrupted: the run's stop cut its calls short → interrupted/,
    );
    expect(jobSummary(report)).toContain("1 scenario: 0 passed, 0 failed, 1 interrupted");
    expect(jobSummary(report)).toContain("- ■ interrupted: **support**");
    expect(htmlReport(report)).toMatch(/data-summary="interrupted"><span class="n">1</);
    expect(junitXml(report)).toMatch(/<testsuites [^>]*errors="1"/);
  });

  it("a stop once every call had ended interrupted nothing: the run is complete and ends by its results", async () => {
    const support = service.agents.find((a) => a.key === "support") as AgentDefinition;
    const definitions = service.agents;
    const planned = support.smoke.reduce((n, s) => n + s.iterations, 0);
    const stop = new AbortController();
    const { report, exitCode } = await runSmoke({
      definitions,
      held: service.held,
      selection: { agents: ["support"] },
      connection: { baseUrl: service.sim.url, apiKey: service.sim.apiKey },
      concurrency: 2,
      out: { write: () => true, isTTY: false },
      signal: stop.signal,
      // The Ctrl+C comes in the last moment: after the last call ended, before the run's end.
      onReport: (partial) => {
        if (partial.results.length === planned) stop.abort();
      },
    });
    expect(stop.signal.aborted).toBe(true);
    expect(report.results.every((r) => r.outcome.kind === "passed")).toBe(true);
    // One truth: the reports say complete, and the exit code is the results' (not 130).
    expect(report.interrupted).toBe(false);
    expect(exitCode).toBe(0);
    expect(terminalSummary(report)).not.toContain("interrupted");
  });
});
