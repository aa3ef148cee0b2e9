// `caller:` in a smoke scenario: scripted turns or a persona, validated at file:line, and only over
// the WebSocket session (transport: ws).
import { afterEach, describe, expect, it } from "vitest";
import { loadAgents } from "../../src/definitions/index.ts";
import { scenarioAgent as agent, type TempProject, tempProject, where } from "../definitions/helpers.ts";

let project: TempProject | undefined;
afterEach(async () => {
  await project?.cleanup();
  project = undefined;
});

describe("caller fields of a smoke scenario", () => {
  it("accepts scripted turns, with and without `after`, over ws", async () => {
    project = await tempProject({
      "agents/desk.yaml": agent([
        "transport: ws",
        "caller:",
        "  turns:",
        "    - I'd like to book an appointment.",
        '    - { say: "Tuesday at 10", after: "/which day/i" }',
      ]),
    });
    const { agents, errors } = await loadAgents(project.agents, { from: process.cwd() });
    expect(errors).toEqual([]);
    expect(agents[0]?.smoke[0]?.caller).toEqual({
      turns: ["I'd like to book an appointment.", { say: "Tuesday at 10", after: "/which day/i" }],
    });
  });

  it("refuses a caller over SSE at the caller's line", async () => {
    project = await tempProject({
      "agents/desk.yaml": agent(["caller:", "  turns: [hello]"]),
    });
    const { errors } = await loadAgents(project.agents, { from: process.cwd() });
    expect(errors.map((e) => `${where(e)}: ${e.message}`)).toEqual([
      expect.stringMatching(/^desk\.yaml:9:\d+: smoke\[0\]\.caller: .*transport: ws/),
    ]);
  });

  it("refuses both turns and a persona, goal without persona, an empty turn list and a bad pattern, at their lines", async () => {
    project = await tempProject({
      "agents/desk.yaml": agent([
        "transport: ws", // 8
        "caller:", // 9
        "  turns: [hi]", // 10
        "  persona: a busy parent", // 11
      ]),
      "agents/other.yaml": agent([
        "transport: ws", // 8
        "caller:", // 9
        "  turns: []", // 10
        "  goal: book", // 11
      ]),
      "agents/third.yaml": agent([
        "transport: ws", // 8
        "caller:", // 9
        '  turns: [{ say: "x", after: "/(a+)+/" }]', // 10
      ]),
    });
    const { errors } = await loadAgents(project.agents, { from: process.cwd() });
    const found = errors.map((e) => `${where(e)}: ${e.message}`).join("\n");
    expect(found).toMatch(
      /desk\.yaml:11:\d+: smoke\[0\]\.caller\.persona: give caller\.turns or caller\.persona, not both/,
    );
    expect(found).toMatch(/other\.yaml:10:\d+: smoke\[0\]\.caller\.turns: give at least one turn/);
    expect(found).toMatch(/other\.yaml:11:\d+: smoke\[0\]\.caller\.goal: goal belongs to a persona/);
    expect(found).toMatch(/third\.yaml:10:\d+: smoke\[0\]\.caller\.turns\[0\]/);
  });

  it("accepts a persona with a goal and max_turns", async () => {
    project = await tempProject({
      "agents/desk.yaml": agent([
        "transport: ws",
        "caller: { persona: a busy parent, goal: book Tuesday at 10, max_turns: 4 }",
      ]),
    });
    const { agents, errors } = await loadAgents(project.agents, { from: process.cwd() });
    expect(errors).toEqual([]);
    expect(agents[0]?.smoke[0]?.caller).toEqual({ persona: "a busy parent", goal: "book Tuesday at 10", max_turns: 4 });
  });
});
