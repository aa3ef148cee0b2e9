// The comparison's pure parts: outcomes per expectation and scenario, the transcript diff, the
// procedures' differences, and reading OLD (a versions output or a previous report).
import { describe, expect, it } from "vitest";
import type { CallerLine } from "../../src/caller/index.ts";
import {
  type ComparedScenario,
  compareReport,
  compareScenario,
  expectationOutcome,
  parseOldVersions,
  procedureDifferences,
  scenarioOutcome,
  transcriptDiff,
} from "../../src/compare/index.ts";
import type { SmokeScenario } from "../../src/definitions/index.ts";
import { htmlReport } from "../../src/report/html/index.ts";
import { junitXml } from "../../src/report/index.ts";
import { type CallResult, callResultSchema } from "../../src/results/index.ts";
import { applyCallerFailure, callerHeard } from "../../src/smoke/call.ts";
import { evaluate, type Observation } from "../../src/smoke/expectations.ts";
import { callResult, gatesOf, type ScenarioResult } from "../../src/smoke/index.ts";

const call = (side: "new" | "old", version: string, fields: Partial<CallResult>): CallResult =>
  callResultSchema.parse({
    agent: "booking",
    scenario: "books",
    iteration: 1,
    side,
    status: "passed",
    version_id: version,
    timings: { duration_ms: 1000 },
    ...fields,
  });

describe("outcomes", () => {
  it.each([
    [true, false, "regression"],
    [true, null, "regression"],
    [false, true, "fixed"],
    [false, false, "still_failing"],
    [null, false, "still_failing"],
    [true, true, "unchanged"],
    [null, true, "unchanged"],
  ] as const)("expectation old %s, new %s → %s", (old, now, outcome) => {
    expect(expectationOutcome(old, now)).toBe(outcome);
  });

  it.each([
    ["passed", "failed", "regression"],
    ["passed", "error", "regression"],
    ["failed", "passed", "fixed"],
    ["error", "passed", "fixed"],
    ["failed", "failed", "still_failing"],
    ["passed", "passed", "unchanged"],
  ] as const)("scenario old %s, new %s → %s", (old, now, outcome) => {
    expect(scenarioOutcome(old, now)).toBe(outcome);
  });
});

