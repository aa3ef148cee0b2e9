// The gate fields of smoke scenarios: min_pass / pass_rate and expect.latency, each error at its file:line.
import { afterEach, describe, expect, it } from "vitest";
import { loadAgents } from "../../src/definitions/index.ts";
import { scenarioAgent as agent, type TempProject, tempProject, where } from "./helpers.ts";

let project: TempProject | undefined;
afterEach(async () => {
  await project?.cleanup();
  project = undefined;
});

describe("gate fields of a smoke scenario", () => {
  it("accepts min_pass, pass_rate and latency bounds", async () => {
    project = await tempProject({
      "agents/desk.yaml": agent([
        "iterations: 10",
        "min_pass: 8",
        "expect:",
        "  latency: { response_p95_ms: 900, tool_ms: 300 }",
      ]),
    });
    const { agents, errors } = await loadAgents(project.agents, { from: process.cwd() });
    expect(errors).toEqual([]);
    expect(agents[0]?.smoke[0]).toMatchObject({
      iterations: 10,
      min_pass: 8,
      expect: { latency: { response_p95_ms: 900 } },
    });
  });

  it("refuses min_pass over iterations, both thresholds, a rate over 1 and an unknown latency name, at their lines", async () => {
    project = await tempProject({
      "agents/desk.yaml": agent([
        "iterations: 5", // 8
        "min_pass: 6", // 9
        "pass_rate: 1.5", // 10
        "expect:", // 11
        "  latency: { p99_ms: 10 }", // 12
      ]),
    });
    const { errors } = await loadAgents(project.agents, { from: process.cwd() });
    const found = errors.map((e) => `${where(e)}: ${e.message}`).join("\n");
    expect(found).toMatch(/desk\.yaml:10:\d+: smoke\[0\]\.pass_rate: .*(1|less)/);
    expect(found).toMatch(/desk\.yaml:12:\d+: smoke\[0\]\.expect\.latency.*p99_ms/);
  });

  it("names min_pass over iterations and both thresholds given", async () => {
    project = await tempProject({ "agents/desk.yaml": agent(["iterations: 5", "min_pass: 6"]) });
    const over = await loadAgents(project.agents, { from: process.cwd() });
    expect(over.errors.map((e) => `${where(e)}: ${e.message}`)).toEqual([
      expect.stringMatching(
        /^desk\.yaml:9:\d+: smoke\[0\]\.min_pass: min_pass 6 is more than the scenario's iterations \(5\)/,
      ),
    ]);
    await project.cleanup();
    project = await tempProject({ "agents/desk.yaml": agent(["iterations: 5", "min_pass: 4", "pass_rate: 0.8"]) });
    const both = await loadAgents(project.agents, { from: process.cwd() });
    expect(both.errors.map((e) => `${where(e)}: ${e.message}`)).toEqual([
      expect.stringMatching(/^desk\.yaml:10:\d+: smoke\[0\]\.pass_rate: give min_pass or pass_rate, not both/),
    ]);
  });

  it("accepts a sequential test (pass_rate, confidence, max_iterations, margin) and plans its cap", async () => {
    project = await tempProject({
      "agents/desk.yaml": agent([
        "pass_rate: 0.9",
        "confidence: 0.95",
        "max_iterations: 40",
        "pass_k: { k: 4, min: 0.8 }",
      ]),
    });
    const { agents, errors } = await loadAgents(project.agents, { from: process.cwd() });
    expect(errors).toEqual([]);
    expect(agents[0]?.smoke[0]).toMatchObject({ iterations: 40, pass_rate: 0.9, confidence: 0.95, max_iterations: 40 });
  });

  it.each([
    [["confidence: 0.95"], 8, "confidence", /confidence needs pass_rate/],
    [["pass_rate: 0.9", "max_iterations: 40"], 9, "max_iterations", /belongs to a sequential test/],
    [["pass_rate: 0.9", "confidence: 1.2"], 9, "confidence", /1/],
    [
      ["pass_rate: 0.9", "confidence: 0.95", "max_iterations: 20"],
      10,
      "max_iterations",
      /needs at least 27 calls to pass .* more than max_iterations 20/,
    ],
    [["pass_rate: 0.9", "confidence: 0.95", "margin: 0.2"], 10, "margin", /± margin 0\.2 must stay between 0 and 1/],
    [["iterations: 10", "pass_rate: 0.9", "confidence: 0.95"], 8, "iterations", /give max_iterations, not iterations/],
    [
      ["iterations: 3", "pass_k: { k: 4, min: 0.8 }"],
      9,
      "pass_k",
      /pass_k\.k 4 is more than the scenario's iterations \(3\)/,
    ],
  ])("refuses %j at line %i (%s)", async (lines, line, field, message) => {
    project = await tempProject({ "agents/desk.yaml": agent(lines) });
    const { errors } = await loadAgents(project.agents, { from: process.cwd() });
    const found = errors.map((e) => `${where(e)}: ${e.message}`);
    expect(found).toEqual([expect.stringMatching(new RegExp(`^desk\\.yaml:${line}:\\d+: smoke\\[0\\]\\.${field}`))]);
    expect(found[0]).toMatch(message);
  });
});
