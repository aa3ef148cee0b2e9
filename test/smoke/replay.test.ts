// `smoke --replay` says what failed: a recording of a passing call, replayed against an expectation
// that no longer holds, prints the same result lines as live smoke (the unmet expectation with the
// nearest transcript lines) and names it in every report.
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { htmlReport, jobSummary, junitXml, terminalSummary } from "../../src/report/index.ts";
import { replaySmoke, runSmoke } from "../../src/smoke/index.ts";
import { type ExampleService, exampleService } from "../helpers/simulator.ts";

const SCENARIO = "greets-and-summarizes";

describe("smoke --replay", () => {
  let service: ExampleService;
  beforeAll(async () => {
    service = await exampleService({ eventDelayMs: 1 });
  });
  afterAll(() => service?.close());

  it("names the expectation that no longer holds, with the nearest transcript lines, on stdout and in every report", async () => {
    const { sim, agents, held: outputs, dir } = service;
    const recordings = path.join(dir, "recordings");
    const live = await runSmoke({
      definitions: agents,
      held: outputs,
      selection: { agents: ["support"], scenarios: [SCENARIO] },
      connection: { baseUrl: sim.url, apiKey: sim.apiKey },
      concurrency: 1,
      recordDir: recordings,
      out: { write: () => true, isTTY: false },
    });
    expect(live.report.scenarios.map((s) => s.verdict)).toEqual(["passed"]);

    // The scenario author edits `expect:`: the agent never said this.
    const edited = agents.map((agent) =>
      agent.key !== "support"
        ? agent
        : {
            ...agent,
            smoke: agent.smoke.map((s) =>
              s.name === SCENARIO ? { ...s, expect: { ...s.expect, says: ["we sell submarines"] } } : s,
            ),
          },
    );
    let printed = "";
    const { report } = await replaySmoke({
      definitions: edited,
      dir: recordings,
      out: { write: (text: string) => (printed += text) },
    });
    const expectation = 'says "we sell submarines"';
    expect(report.scenarios.map((s) => s.verdict)).toEqual(["failed"]);
    // The same result lines as live smoke: the call, then the unmet expectation, then the transcript lines it points at.
    const lines = printed.split("\n");
    const at = lines.findIndex((l) => l.includes(`✗ ${expectation}`));
    expect(lines[at - 1]).toMatch(new RegExp(`^✗ support/${SCENARIO}#1 \\(ca_[^)]+\\) 1 of \\d+ expectations unmet`));
    expect(lines[at]).toContain("no completed agent message matched");
    expect(lines[at + 1]).toMatch(/^ {8}\| agent: .*Maya/);
    // And in every report.
    expect(terminalSummary(report)).toMatch(new RegExp(`support/${SCENARIO}: 0/1 passed → failed`));
    expect(junitXml(report)).toContain(`<failure message="${expectation.replaceAll('"', "&quot;")}"`);
    expect(junitXml(report)).toMatch(/ {4}\| agent: .*Maya/);
    expect(jobSummary(report)).toContain(`✗ says "we sell submarines": no completed agent message matched`);
    expect(jobSummary(report)).toMatch(/> agent: .*Maya/);
    expect(htmlReport(report)).toContain("we sell submarines");
  });
});
