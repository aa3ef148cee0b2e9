// The baseline (src/drift/baseline.ts) and the drift verdicts (decide.ts) as pure logic: reports of
// one stack's versions merge into one strict baseline; a report of other versions, another stack or
// an interrupted run is refused; a hand edit is refused field by field; a judge that answers as
// another model is the judge's change (inconclusive), never a drifted agent.
import { describe, expect, it } from "vitest";
import {
  type Baseline,
  baselineJson,
  blessBaseline,
  driftReport,
  movedSince,
  parseBaseline,
} from "../../src/drift/index.ts";
import { exitCode, type Report, reportSchema } from "../../src/results/index.ts";

type CallSpec = { passed: boolean; version?: string; judgeModel?: string; scenario?: string; turns?: number[] };

function call(spec: CallSpec, iteration: number) {
  return {
    agent: "booking",
    scenario: spec.scenario ?? "books",
    iteration,
    status: spec.passed ? "passed" : "failed",
    version_id: spec.version ?? "ca_1@v1",
    outcome: { kind: spec.passed ? "passed" : "failed" },
    fault: spec.passed ? null : "agent",
    latency: { first_response_ms: 10, response_ms: spec.turns ?? [100], tool_ms: [] },
    timings: { duration_ms: 200 },
    assertions: [
      { kind: "tool_calls", key: "check_availability", description: "calls check_availability", passed: spec.passed },
      ...(spec.judgeModel
        ? [
            {
              kind: "judge",
              key: "polite",
              description: "judged: polite",
              passed: true,
              judgement: {
                rubric: "polite",
                model: "judge-alias",
                answered_model: spec.judgeModel,
                verdict: "pass",
                agreement: "3/3",
                votes_for: 3,
                votes_total: 3,
              },
            },
          ]
        : []),
    ],
  };
}

function report(calls: CallSpec[], extra: Record<string, unknown> = {}): Report {
  return reportSchema.parse({
    kind: "smoke",
    stack: "dev",
    created_at: "2026-11-29T08:00:00Z",
    results: calls.map((c, i) => call(c, i + 1)),
    scenarios: [],
    ...extra,
  });
}

const hashes = new Map([["booking", new Map([["books", "sha256:aaa"]])]]);
const bless = (reports: { file: string; report: Report }[]) =>
  blessBaseline({ stack: "dev", reports, hashes, toolVersion: "0.1.0", now: "2026-11-29T09:00:00Z" });

const passes = (n: number, extra: Partial<CallSpec> = {}) =>
  Array.from({ length: n }, () => ({ passed: true, ...extra }));

describe("baseline bless", () => {
  it("merges two reports of the same versions into one baseline: counts, votes, p95, models as answered", () => {
    const baseline = bless([
      { file: "a.json", report: report(passes(3, { judgeModel: "judge-2025-01", turns: [100, 200] })) },
      { file: "b.json", report: report([...passes(1, { judgeModel: "judge-2025-01" }), { passed: false }]) },
    ]);
    const books = baseline.agents.booking?.scenarios.books;
    expect(baseline.agents.booking?.version_id).toBe("ca_1@v1");
    expect([books?.calls, books?.passes]).toEqual([5, 4]);
    expect(books?.expectations.find((e) => e.kind === "tool_calls")).toMatchObject({
      calls: 5,
      passes: 4,
      votes: null,
    });
    expect(books?.expectations.find((e) => e.kind === "judge")?.votes).toEqual({ for: 12, total: 12 });
    expect(books?.judge_models).toEqual(["judge-2025-01"]);
    expect(books?.latency).toEqual({ response_p50_ms: 100, response_p95_ms: 200, turns: 8 });
    expect(books?.scenario_hash).toBe("sha256:aaa");
    expect(baseline.reports.map((r) => r.file)).toEqual(["a.json", "b.json"]);
    // What bless writes reads back as it was.
    expect(parseBaseline("baselines/dev.json", baselineJson(baseline))).toEqual(baseline);
  });

  it("refuses reports of different versions, of another stack, interrupted, or of a scenario no longer declared", () => {
    expect(() =>
      bless([
        { file: "a.json", report: report(passes(2)) },
        { file: "b.json", report: report(passes(2, { version: "ca_1@v2" })) },
      ]),
    ).toThrow(/b\.json: agent "booking" was called on ca_1@v2, but a\.json on ca_1@v1/);
    expect(() => bless([{ file: "a.json", report: report(passes(2), { stack: "prod" }) }])).toThrow(
      /a report of stack "prod", not "dev"/,
    );
    expect(() => bless([{ file: "a.json", report: report(passes(2), { interrupted: true }) }])).toThrow(/interrupted/);
    expect(() => bless([{ file: "a.json", report: report(passes(2, { scenario: "gone" })) }])).toThrow(
      /"booking\/gone" is in the reports but no longer in the agent files/,
    );
  });

  it("reads a baseline strictly: an unknown or missing field is named", () => {
    const baseline = bless([{ file: "a.json", report: report(passes(2)) }]);
    const edited = JSON.parse(baselineJson(baseline));
    edited.agents.booking.scenarios.books.extra = 1;
    expect(() => parseBaseline("baselines/dev.json", JSON.stringify(edited))).toThrow(
      /baselines\/dev\.json: not an agent-iac baseline: agents\.booking\.scenarios\.books: .*extra/,
    );
    delete edited.agents.booking.scenarios.books.extra;
    delete edited.tool_version;
    expect(() => parseBaseline("baselines/dev.json", JSON.stringify(edited))).toThrow(/tool_version/);
  });
});