describe("compareScenario", () => {
  it("reads each side's calls by outcome: unplaced calls are not run, cut-short ones an error, neither a pass", () => {
    const outcome = (kind: "passed" | "not_run" | "interrupted") => ({
      status: kind === "interrupted" ? ("error" as const) : kind,
      outcome: { kind, stage: null, request: null, http_status: null, code: null },
    });
    const passedNew = call("new", "ca_b@v2", outcome("passed"));
    const unplaced = compareScenario([call("old", "ca_b@v1", outcome("not_run"))], [passedNew]);
    expect(unplaced.old_verdict).toBe("not_run");
    const cut = compareScenario([call("old", "ca_b@v1", outcome("interrupted"))], [passedNew]);
    expect(cut.old_verdict).toBe("error");
    // A cut-short call has no duration worth comparing.
    expect(cut.duration_delta_ms).toBeNull();
    expect(compareScenario([passedNew], [call("new", "ca_b@v2", outcome("not_run"))]).new_verdict).toBe("not_run");
  });

  it("a side the run's stop cut short is interrupted, never 'still failing' or a regression", () => {
    const cut = (side: "new" | "old", version: string) =>
      call(side, version, {
        status: "error",
        outcome: { kind: "interrupted", stage: null, request: null, http_status: null, code: null },
      });
    const failedOld = call("old", "ca_b@v1", {
      status: "failed",
      outcome: { kind: "failed", stage: null, request: null, http_status: null, code: null },
      assertions: [{ description: "ends", passed: false, detail: null, context: [] }],
    });
    const passedOld = call("old", "ca_b@v1", {
      assertions: [{ description: "ends", passed: true, detail: null, context: [] }],
    });
    expect(compareScenario([failedOld], [cut("new", "ca_b@v2")]).outcome).toBe("interrupted");
    expect(compareScenario([passedOld], [cut("new", "ca_b@v2")]).outcome).toBe("interrupted");
    expect(compareScenario([cut("old", "ca_b@v1")], [call("new", "ca_b@v2", {})]).outcome).toBe("interrupted");
  });

  it("names the flipped expectation, diffs the transcripts, and gives the duration and per-turn latency deltas", () => {
    const old = call("old", "ca_b@v1", {
      assertions: [
        { description: "calls tool b", passed: true, detail: null, context: [] },
        { description: "ends", passed: true, detail: null, context: [] },
      ],
      transcript: ["agent: hi", "user: book it", 'tool b({"request":"book it"}) → {"ok":true}', "agent: booked"],
      latency: { first_response_ms: 100, response_ms: [200, 300], tool_ms: [] },
      timings: { duration_ms: 1000, time_to_first_agent_message_ms: null },
    });
    const now = call("new", "ca_b@v2", {
      status: "failed",
      assertions: [
        { description: "calls tool b", passed: false, detail: "never called", context: [] },
        { description: "ends", passed: true, detail: null, context: [] },
      ],
      transcript: ["agent: hi", "user: book it", "agent: I understand: book it"],
      latency: { first_response_ms: 100, response_ms: [250, 280, 10], tool_ms: [] },
      timings: { duration_ms: 1400, time_to_first_agent_message_ms: null },
    });
    const comparison = compareScenario([old], [now]);
    expect(comparison).toMatchObject({
      old_version_id: "ca_b@v1",
      new_version_id: "ca_b@v2",
      old_verdict: "passed",
      new_verdict: "failed",
      outcome: "regression",
      duration_delta_ms: 400,
      response_latency_delta_ms: [50, -20],
    });
    expect(comparison.expectations).toEqual([
      { description: "calls tool b", old: true, new: false, outcome: "regression" },
      { description: "ends", old: true, new: true, outcome: "unchanged" },
    ]);
    expect(comparison.transcript_diff).toEqual([
      "  agent: hi",
      "  user: book it",
      '- tool b({"request":"book it"}) → {"ok":true}',
      "- agent: booked",
      "+ agent: I understand: book it",
    ]);
  });

  it("fails a scenario over its iterations: one failed iteration of two is a failure on that side", () => {
    const passing = (v: string, side: "new" | "old") =>
      call(side, v, { assertions: [{ description: "says hi", passed: true, detail: null, context: [] }] });
    const failing = call("new", "ca_b@v2", {
      status: "failed",
      assertions: [{ description: "says hi", passed: false, detail: null, context: [] }],
    });
    const comparison = compareScenario([passing("ca_b@v1", "old")], [passing("ca_b@v2", "new"), failing]);
    expect(comparison.outcome).toBe("regression");
    expect(comparison.expectations[0]).toMatchObject({ old: true, new: false, outcome: "regression" });
  });
});

describe("transcriptDiff", () => {
  it("compares a caller's lines on their text: the same line said at another moment is unchanged, its times beside it", () => {
    const side = (s: "new" | "old", at: number[], reply: string) =>
      call(s, `ca_b@${s}`, {
        transcript: [
          `caller: book it (at ${(at[0] as number).toFixed(2)} s)`,
          `agent: ${reply}`,
          `caller: thanks (at ${(at[1] as number).toFixed(2)} s)`,
        ],
        entries: [
          { kind: "user", text: "book it", at_ms: (at[0] as number) * 1000, by: "caller" },
          { kind: "agent", text: reply, complete: true, at_ms: null },
          { kind: "user", text: "thanks", at_ms: (at[1] as number) * 1000, by: "caller" },
        ],
      });
    const comparison = compareScenario([side("old", [1.2, 3], "booked")], [side("new", [1.52, 3], "sorry")]);
    expect(comparison.transcript_diff).toEqual([
      "  caller: book it (at 1.20 s → 1.52 s)",
      "- agent: booked",
      "+ agent: sorry",
      "  caller: thanks (at 3.00 s)",
    ]);
  });

  it("caps a long diff and counts the rest", () => {
    const old = Array.from({ length: 150 }, (_, i) => ({ text: `agent: old ${i}` }));
    const now = Array.from({ length: 150 }, (_, i) => ({ text: `agent: new ${i}` }));
    const diff = transcriptDiff(old, now);
    expect(diff).toHaveLength(201);
    expect(diff.at(-1)).toBe("… 100 more line(s)");
  });
});

