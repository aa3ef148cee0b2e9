// The pure parts of `try`: the verdicts with Holm across variants, what cannot be tried, the
// override sent, the ranking's certainty, and promoting a variant with the file's comments kept.
import { describe, expect, it } from "vitest";
import { parseDocument } from "yaml";
import type { AgentDefinition } from "../../src/definitions/index.ts";
import type { PlannedCall, ScenarioResult } from "../../src/smoke/index.ts";
import { holmLevels, look, standing, variantWealth } from "../../src/variants/decide.ts";
import { promoteDiff, promoteText, promotionRefusal } from "../../src/variants/promote.ts";
import { rank } from "../../src/variants/ranking.ts";
import { playRounds, type TryPlan, worstCase } from "../../src/variants/rounds.ts";
import { agentUntryable, deployedDifferences, untryable, variantOverride } from "../../src/variants/tryable.ts";

const rule = { alpha: 0.05, margin: 0.2, maxPairs: 30 };
const pairs = (n: number, old: boolean, now: boolean) => Array.from({ length: n }, () => ({ old, new: now }));

describe("variant verdicts", () => {
  it("Holm's step-down rejects the smallest at α/m, then α/(m−1), and stops at the first it keeps", () => {
    expect(holmLevels([0.01, 0.02, 0.5], 0.05)).toEqual([0.05 / 3, 0.025, undefined]);
    // The second smallest misses α/2: nothing after it is rejected, even one under α.
    expect(holmLevels([0.01, 0.03, 0.04], 0.05)).toEqual([0.05 / 3, undefined, undefined]);
  });

  it("a variant that loses every discordant pair is worse; the same pairs the other way are better", () => {
    const worse = variantWealth(pairs(8, true, false), rule);
    expect(worse.worse).toBeGreaterThan(60);
    expect(worse.better).toBeLessThan(1);
    expect(variantWealth(pairs(8, false, true), rule).better).toBeCloseTo(worse.worse);
  });

  it("decides each variant once, with Holm across them, and leaves a tie inconclusive at the cap", () => {
    const [a, b, c] = [standing("a"), standing("b"), standing("c")];
    const standings = [a, b, c];
    for (let round = 1; round <= rule.maxPairs; round++) {
      if (a.verdict === "undecided") a.pairs.push({ old: true, new: false });
      if (b.verdict === "undecided") b.pairs.push({ old: true, new: true });
      // c: as often better as worse, never decided.
      if (c.verdict === "undecided") c.pairs.push(round % 2 ? { old: true, new: false } : { old: false, new: true });
      look(standings, rule);
    }
    expect(a).toMatchObject({ verdict: "worse", level: 0.05 / 3 });
    // 1.875^7 ≈ 81 ≥ 60 = 3/α: the seventh discordant pair decides it, and no pair is added after.
    expect(a.decidedAfter).toBe(7);
    expect(a.pairs).toHaveLength(7);
    expect(b.verdict).toBe("no_worse");
    expect(c.verdict).toBe("inconclusive");
  });

  it("a wealth once reached stays: a later pair against it does not undo the verdict", () => {
    const s = standing("a");
    s.pairs.push(...pairs(7, true, false));
    look([s], rule);
    expect(s.verdict).toBe("worse");
    s.pairs.push(...pairs(20, false, true));
    look([s], rule);
    expect(s.verdict).toBe("worse");
  });
});

