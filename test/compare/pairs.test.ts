// The pairs of a comparison (src/compare/sequential.ts), with a fake placement standing in for the
// service: a sequential scenario expands to max_pairs pairs from its first iteration (the shard that
// holds it holds them all), a cap that could never say "no worse" is refused before any call, and
// placement goes round by round in pairs, each pair's order recorded on both results, until decided.
import { describe, expect, it } from "vitest";
import { compareSides, comparisonPlan, placePairs } from "../../src/compare/index.ts";
import { smokeScenario } from "../../src/definitions/schema.ts";
import { ConfigError } from "../../src/errors/index.ts";
import { htmlReport, junitXml, terminalSummary } from "../../src/report/index.ts";
import { exitCode } from "../../src/results/index.ts";
import { notRunResult, type PlannedCall } from "../../src/smoke/index.ts";

const planned = (name: string, iteration: number, extra: Record<string, unknown> = {}): PlannedCall => {
  const { override_config: _none, ...scenario } = smokeScenario.parse({
    name,
    channel: { callee_no: "+1555" },
    ...extra,
  });
  return { agent: "booking", scenario, iteration, versionId: "ca_new@v1", procedural: {}, live: false };
};
const old = { versions: { booking: "ca_old@v1" }, source: "outputs" as const };

describe("the pairs of a comparison", () => {
  it("pairs every fixed call; expands a sequential scenario's first iteration to max_pairs, dropping its others", () => {
    const plan = comparisonPlan(
      [
        planned("fixed", 1),
        planned("fixed", 2),
        planned("seq", 1, { compare: "sequential" }),
        planned("seq", 2, { compare: "sequential" }),
      ],
      old,
    );
    expect(plan.oldCalls.map((c) => c.versionId)).toEqual(Array(42).fill("ca_old@v1"));
    expect(plan.newCalls.filter((c) => c.scenario.name === "seq").map((c) => c.iteration)).toEqual(
      Array.from({ length: 40 }, (_, i) => i + 1),
    );
    expect(plan.sequential.get("booking\u0000seq")).toEqual({ alpha: 0.05, margin: 0.1, maxPairs: 40 });
    // The run's rule covers every scenario.
    expect(comparisonPlan([planned("fixed", 1)], old, { rule: "sequential" }).newCalls).toHaveLength(40);
  });

  it("refuses a cap that could never say no worse, before any call", () => {
    const tight = planned("seq", 1, { compare: { rule: "sequential", max_pairs: 20 } });
    expect(() => comparisonPlan([tight], old)).toThrow(ConfigError);
    expect(() => comparisonPlan([tight], old)).toThrow(
      'booking/seq: a sequential comparison at α 0.05 with margin 0.1 needs at least 32 pairs to say "no worse"',
    );
    // A wider margin needs fewer: 16 pairs at 0.2.
    const wide = planned("seq", 1, { compare: { rule: "sequential", max_pairs: 20, margin: 0.2 } });
    expect(comparisonPlan([wide], old).newCalls).toHaveLength(20);
  });

  it("places pairs round by round until the test decides, each pair's order on both its results", async () => {
    const plan = comparisonPlan([planned("seq", 1, { compare: "sequential" })], old);
    const rounds: string[][] = [];
    // The old version always passes; the new one fails every other call: regressed after 10 pairs
    // (5 discordant, each multiplying the wealth by 1 + 0.829: 20.5 ≥ 1/α).
    const place = async (calls: PlannedCall[]) => {
      rounds.push(calls.map((c) => `${c.versionId === "ca_old@v1" ? "old" : "new"}#${c.iteration}`));
      return calls.map((c) => {
        const pass = c.versionId === "ca_old@v1" || c.iteration % 2 === 0;
        return {
          ...notRunResult(c, { reason: "fake" }),
          status: pass ? "passed" : "failed",
          outcome: { kind: pass ? "passed" : "failed" },
        } as ReturnType<typeof notRunResult>;
      });
    };
    const random = (() => {
      let i = 0;
      return () => (i++ % 3 === 0 ? 0.2 : 0.7);
    })();
    const { newResults, oldResults } = await placePairs(plan, place, { pairsPerRound: 2, random });
    expect(rounds).toHaveLength(5);
    expect(rounds[0]).toEqual(["old#1", "new#1", "new#2", "old#2"]);
    expect(newResults.map((r) => r.iteration)).toEqual(Array.from({ length: 10 }, (_, i) => i + 1));
    expect(oldResults.map((r) => r.pairOrder)).toEqual(newResults.map((r) => r.pairOrder));
    expect(newResults[0]?.pairOrder).toBe("old_first");
    expect(newResults[1]?.pairOrder).toBe("new_first");
    // Without a threshold of its own, the comparison decides the scenario: its gate asks no passes.
    expect(newResults[0]?.gate).toMatchObject({ plannedIterations: 10, minPass: 0 });
  });
});