describe("procedureDifferences", () => {
  it("says which status, output or error changed, ignoring each side's own conversation id", () => {
    const old = {
      conversationId: "conv_a",
      procedures: [
        { key: "summary", status: "completed", output: { summary: "Conversation conv_a completed" } },
        { key: "qa", status: "completed", output: { score: 1 } },
      ],
    };
    const now = {
      conversationId: "conv_b",
      procedures: [
        { key: "summary", status: "completed", output: { summary: "Conversation conv_b completed" } },
        { key: "qa", status: "failed", output: null, error: { message: "boom" } },
      ],
    };
    expect(procedureDifferences(old, now)).toEqual([
      "qa: status completed → failed",
      'qa: output {"score":1} → null',
      'qa: error (none) → {"message":"boom"}',
    ]);
  });
});

describe("parseOldVersions", () => {
  it("reads `pulumi stack output versions --json`", () => {
    expect(parseOldVersions('{"booking": "ca_b@v1", "support": "ca_s@v1"}', "old.json")).toEqual({
      versions: { booking: "ca_b@v1", support: "ca_s@v1" },
      source: "outputs",
    });
  });

  it("reads a previous report tolerantly: its versions, or its new side's calls, unknown fields kept", () => {
    const report = {
      format: "agent-iac-report",
      version: 2,
      kind: "smoke",
      something_new: true,
      results: [
        {
          agent: "booking",
          scenario: "x",
          iteration: 1,
          status: "passed",
          version_id: "ca_b@v3",
          timings: { duration_ms: 1 },
        },
        {
          agent: "support",
          scenario: "y",
          iteration: 1,
          side: "old",
          status: "passed",
          version_id: "ca_s@v1",
          timings: { duration_ms: 1 },
        },
      ],
    };
    expect(parseOldVersions(JSON.stringify(report), "r.json")).toEqual({
      versions: { booking: "ca_b@v3" },
      source: "report",
    });
  });

  it("takes an empty file or {} as a first deploy, and refuses anything else with the file's name", () => {
    expect(parseOldVersions("", "e.json").versions).toEqual({});
    expect(parseOldVersions("{}\n", "e.json").versions).toEqual({});
    expect(() => parseOldVersions("not json", "bad.json")).toThrow(/^oldVersions bad.json: not JSON/);
    expect(() => parseOldVersions('{"booking": 3}', "bad.json")).toThrow(
      /^oldVersions bad.json: neither a versions output/,
    );
  });
});

describe("the comparison report", () => {
  const result = (side: "old" | "new", passed: boolean): ScenarioResult => ({
    agent: "booking",
    scenario: "books",
    iteration: 1,
    versionId: side === "old" ? "ca_b@v1" : "ca_c@v1",
    conversationId: side === "old" ? "conv_old" : "conv_new",
    transport: "sse",
    status: passed ? "passed" : "failed",
    outcome: { kind: passed ? "passed" : "failed" },
    assertions: [
      {
        kind: "tool_calls",
        key: "b",
        description: "calls tool b",
        passed,
        ...(passed ? {} : { detail: "b was never called" }),
      },
    ],
    timings: { durationMs: 900 },
  });

  it("holds both sides, the comparison, the old versions and the regressions, and renders as HTML and JUnit", () => {
    const newResults = [result("new", false)];
    const oldCalls = [callResult(result("old", true), "old")];
    const newCalls = newResults.map((r) => callResult(r, "new"));
    const comparison = compareScenario(oldCalls, newCalls);
    const scenario: ComparedScenario = {
      agent: "booking",
      scenario: "books",
      newCalls,
      oldCalls,
      sameVersion: false,
      newVerdict: "failed",
      comparison,
    };
    const gates = gatesOf(newResults);
    const report = compareReport([scenario], { stack: "dev", gates, oldVersions: { booking: "ca_b@v1" }, notes: [] });
    expect(report).toMatchObject({
      kind: "compare",
      versions: { booking: "ca_c@v1" },
      old_versions: { booking: "ca_b@v1" },
      // The calls the verdicts stand on, as the passed/failed figures count them; the old side apart.
      summary: { regressions: 1, calls: 1, calls_old: 1, calls_passed: 0, calls_failed: 1, failed: 1 },
    });
    expect(report.results.map((r) => `${r.side} ${r.version_id}`)).toEqual(["new ca_c@v1", "old ca_b@v1"]);
    expect(report.scenarios[0]?.comparison?.outcome).toBe("regression");
    const html = htmlReport(report);
    expect(html).toContain("ca_b@v1");
    expect(html).toContain("calls tool b");
    const junit = junitXml(
      compareReport([scenario], {
        stack: "dev",
        gates,
        oldVersions: { booking: "ca_b@v1" },
        notes: [],
        failOn: "regression",
      }),
    );
    expect(junit).toContain(
      '<failure message="regression: calls tool b passed on ca_b@v1, fails on ca_c@v1" type="regression">',
    );
    expect(junit).toContain("<system-out>old ca_b@v1: passed; new ca_c@v1: failed → regression");
  });
});

