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
    const { agents, errors } = await loadAgents(project.agents, { from: process.cwd() });
    expect(errors).toEqual([]);
    const scenario = agents[0]?.smoke[0];
    expect(scenario?.judge_min_agreement).toBe(0.8);
    expect(judgeRubrics(scenario?.expect ?? {})).toEqual([
      { rubric: "offers a refund before transferring", votes: 3, auto: false },
      { rubric: "never gives medical advice", votes: 5, auto: false },
    ]);
  });

  it("adaptive votes: votes: auto counts its cap (default 9, or max_votes); max_votes needs auto; judge_min_kappa is read", async () => {
    project = await tempProject({
      "agents/desk.yaml": agent([
        "judge_min_kappa: 0.4",
        "expect:",
        "  judge:",
        "    - { rubric: offers a refund, votes: auto }",
        "    - { rubric: stays polite, votes: auto, max_votes: 5 }",
      ]),
    });
    const { agents, errors } = await loadAgents(project.agents, { from: process.cwd() });
    expect(errors).toEqual([]);
    expect(agents[0]?.smoke[0]?.judge_min_kappa).toBe(0.4);
    expect(judgeRubrics(agents[0]?.smoke[0]?.expect ?? {})).toEqual([
      { rubric: "offers a refund", votes: 9, auto: true },
      { rubric: "stays polite", votes: 5, auto: true },
    ]);
    await project.cleanup();
    project = await tempProject({
      "agents/desk.yaml": agent([
        "expect:", // 8
        "  judge:", // 9
        "    - { rubric: polite, votes: 3, max_votes: 5 }", // 10
        "    - { rubric: kind, votes: auto, max_votes: 4 }", // 11
      ]),
    });
    const found = (await loadAgents(project.agents, { from: process.cwd() })).errors
      .map((e) => `${where(e)}: ${e.message}`)
      .join("\n");
    expect(found).toMatch(/desk\.yaml:10:\d+: smoke\[0\]\.expect\.judge\[0\].*max_votes belongs to adaptive votes/);
    expect(found).toMatch(/desk\.yaml:11:\d+: smoke\[0\]\.expect\.judge\[1\].*must be odd/);
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
    const { errors } = await loadAgents(project.agents, { from: process.cwd() });
    const found = errors.map((e) => `${where(e)}: ${e.message}`).join("\n");
    expect(found).toMatch(/desk\.yaml:10:\d+: smoke\[0\]\.expect\.judge\[0\].*must be odd/);
    expect(found).toMatch(/desk\.yaml:11:\d+: smoke\[0\]\.expect\.judge\[1\]/);
    expect(found).toMatch(/desk\.yaml:12:\d+: smoke\[0\]\.expect\.judge\[2\]/);
    await project.cleanup();
    project = await tempProject({ "agents/desk.yaml": agent(["judge_min_agreement: 0.9"]) });
    const lonely = await loadAgents(project.agents, { from: process.cwd() });
    expect(lonely.errors.map((e) => `${where(e)}: ${e.message}`)).toEqual([
      expect.stringMatching(
        /^desk\.yaml:8:\d+: smoke\[0\]\.judge_min_agreement: the scenario has no judged expectation/,
      ),
    ]);
  });
});