describe("what can be tried", () => {
  it("refuses a removal, name, description, postprocess_agents and a new agent, with the reason", () => {
    expect(untryable({ tool: null })).toContain("`tool` removed");
    expect(untryable({ tool: { transfers: null } })).toContain("`tool.transfers` removed");
    expect(untryable({ name: "x" })).toContain("`name`");
    expect(untryable({ description: "x" })).toContain("`description`");
    expect(untryable({ postprocess_agents: [] })).toContain("only after deploy");
    expect(untryable({ kind: "conversational", name: "x" })).toContain("not a new agent");
    expect(untryable({ language: { default_language: "Spanish" } })).toBeUndefined();
  });

  it("refuses a new agent, a procedural one and one without scenarios", () => {
    const agent = { key: "booking", kind: "conversational", smoke: [{ name: "s" }] } as unknown as AgentDefinition;
    expect(agentUntryable(agent, "booking", undefined)).toContain("a new agent");
    expect(agentUntryable({ ...agent, kind: "procedural" }, "booking", "ca_1@v1")).toContain("procedural agent");
    expect(agentUntryable({ ...agent, smoke: [] }, "booking", "ca_1@v1")).toContain("no smoke scenarios");
    expect(agentUntryable(undefined, "bookin", undefined)).toContain('no agent "bookin"');
    expect(agentUntryable(agent, "booking", "ca_1@v1")).toBeUndefined();
  });

  it("sends every changed top-level section whole (the rest of the section from the base)", () => {
    const base = {
      tool: {
        tools: [
          { ns: "s", name: "a" },
          { ns: "s", name: "b" },
        ],
        transfers: [{ id: "+1" }],
      },
      language: { default_language: "English" },
    };
    const tried = variantOverride(base, { tool: { tools: [{ ns: "s", name: "a" }] } });
    expect(tried?.override).toEqual({ tool: { tools: [{ ns: "s", name: "a" }], transfers: [{ id: "+1" }] } });
    expect(variantOverride(base, { language: { default_language: "English" } })).toBeUndefined();
  });
});

describe("the agent file against what is deployed", () => {
  const deployed = {
    name: "Booking",
    description: "Books.",
    config: { tool: { tools: [{ ns: "syscall", name: "a" }] }, language: { default_language: "English" } },
    postprocess_agents: ["pa_1"],
  };

  it("agrees when only key order, an undefined field or an empty link list differs", () => {
    const file = {
      description: "Books.",
      name: "Booking",
      config: {
        language: { default_language: "English", extra: undefined },
        tool: { tools: [{ name: "a", ns: "syscall" }] },
      },
      postprocess_agents: ["pa_1"],
    };
    expect(deployedDifferences(file, deployed)).toEqual([]);
    expect(
      deployedDifferences({ ...deployed, postprocess_agents: [] }, { ...deployed, postprocess_agents: undefined }),
    ).toEqual([]);
  });

  it("names each differing config section and agent field, a section added or dropped too", () => {
    const file = {
      ...deployed,
      description: "Books visits.",
      config: {
        tool: deployed.config.tool,
        language: { default_language: "Spanish" },
        runtime: { prompt: { text: "Hi" } },
      },
      postprocess_agents: ["pa_2"],
    };
    expect(deployedDifferences(file, deployed)).toEqual([
      "description",
      "postprocess_agents",
      "config.language",
      "config.runtime",
    ]);
    expect(deployedDifferences({ ...deployed, config: { language: deployed.config.language } }, deployed)).toEqual([
      "config.tool",
    ]);
  });
});

describe("the ranking", () => {
  const side = (name: string, results: boolean[]) => ({
    name,
    passRate: results.filter(Boolean).length / results.length,
    outcomes: new Map(results.map((passed, i) => [`s\u0000${i}`, passed])),
  });

  it("names what it cannot tell apart instead of a winner", () => {
    const ranking = rank(
      [
        side(
          "base",
          pairs(20, true, true).map(() => true),
        ),
        side("warm", Array(20).fill(true)),
      ],
      rule,
    );
    expect(ranking.first).toBeNull();
    expect(ranking.text).toContain("base and warm are not told apart after 20 pairs");
  });

  it("ranks first with evidence only when it beats every other side on their shared pairs", () => {
    const ranking = rank(
      [side("base", Array(20).fill(false)), side("fix", Array(20).fill(true)), side("half", Array(20).fill(false))],
      rule,
    );
    expect(ranking.first).toBe("fix");
    expect(ranking.text).toContain("fix is ranked first with evidence");
  });
});