describe("expectations joined by identity, not by words", () => {
  // The caller's assertion is worded by what happened: all lines heard (old), or the turn that was not (new).
  const observation: Observation = {
    agentMessages: [{ text: "Booked for Tuesday.", complete: true }],
    toolCalls: [],
    errors: [],
    ended: true,
    durationSec: 2,
    procedures: [],
    entries: [],
  };
  const scenario = { expect: { says: ["booked"] } } as unknown as SmokeScenario;
  const side = (side: "old" | "new"): ScenarioResult => {
    const result: ScenarioResult = {
      agent: "booking",
      scenario: "books",
      iteration: 1,
      versionId: side === "old" ? "ca_b@v1" : "ca_c@v1",
      transport: "sse",
      status: "passed",
      outcome: { kind: "passed" },
      assertions: evaluate(scenario.expect, observation),
      observation,
      timings: { durationMs: 900 },
    };
    if (side === "old") callerHeard(result, [{ turn: 1 }, { turn: 2 }, { turn: 3 }] as CallerLine[]);
    else
      applyCallerFailure(result, scenario, { kind: "not_delivered", turn: 2, message: "not heard", endedCall: false });
    return result;
  };

  it("the caller's lines heard (old) and its turn 2 not heard (new) are one expectation that regressed", () => {
    const [old, now] = [side("old"), side("new")];
    expect(old.assertions[0]?.description).toBe("the caller's 3 lines were heard");
    expect(now.assertions[0]?.description).toBe("the caller's turn 2 is heard");
    const comparison = compareScenario([callResult(old, "old")], [callResult(now, "new")]);
    expect(comparison.outcome).toBe("regression");
    const caller = comparison.expectations.filter((e) => e.description.startsWith("the caller's"));
    // Worded as the new side words it; never a still_failing row that never passed plus a phantom regression.
    expect(caller).toEqual([
      expect.objectContaining({
        kind: "caller",
        key: "caller",
        description: "the caller's turn 2 is heard",
        old: true,
        new: false,
        outcome: "regression",
      }),
    ]);
    expect(comparison.expectations.map((e) => `${e.description}: ${e.outcome}`)).toEqual([
      "the caller's turn 2 is heard: regression",
      'says "booked": unchanged',
      "no server.error events: unchanged",
      "the conversation ends: unchanged",
    ]);
  });

  it("a report written before identities joins on the words (tolerant reading)", () => {
    const older = (side: "old" | "new", passed: boolean) =>
      call(side, `ca_b@v${side === "old" ? 1 : 2}`, {
        status: passed ? "passed" : "failed",
        assertions: [{ description: "calls tool b", passed } as CallResult["assertions"][number]],
      });
    const comparison = compareScenario([older("old", true)], [older("new", false)]);
    expect(comparison.expectations).toEqual([
      expect.objectContaining({ description: "calls tool b", old: true, new: false, outcome: "regression" }),
    ]);
  });
});
