// The gate fields of smoke scenarios: min_pass / pass_rate and expect.latency, each error at its file:line.
import { afterEach, describe, expect, it } from "vitest";
import { loadAgents } from "../../src/definitions/index.ts";
import { type TempProject, tempProject, where } from "./helpers.ts";

let project: TempProject | undefined;
afterEach(async () => {
  await project?.cleanup();
  project = undefined;
});

const agent = (scenario: string[]) =>
  [
    "kind: conversational",
    "name: Desk",
    "description: d",
    "config: {}",
    "smoke:",
    "  - name: s",
    '    channel: { callee_no: "+15550100100" }',
    ...scenario.map((line) => `    ${line}`),
  ].join("\n");

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
    const { agents, errors } = await loadAgents(project.agents);
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
    const { errors } = await loadAgents(project.agents);
    const found = errors.map((e) => `${where(e)}: ${e.message}`).join("\n");
    expect(found).toMatch(/desk\.yaml:10:\d+: smoke\[0\]\.pass_rate: .*(1|less)/);
    expect(found).toMatch(/desk\.yaml:12:\d+: smoke\[0\]\.expect\.latency.*p99_ms/);
  });

  it("names min_pass over iterations and both thresholds given", async () => {
    project = await tempProject({ "agents/desk.yaml": agent(["iterations: 5", "min_pass: 6"]) });
    const over = await loadAgents(project.agents);
    expect(over.errors.map((e) => `${where(e)}: ${e.message}`)).toEqual([
      expect.stringMatching(
        /^desk\.yaml:9:\d+: smoke\[0\]\.min_pass: min_pass 6 is more than the scenario's iterations \(5\)/,
      ),
    ]);
    await project.cleanup();
    project = await tempProject({ "agents/desk.yaml": agent(["iterations: 5", "min_pass: 4", "pass_rate: 0.8"]) });
    const both = await loadAgents(project.agents);
    expect(both.errors.map((e) => `${where(e)}: ${e.message}`)).toEqual([
      expect.stringMatching(/^desk\.yaml:10:\d+: smoke\[0\]\.pass_rate: give min_pass or pass_rate, not both/),
    ]);
  });
});