describe("rounds", () => {
  const template = {
    agent: "booking",
    versionId: "ca_1@v1",
    iteration: 1,
    procedural: {},
    live: false,
    scenario: { name: "s", iterations: 1 },
  } as unknown as PlannedCall;
  const plan: TryPlan = {
    agent: "booking",
    versionId: "ca_1@v1",
    scenarios: [template],
    variants: [
      { name: "bad", source: "bad.yaml", override: { tool: {} }, config: {} },
      { name: "same", source: "same.yaml", override: { runtime: {} }, config: {} },
    ],
    rule,
  };

  it("counts every side up to the cap in the worst case, and places a decided variant no more", async () => {
    expect(worstCase(plan)).toHaveLength(3 * 30);
    const placed: PlannedCall[][] = [];
    const played = await playRounds(plan, async (calls) => {
      placed.push(calls);
      return calls.map(
        (c) =>
          ({
            agent: c.agent,
            scenario: c.scenario.name,
            iteration: c.iteration,
            outcome: { kind: c.overrideConfig && "tool" in c.overrideConfig ? "failed" : "passed" },
          }) as unknown as ScenarioResult,
      );
    });
    expect(played.standings.map((s) => s.verdict)).toEqual(["worse", "no_worse"]);
    // Round 1 places all three, with the same caller lines (iteration) on every side.
    expect(placed[0]?.map((c) => c.iteration)).toEqual([1, 1, 1]);
    expect(placed[0]?.filter((c) => !c.overrideConfig)).toHaveLength(1);
    const decided = played.standings[0]?.decidedAfter ?? 0;
    expect(placed[decided]?.some((c) => c.overrideConfig && "tool" in c.overrideConfig)).toBe(false);
  });
});

describe("promote", () => {
  const file = `# The booking line.
kind: conversational
name: Booking
description: Books.
config:
  # Tools it may call.
  tool:
    tools: [{ ns: syscall, name: a }] # the one tool
    transfers: [{ id: "+1" }]
  language:
    default_language: English # spoken first
variants:
  # Spanish first.
  spanish:
    language: { default_language: Spanish }
`;

  it("writes the variant under config, keeps every other comment, drops the entry, and diffs", () => {
    const after = promoteText(file, { language: { default_language: "Spanish" } }, "spanish");
    const doc = parseDocument(after);
    expect(doc.getIn(["config", "language", "default_language"])).toBe("Spanish");
    expect(doc.get("variants")).toBeUndefined();
    for (const comment of ["# The booking line.", "# Tools it may call.", "# the one tool", "# spoken first"]) {
      expect(after).toContain(comment);
    }
    // Only the promoted line changes: flow collections keep their layout.
    expect(after.split("\n").filter((line) => !file.includes(line))).toEqual([
      "    default_language: Spanish # spoken first",
    ]);
    const diff = promoteDiff("agents/booking.yaml", file, after);
    expect(diff).toContain("-    default_language: English # spoken first");
    expect(diff).toContain("+    default_language: Spanish # spoken first");
  });

  it("promotes only a variant decided no worse or better: worse, inconclusive, undecided or untried is refused", () => {
    expect(promotionRefusal("spanish", "no_worse")).toBeUndefined();
    expect(promotionRefusal("spanish", "better")).toBeUndefined();
    expect(promotionRefusal("spanish", "worse")).toBe(
      "--promote spanish: not written, its verdict is worse (only a variant decided no worse or better is promoted)",
    );
    expect(promotionRefusal("spanish", "inconclusive")).toContain("its verdict is inconclusive");
    expect(promotionRefusal("spanish", "undecided")).toContain("its verdict is undecided");
    expect(promotionRefusal("french", undefined)).toBe("--promote french: no such variant was tried");
  });
});
