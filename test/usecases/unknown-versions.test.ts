// What smoke and start say when the service answers 404 to a conversation on a version: a version
// the stack pins is lost data (recreate it, with the command); a version given with --version-id
// that the stack does not pin is a wrong id (no recovery offered). Pure decisions: plain records.
import { describe, expect, it } from "vitest";
import type { HeldAgent } from "../../src/provider/index.ts";
import type { CallOutcome } from "../../src/smoke/index.ts";
import { unknownVersionsNote } from "../../src/usecases/unknown-versions.ts";

const held = (key: string, kind: HeldAgent["kind"], links: string[] = []) =>
  ({
    key,
    kind,
    id: `id-${key}`,
    version_id: `v-${key}`,
    name: key,
    postprocess_agents: links,
    urn: `urn:${key}`,
  }) as HeldAgent;

const agents = {
  desk: held("desk", "conversational", ["id-summary"]),
  lobby: held("lobby", "conversational"),
  summary: held("summary", "procedural"),
};
const notFound: CallOutcome = { kind: "error", stage: "create", httpStatus: 404 };
const call = (agent: string, versionId: string, outcome: CallOutcome = notFound) => ({ agent, versionId, outcome });

describe("unknownVersionsNote", () => {
  it("nothing to say when no call met a 404 on creating its conversation", () => {
    const results = [
      call("desk", "v-desk", { kind: "passed" } as CallOutcome),
      call("desk", "v-desk", { kind: "error", stage: "create", httpStatus: 500 }),
      call("lobby", "v-lobby", { kind: "error", stage: "stream", httpStatus: 404 }),
    ];
    expect(unknownVersionsNote(results, agents, "dev")).toBe("");
  });

  it("a pinned version the service does not know: each by key, and the recreate command with its linked agents", () => {
    const note = unknownVersionsNote([call("desk", "v-desk"), call("desk", "v-desk")], agents, "dev");
    expect(note).toContain("the service does not know a version that stack dev pins");
    expect(note).toContain("  desk: v-desk\n");
    expect(note).toContain("create these 2 agents again (with the procedural agents linked to them: summary)");
    expect(note).toContain("  pulumi up --yes --stack dev --replace 'urn:summary' --replace 'urn:desk'\n");
    expect(note).not.toContain("--version-id");
  });

  it("two lost agents are counted as versions; one without links is 'the agent'", () => {
    expect(unknownVersionsNote([call("lobby", "v-lobby")], agents, "dev")).toContain(
      "create the agent again, then smoke again",
    );
    const both = unknownVersionsNote([call("lobby", "v-lobby"), call("desk", "v-desk")], agents, "dev");
    expect(both).toContain("does not know versions that stack dev pins");
    expect(both).toMatch(/ {2}lobby: v-lobby\n {2}desk: v-desk\n/);
  });

  it("a version the stack does not pin is a wrong id: named with what the stack pins, no recovery", () => {
    const note = unknownVersionsNote([call("lobby", "v-typo"), call("ghost", "v-ghost")], agents, "qa");
    expect(note).toContain("v-typo is not one of the versions stack qa pins (it pins lobby at v-lobby)");
    expect(note).toContain("v-ghost is not one of the versions stack qa pins: smoke called it as given (--version-id)");
    expect(note).toContain("`pulumi stack output versions --stack qa`");
    expect(note).not.toContain("pulumi up");
  });
});