describe("a sequential comparison's scenario labelled by its decision (no threshold of its own)", () => {
  /** Places each pair with the old version passing and the new one failing where `fails(iteration)`. */
  const run = async (fails: (iteration: number) => boolean, allowInconclusive = false) => {
    const plan = comparisonPlan([planned("seq", 1, { compare: "sequential" })], old);
    const place = async (calls: PlannedCall[]) =>
      calls.map((c) => {
        const pass = c.versionId === "ca_old@v1" || !fails(c.iteration);
        return {
          ...notRunResult(c, { reason: "fake" }),
          status: pass ? "passed" : "failed",
          outcome: { kind: pass ? "passed" : "failed" },
        } as ReturnType<typeof notRunResult>;
      });
    const sides = await placePairs(plan, place, { pairsPerRound: 2 });
    const { report } = compareSides(
      { ...sides, notes: [] },
      { old, failOn: "regression", sequential: plan.sequential, interrupted: false, allowInconclusive },
    );
    return report;
  };

  it("a regression is failed on every surface, never flaky, and its saved calls are counted", async () => {
    const report = await run((i) => i % 2 === 1);
    const [scenario] = report.scenarios;
    expect(scenario?.comparison?.outcome).toBe("regression");
    expect(scenario?.verdict).toBe("failed");
    expect(scenario?.comparison?.new_verdict).toBe("failed");
    expect(report.summary).toMatchObject({ failed: 1, flaky: 0, passed: 0, regressions: 1, calls_saved: 60 });
    expect(exitCode(report)).toBe(1);
    expect(terminalSummary(report)).toContain("→ failed");
    expect(terminalSummary(report)).not.toContain("flaky");
    expect(junitXml(report)).toContain('<property name="verdict" value="failed"/>');
    expect(htmlReport(report)).toContain('data-verdict="failed"');
    expect(htmlReport(report)).not.toContain('data-verdict="flaky"');
  });

  it("an undecided comparison is inconclusive, counted so; --allow-inconclusive lets it through, still named", async () => {
    // One failure in twenty: neither regressed nor shown no worse within margin 0.1 by the cap.
    const report = await run((i) => i % 20 === 0);
    const [scenario] = report.scenarios;
    expect(scenario?.comparison?.outcome).toBe("inconclusive");
    expect(scenario?.verdict).toBe("inconclusive");
    expect(report.summary).toMatchObject({ inconclusive: 1, failed: 0, flaky: 0, passed: 0, calls_saved: 0 });
    expect(exitCode(report)).toBe(1);
    expect(terminalSummary(report)).toContain("→ inconclusive");
    expect(junitXml(report)).toContain('<property name="verdict" value="inconclusive"/>');
    expect(junitXml(report)).toContain('type="inconclusive"');
    const allowed = await run((i) => i % 20 === 0, true);
    expect(allowed.scenarios[0]?.verdict).toBe("inconclusive");
    expect(allowed.summary.inconclusive).toBe(0);
    expect(exitCode(allowed)).toBe(0);
    expect(junitXml(allowed)).not.toContain("<failure");
  });
});
