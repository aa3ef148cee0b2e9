// The vetting of a model's proposals (src/drafts/vet.ts): the schema's own file:line errors, the
// agent's procedural agents and languages, the call-minute budget, and what is not a scenario at
// all, each dropped with its reason and counted.
import { describe, expect, it } from "vitest";
import type { AgentDefinition } from "../../src/definitions/index.ts";
import { Scrubber } from "../../src/drafts/pii.ts";
import { countLine, vet } from "../../src/drafts/vet.ts";

const agent: AgentDefinition = {
  key: "booking",
  kind: "conversational",
  file: "agents/booking.yaml",
  name: "Booking",
  description: "",
  config: {
    tool: { tools: [{ ns: "syscall", name: "check_availability" }] },
    language: { default_language: "English", supported_languages: ["English", "Spanish"] },
  },
  postprocessAgents: ["call-summary"],
  protect: false,
  smoke: [],
};

const proposal = {
  name: "asks",
  persona: "A patient",
  goal: "a slot on Tuesday",
  max_turns: 3,
  tool_calls: ["check_availability"],
  procedures: { "call-summary": "completed" },
  judge: [],
  language: null,
};

const options = (extra: Partial<Parameters<typeof vet>[1]> = {}) => ({
  agent,
  existing: [],
  channel: { callee_no: "+15550142100" },
  scrubber: new Scrubber(),
  count: 10,
  label: "proposed scenario",
  ...extra,
});

describe("vetting the model's proposals", () => {
  it("keeps a runnable one, with the schema's defaults read back", () => {
    const { kept, dropped } = vet([proposal], options());
    expect(dropped).toEqual([]);
    expect(kept[0]?.scenario).toMatchObject({ name: "asks", transport: "ws", caller: { persona: "A patient" } });
    expect(kept[0]?.parsed.timeout).toBe(120);
  });

  it("drops, with why: a schema error at file:line, an unlinked procedural agent, an unknown language, the budget, no goal", () => {
    const { kept, dropped } = vet(
      [
        { ...proposal, name: "too-many-turns", goal: "one", max_turns: 500 },
        { ...proposal, name: "unlinked", goal: "two", procedures: { "qa-scorer": "completed" } },
        { ...proposal, name: "in-french", goal: "three", language: "French" },
        { ...proposal, name: "no-goal", goal: undefined },
      ],
      options(),
    );
    expect(kept).toEqual([]);
    expect(dropped.map((d) => [d.name, d.kind])).toEqual([
      ["too-many-turns", "invalid"],
      ["unlinked", "unknown procedure"],
      ["in-french", "unknown language"],
      ["no-goal", "not a scenario"],
    ]);
    expect(dropped[0]?.reason).toMatch(/^proposed scenario 1:\d+:\d+: smoke\[0\]\.caller\.max_turns: /);
    const budget = vet([proposal], options({ maxCallMinutes: 1 }));
    expect(budget.dropped[0]?.reason).toBe("its worst case is 2 call minutes, over the budget of 1");
    expect(countLine(5, 1, dropped)).toBe(
      "5 proposed, 1 kept: 1 did not validate against the agent-file schema, 1 named a procedural agent the agent does not link, 1 named a language the agent does not speak, 1 was not a scenario (a persona and a goal are needed)",
    );
  });
});
