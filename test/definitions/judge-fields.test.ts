// expect.judge and judge_min_agreement in smoke scenarios: accepted forms, and each error at its file:line.
import { afterEach, describe, expect, it } from "vitest";
import { judgeRubrics, loadAgents } from "../../src/definitions/index.ts";
import { scenarioAgent as agent, type TempProject, tempProject, where } from "./helpers.ts";

let project: TempProject | undefined;
afterEach(async () => {
  await project?.cleanup();
  project = undefined;
});

describe("judged expectations in a smoke scenario", () => {
  it("accepts sentences and {rubric, votes}; votes default to 3", async () => {
    project = await tempProject({
      "agents/desk.yaml": agent([
        "judge_min_agreement: 0.8",
        "expect:",
        "  judge:",
        "    - offers a refund before transferring",
        "    - { rubric: never gives medical advice, votes: 5 }",
      ]),
    });
    const { agents, errors } = await loadAgents(project.agents);
    expect(errors).toEqual([]);
    const scenario = agents[0]?.smoke[0];
    expect(scenario?.judge_min_agreement).toBe(0.8);
    expect(judgeRubrics(scenario?.expect ?? {})).toEqual([
      { rubric: "offers a refund before transferring", votes: 3 },
      { rubric: "never gives medical advice", votes: 5 },
    ]);
  });

  it("refuses even votes, an empty rubric, an unknown key and judge_min_agreement without rubrics, at their lines", async () => {
    project = await tempProject({
      "agents/desk.yaml": agent([
        "expect:", // 8
        "  judge:", // 9
        "    - { rubric: polite, votes: 2 }", // 10
        '    - ""', // 11
        "    - { rubric: kind, weight: 2 }", // 12
      ]),
    });
    const { errors } = await loadAgents(project.agents);
    const found = errors.map((e) => `${where(e)}: ${e.message}`).join("\n");
    expect(found).toMatch(/desk\.yaml:10:\d+: smoke\[0\]\.expect\.judge\[0\].*must be odd/);
    expect(found).toMatch(/desk\.yaml:11:\d+: smoke\[0\]\.expect\.judge\[1\]/);
    expect(found).toMatch(/desk\.yaml:12:\d+: smoke\[0\]\.expect\.judge\[2\]/);
    await project.cleanup();
    project = await tempProject({ "agents/desk.yaml": agent(["judge_min_agreement: 0.9"]) });
    const lonely = await loadAgents(project.agents);
    expect(lonely.errors.map((e) => `${where(e)}: ${e.message}`)).toEqual([
      expect.stringMatching(
        /^desk\.yaml:8:\d+: smoke\[0\]\.judge_min_agreement: the scenario has no judged expectation/,
      ),
    ]);
  });
});
