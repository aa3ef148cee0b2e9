// The recovery use case decides which agents `pulumi up --replace` must create again (a lost
// conversational agent takes its linked procedural agents with it, procedural ones first) and
// writes the command a user can paste. Pure decisions on what a stack holds: plain records.
import { describe, expect, it } from "vitest";
import type { HeldAgent } from "../../src/provider/index.ts";
import { agentsToRecreate, recoveryCommand } from "../../src/usecases/recovery.ts";

const held = (key: string, kind: HeldAgent["kind"], links: string[] = [], urn = `urn:pulumi:dev::p::t::${key}`) =>
  ({ key, kind, id: `id-${key}`, version_id: `v-${key}`, name: key, postprocess_agents: links, urn }) as HeldAgent;

const stack: Record<string, HeldAgent> = {
  desk: held("desk", "conversational", ["id-summary", "id-notes"]),
  lobby: held("lobby", "conversational"),
  summary: held("summary", "procedural"),
  notes: held("notes", "procedural"),
  other: held("other", "procedural"),
};

describe("agentsToRecreate", () => {
  it("a conversational agent brings its linked procedural agents, procedural ones first, each once", () => {
    const keys = agentsToRecreate(stack, ["desk", "summary", "lobby"]).map((a) => a.key);
    expect(keys).toEqual(["notes", "summary", "desk", "lobby"]);
  });

  it("a key the stack does not hold, and a link to an id it does not hold, are left out", () => {
    const dangling = { ...stack, desk: held("desk", "conversational", ["id-gone"]) };
    expect(agentsToRecreate(dangling, ["desk", "nowhere"]).map((a) => a.key)).toEqual(["desk"]);
    expect(agentsToRecreate(stack, ["nowhere"])).toEqual([]);
  });
});

describe("recoveryCommand", () => {
  it("one --replace per agent in creation order, each URN shell-quoted", () => {
    const quoted = { ...stack, notes: held("notes", "procedural", [], "urn:it's") };
    expect(recoveryCommand("dev", quoted, ["desk"])).toBe(
      "pulumi up --yes --stack dev --replace 'urn:it'\\''s' --replace 'urn:pulumi:dev::p::t::summary' --replace 'urn:pulumi:dev::p::t::desk'",
    );
  });

  it("a qualified stack name stays bare; one with shell characters is quoted", () => {
    expect(recoveryCommand("acme/app/dev", stack, ["lobby"])).toMatch(
      /^pulumi up --yes --stack acme\/app\/dev --replace/,
    );
    expect(recoveryCommand("dev; rm -rf /", stack, ["lobby"])).toMatch(
      /^pulumi up --yes --stack 'dev; rm -rf \/' --replace/,
    );
  });

  it("no command when none of the agents has a URN", () => {
    const noUrns = { lobby: held("lobby", "conversational", [], "") };
    expect(recoveryCommand("dev", noUrns, ["lobby"])).toBeUndefined();
    expect(recoveryCommand("dev", stack, [])).toBeUndefined();
  });
});