describe("drift verdicts", () => {
  const baseline: Baseline = bless([{ file: "a.json", report: report(passes(40, { judgeModel: "judge-2025-01" })) }]);
  const rule = { alpha: 0.05, margin: 0.2, maxCalls: 24 };
  const decide = (now: Report, options: { toolVersion?: string; hash?: string } = {}) =>
    driftReport({
      baseline,
      baselineFile: "baselines/dev.json",
      rule,
      report: now,
      hashes: new Map([["booking", new Map([["books", options.hash ?? "sha256:aaa"]])]]),
      toolVersion: options.toolVersion ?? "0.1.0",
      untestable: [],
    });
  const scenario = (verdict: string) => [
    { agent: "booking", scenario: "books", version_id: "ca_1@v1", verdict, iterations: 8, passes: 4, min_pass: 0 },
  ];

  it("a failed drift test is drifted, the agent's, with the dropped expectation named, baseline against now", () => {
    const now = report(
      Array.from({ length: 8 }, (_, i) => ({ passed: i % 2 === 0, judgeModel: "judge-2025-01" })),
      { scenarios: scenario("failed") },
    );
    const drift = decide(now);
    const s = drift.drift?.scenarios[0];
    expect(s).toMatchObject({ verdict: "drifted", fault: "agent", calls_used: 8, max_calls: 24 });
    expect(s?.baseline).toMatchObject({ calls: 40, passes: 40, rate: 1 });
    expect(s?.now).toMatchObject({ calls: 8, passes: 4, rate: 0.5 });
    expect(s?.expectations.find((e) => e.kind === "tool_calls")?.dropped).toBe(true);
    expect(s?.expectations.find((e) => e.kind === "judge")?.dropped).toBe(false);
    expect(drift.kind).toBe("drift");
    expect(drift.scenarios[0]?.verdict).toBe("failed");
  });

  it("a judge that answered as another model makes it inconclusive, the judge's fault, even when the test failed", () => {
    const now = report(
      Array.from({ length: 8 }, (_, i) => ({ passed: i % 2 === 0, judgeModel: "judge-2025-06" })),
      { scenarios: scenario("failed") },
    );
    const s = decide(now).drift?.scenarios[0];
    expect(s).toMatchObject({ verdict: "inconclusive", fault: "judge" });
    expect(s?.moved).toEqual([{ what: "judge_model", baseline: "judge-2025-01", now: "judge-2025-06" }]);
    expect(decide(now).scenarios[0]?.verdict).toBe("inconclusive");
  });

  it("a changed scenario text or tool version is named; the scenario's text makes a holding run inconclusive", () => {
    const now = report(passes(12, { judgeModel: "judge-2025-01" }), { scenarios: scenario("passed") });
    expect(decide(now).drift?.scenarios[0]?.verdict).toBe("holding");
    const tool = decide(now, { toolVersion: "0.2.0" }).drift?.scenarios[0];
    expect(tool?.verdict).toBe("holding");
    expect(tool?.moved).toEqual([{ what: "tool_version", baseline: "0.1.0", now: "0.2.0" }]);
    const text = decide(now, { hash: "sha256:bbb" }).drift?.scenarios[0];
    expect(text?.verdict).toBe("inconclusive");
    expect(text?.moved.map((m) => m.what)).toEqual(["scenario_text"]);
  });

  it("a blessed scenario no longer declared is inconclusive, and the exit code says so, not 0", () => {
    const now = report([], { scenarios: [] });
    const drift = driftReport({
      baseline,
      baselineFile: "baselines/dev.json",
      rule,
      report: now,
      hashes: new Map(),
      toolVersion: "0.1.0",
      untestable: [],
    });
    expect(drift.drift?.scenarios[0]).toMatchObject({
      verdict: "inconclusive",
      reason: expect.stringMatching(/no longer in the agent files/),
    });
    expect(drift.scenarios.map((s) => s.verdict)).toEqual(["inconclusive"]);
    expect(exitCode(drift)).toBe(1);
  });

  it("names models only where both sides named some", () => {
    const blessed = baseline.agents.booking?.scenarios.books;
    if (!blessed) throw new Error("no scenario");
    const moved = movedSince(blessed, {
      hash: "sha256:aaa",
      judge: [],
      caller: [],
      toolVersion: "0.1.0",
      baselineTool: "0.1.0",
    });
    expect(moved).toEqual([]);
  });
});
