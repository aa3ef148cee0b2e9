// The gate's pure decisions: Wilson interval, percentiles, verdicts over iterations, shards, merge,
// latency and drift from envelopes, and the Surefire-style JUnit of a flaky scenario.
import { describe, expect, it } from "vitest";
import type { EventEnvelope } from "../../src/api/index.ts";
import { requiredPasses } from "../../src/definitions/index.ts";
import { junitXml } from "../../src/report/index.ts";
import { type CallOutcomeKind, type CallResult, exitCode, reportSchema } from "../../src/results/index.ts";
import {
  type Gate,
  latencySummary,
  parseShard,
  percentile,
  scenarioKey,
  scenarioVerdict,
  shardOf,
  wilson,
} from "../../src/smoke/gates.ts";
import { mergeReports } from "../../src/smoke/merge.ts";
import { addDrift, driftLines, observeEvents } from "../../src/smoke/observe.ts";
import { reportFromCalls, type ScenarioGate } from "../../src/smoke/reports.ts";

const call = (iteration: number, kind: CallOutcomeKind, extra: Partial<CallResult> = {}): CallResult => ({
  agent: "support",
  scenario: "greets",
  iteration,
  side: "new",
  status: kind === "interrupted" ? "error" : kind,
  outcome: { kind, stage: null, request: null, http_status: null, code: null },
  version_id: "ca_1@v1",
  conversation_id: `conv_${iteration}`,
  events_url: null,
  transport: "sse",
  livemode: false,
  error: kind === "error" ? "timed out" : null,
  assertions: [{ description: 'says "hi"', passed: kind === "passed", detail: null, context: [] }],
  transcript: [],
  entries: [],
  tool_calls: [],
  procedures: [],
  latency: { first_response_ms: 100, response_ms: [10, 20], tool_ms: [] },
  timings: { time_to_first_agent_message_ms: null, duration_ms: 1000 },
  started_at: null,
  fault: null,
  ...extra,
});
const gate = (planned: number, minPass: number): Gate => ({ plannedIterations: planned, minPass, bounds: {} });
const none = latencySummary([], {});

describe("pass thresholds", () => {
  it("gives the Wilson 95 % interval", () => {
    expect(wilson(8, 10)).toEqual({ value: 0.8, low: 0.4902, high: 0.9433 });
    expect(wilson(10, 10)).toEqual({ value: 1, low: 0.7225, high: 1 });
    expect(wilson(0, 0)).toBeNull();
  });

  it("turns pass_rate into passes needed, rounding up (0.9 × 10 is 9)", () => {
    expect(requiredPasses({ iterations: 10 })).toBe(10);
    expect(requiredPasses({ iterations: 10, pass_rate: 0.9 })).toBe(9);
    expect(requiredPasses({ iterations: 10, pass_rate: 0.85 })).toBe(9);
    expect(requiredPasses({ iterations: 10, min_pass: 7 })).toBe(7);
  });

  it("passes, is flaky, fails or errs by the threshold", () => {
    const eightOfTen = [
      ...Array.from({ length: 8 }, (_, i) => call(i + 1, "passed")),
      call(9, "failed"),
      call(10, "failed"),
    ];
    expect(scenarioVerdict(eightOfTen, gate(10, 8), none, false)).toBe("flaky");
    expect(scenarioVerdict(eightOfTen, gate(10, 9), none, false)).toBe("failed");
    expect(scenarioVerdict(eightOfTen.slice(0, 8), gate(8, 8), none, false)).toBe("passed");
    const withError = [...eightOfTen.slice(0, 9), call(10, "error")];
    expect(scenarioVerdict(withError, gate(10, 8), none, false)).toBe("flaky");
    expect(scenarioVerdict(withError, gate(10, 10), none, false)).toBe("error");
    // A whole run missing planned calls counts them as failed; a shard judges only what it has.
    expect(scenarioVerdict(eightOfTen.slice(0, 7), gate(10, 8), none, false)).toBe("failed");
    expect(scenarioVerdict(eightOfTen.slice(0, 7), gate(10, 8), none, true)).toBe("passed");
    expect(scenarioVerdict([call(1, "failed"), call(2, "failed"), call(3, "failed")], gate(10, 8), none, true)).toBe(
      "failed",
    );
  });
});

describe("latency", () => {
  it("takes nearest-rank percentiles over every turn of every iteration", () => {
    expect(percentile([5, 1, 4, 2, 3], 50)).toBe(3);
    expect(
      percentile(
        Array.from({ length: 20 }, (_, i) => i + 1),
        95,
      ),
    ).toBe(19);
    expect(percentile([], 95)).toBeNull();
    const summary = latencySummary(
      [call(1, "passed"), call(2, "passed", { latency: { first_response_ms: 300, response_ms: [500], tool_ms: [] } })],
      {
        response_p95_ms: 200,
        tool_ms: 50,
      },
    );
    expect(summary).toMatchObject({ first_response_ms: 300, response_p50_ms: 20, response_p95_ms: 500, tool_ms: null });
    // A bound on something never measured is not met.
    expect(summary.exceeded).toEqual(["response_p95_ms", "tool_ms"]);
  });

  it("measures first response, response and tool round trip from created_at, and times the entries", () => {
    const t0 = Date.parse("2026-01-01T00:00:00.000Z");
    let n = 0;
    const at = (ms: number, payload: Record<string, unknown>): EventEnvelope =>
      ({ id: `evt_${++n}`, created_at: new Date(t0 + ms).toISOString(), payload }) as EventEnvelope;
    const { latency, entryTimes, transcript } = observeEvents([
      at(0, { type: "conversation.started" }),
      at(120, { type: "agent.message.delta", generation_id: "g1", text_delta: "Hello" }),
      at(130, { type: "agent.message.completed", generation_id: "g1", text: "Hello" }),
      at(200, { type: "user.message.received", text: "book it" }),
      at(260, { type: "agent.tool_call.created", call_id: "c1", name: "book", arguments: {} }),
      at(300, { type: "agent.tool_call.returned", call_id: "c1", name: "book", result: { ok: true } }),
      at(450, { type: "agent.message.delta", generation_id: "g2", text_delta: "Done" }),
      at(500, { type: "conversation.ended" }),
    ]);
    expect(latency).toEqual({ first_response_ms: 120, response_ms: [250], tool_ms: [40] });
    expect(transcript.entries.map((e) => e.kind)).toEqual(["agent", "user", "tool", "agent"]);
    expect(entryTimes).toEqual([
      { atMs: 120, returnedAtMs: null },
      { atMs: 200, returnedAtMs: null },
      { atMs: 260, returnedAtMs: 300 },
      { atMs: 450, returnedAtMs: null },
    ]);
  });

  it("lists event types and fields the contract does not name", () => {
    const drift = addDrift({ eventTypes: {}, fields: {} }, [
      { id: "1", created_at: "x", payload: { type: "agent.mood", mood: "ok" } },
      { id: "2", created_at: "x", trace: "t", payload: { type: "user.message.received", text: "hi", lang: "en" } },
      { id: "3", created_at: "x", payload: { type: "conversation.started" } },
    ] as EventEnvelope[]);
    expect(driftLines(drift)).toEqual([
      "event types not recognised: agent.mood (1×)",
      "fields not recognised: envelope.trace (1×), user.message.received.lang (1×)",
    ]);
  });
});

describe("shards", () => {
  it("parses I/N and refuses anything else", () => {
    expect(parseShard("2/3")).toEqual({ index: 2, count: 3 });
    for (const bad of ["0/3", "4/3", "1/0", "a/b", "1", "-1/2"]) expect(parseShard(bad)).toBeUndefined();
  });

  it("puts each call in one shard, stable whatever else is planned, and spreads calls across shards", () => {
    const keys = Array.from({ length: 300 }, (_, i) => [`agent${i % 7}`, `scenario${i % 13}`, (i % 5) + 1] as const);
    const shards = keys.map(([a, s, i]) => shardOf(a, s, i, 3));
    expect(shards.every((n) => n >= 1 && n <= 3)).toBe(true);
    expect(keys.map(([a, s, i]) => shardOf(a, s, i, 3))).toEqual(shards);
    for (const n of [1, 2, 3]) expect(shards.filter((s) => s === n).length).toBeGreaterThan(30);
  });

  it("merges shard reports into the verdicts of the whole, and refuses a call in two reports", () => {
    const gates = new Map<string, ScenarioGate>([
      [
        scenarioKey("support", "greets", "ca_1@v1"),
        { agent: "support", scenario: "greets", versionId: "ca_1@v1", plannedIterations: 4, minPass: 3, bounds: {} },
      ],
    ]);
    const calls = [call(1, "passed"), call(2, "failed"), call(3, "passed"), call(4, "passed")];
    const whole = reportFromCalls(calls, gates);
    const shard = (index: number, list: CallResult[]) => ({
      file: `s${index}.json`,
      report: reportSchema.parse(
        JSON.parse(JSON.stringify(reportFromCalls(list, gates, { shard: { index, count: 2 } }))),
      ),
    });
    const a = shard(1, calls.slice(0, 2));
    const b = shard(2, calls.slice(2));
    expect(a.report.scenarios[0]?.verdict).toBe("flaky");
    const merged = mergeReports([a, b]);
    expect(merged.scenarios.map((s) => [s.verdict, s.passes, s.iterations])).toEqual(
      whole.scenarios.map((s) => [s.verdict, s.passes, s.iterations]),
    );
    expect(merged.scenarios[0]?.verdict).toBe("flaky");
    expect(() => mergeReports([a, { ...a, file: "copy.json" }])).toThrow(/both shard 1\/2/);
    // A missing shard's calls count as not run: the threshold is missed.
    expect(mergeReports([a]).scenarios[0]?.verdict).toBe("failed");
    expect(mergeReports([a]).notes.join("\n")).toContain("no report of shard(s) 2/2");
  });
});

describe("JUnit", () => {
  it("writes a flaky scenario as a passing testcase with one flakyFailure per failing iteration", () => {
    const gates = new Map<string, ScenarioGate>([
      [
        scenarioKey("support", "greets", "ca_1@v1"),
        { agent: "support", scenario: "greets", versionId: "ca_1@v1", plannedIterations: 3, minPass: 2, bounds: {} },
      ],
    ]);
    const xml = junitXml(reportFromCalls([call(1, "passed"), call(2, "failed"), call(3, "passed")], gates));
    expect(xml).toContain('<testsuites name="agent-iac smoke" tests="1" failures="0" errors="0"');
    expect(xml.match(/<flakyFailure /g)).toHaveLength(1);
    expect(xml).toContain('<flakyFailure message="#2: says &quot;hi&quot; — 2 of 3 iterations passed (min_pass 2)"');
    expect(xml).not.toContain("<failure ");
    expect(xml).toContain('<property name="pass_rate" value="0.6667"/>');
    expect(xml).toContain('<property name="response_p95_ms" value="20"/>');
  });
});

describe("early decisions, sequential tests and pass^k in a scenario's summary", () => {
  const gates = (g: Gate) =>
    new Map<string, ScenarioGate>([
      [
        scenarioKey("support", "greets", "ca_1@v1"),
        { ...g, agent: "support", scenario: "greets", versionId: "ca_1@v1" },
      ],
    ]);
  const at = (second: number) => ({ started_at: new Date(Date.UTC(2026, 0, 1, 0, 0, second)).toISOString() });

  it("8 of 10 planned, all passed: passed, decided after 8 of 10, 2 calls not needed (not failures), pass^3 shown", () => {
    const eight = Array.from({ length: 8 }, (_, i) => call(i + 1, "passed", at(i)));
    const report = reportFromCalls(eight, gates(gate(10, 8)));
    const s = report.scenarios[0];
    expect(s).toMatchObject({
      verdict: "passed",
      iterations: 8,
      planned_iterations: 10,
      decided_after: 8,
      calls_saved: 2,
    });
    expect(s?.pass_k?.find((p) => p.k === 3)?.value).toBe(1);
    expect(report.summary).toMatchObject({ calls_saved: 2, errors: 0, passed: 1, calls_passed: 8 });
    expect(junitXml(report)).toContain('<property name="decided" value="decided after 8 of 10, 2 calls not needed"/>');
    expect(junitXml(report)).toContain('<property name="pass^3" value="1"/>');
  });

  it("fails after 3 failures of min_pass 8 of 10, decided after the third to finish", () => {
    // The third failure finished at second 1, before the passing call that started first.
    const list = [
      call(1, "passed", {
        started_at: at(0).started_at,
        timings: { time_to_first_agent_message_ms: null, duration_ms: 5000 },
      }),
      call(2, "failed", at(0)),
      call(3, "failed", at(0)),
      call(4, "failed", at(0)),
    ];
    const s = reportFromCalls(list, gates(gate(10, 8))).scenarios[0];
    expect(s).toMatchObject({ verdict: "failed", decided_after: 3, calls_saved: 6 });
  });

  it("a sequential test: passed at its boundary, inconclusive at its cap, with the rule and Λ in the summary", () => {
    const rule = { passRate: 0.7, confidence: 0.95, margin: 0.1, maxIterations: 20 };
    const seq = { ...gate(20, 14), sequential: rule };
    const passed = reportFromCalls(
      Array.from({ length: 12 }, (_, i) => call(i + 1, "passed")),
      gates(seq),
    ).scenarios[0];
    expect(passed).toMatchObject({ verdict: "passed", calls_saved: 8, decided_after: 12 });
    expect(passed?.sequential).toMatchObject({ pass_rate: 0.7, margin: 0.1, pass_boundary: 2.9957 });
    const mixed = Array.from({ length: 20 }, (_, i) => call(i + 1, i % 10 < 3 ? "failed" : "passed"));
    const inconclusive = reportFromCalls(mixed, gates(seq));
    expect(inconclusive.scenarios[0]).toMatchObject({ verdict: "inconclusive", calls_saved: 0, decided_after: null });
    expect(inconclusive.summary.inconclusive).toBe(1);
    expect(junitXml(inconclusive)).toMatch(
      /<failure message="inconclusive: sequential test: pass_rate 0.7 ± 0.1[^"]*" type="inconclusive">/,
    );
  });

  it("a call never placed or cut short is neither a pass nor a failure, never 'not needed', and never exits 0", () => {
    // min_pass 1 of 3: one pass settles it, so the calls the stop left unplaced change nothing.
    const settled = reportFromCalls([call(1, "passed"), call(2, "not_run"), call(3, "not_run")], gates(gate(3, 1)));
    expect(settled.scenarios[0]).toMatchObject({ verdict: "passed", iterations: 3, passes: 1, calls_saved: 0 });
    expect(settled.scenarios[0]?.pass_rate?.value).toBe(1);
    expect(settled.summary).toMatchObject({ calls: 1, calls_passed: 1, calls_not_run: 2, calls_errors: 0 });
    // Planned calls that never ran: the run could not complete, whatever the verdict.
    expect(exitCode(settled)).toBe(3);
    // All 3 needed: a cut-short call and an unplaced one are missing iterations, not failures.
    const cut = reportFromCalls([call(1, "passed"), call(2, "interrupted"), call(3, "not_run")], gates(gate(3, 3)));
    expect(cut.scenarios[0]).toMatchObject({ verdict: "error", decided_after: null, calls_saved: 0 });
    // Its missing iterations are the stop's: the scenario is interrupted, not one that could not complete.
    expect(cut.summary).toMatchObject({
      errors: 0,
      interrupted: 1,
      calls_interrupted: 1,
      calls_not_run: 1,
      calls_errors: 0,
    });
    // An interrupted failure-free call does not make 1 pass of 2 "flaky".
    expect(scenarioVerdict([call(1, "passed"), call(2, "interrupted")], gate(2, 1), none, false)).toBe("passed");
    // None placed: not run, listed as such, and not a pass.
    const none3 = reportFromCalls([call(1, "not_run"), call(2, "not_run")], gates(gate(2, 2)));
    expect(none3.scenarios[0]).toMatchObject({ verdict: "not_run", iterations: 2, passes: 0, pass_rate: null });
    expect(none3.summary).toMatchObject({ passed: 0, not_run: 1, calls: 0, calls_not_run: 2 });
    expect(exitCode(none3)).toBe(3);
    expect(exitCode({ ...none3, interrupted: true })).toBe(130);
  });

  it("a pass^k requirement fails a scenario that met its threshold", () => {
    const list = [...Array.from({ length: 8 }, (_, i) => call(i + 1, "passed")), call(9, "failed"), call(10, "failed")];
    // pass^4 of 8/10 = 8·7·6·5/(10·9·8·7) = 0.333.
    const s = reportFromCalls(list, gates({ ...gate(10, 8), passK: { k: 4, min: 0.8 } })).scenarios[0];
    expect(s).toMatchObject({ verdict: "failed", pass_k_required: { k: 4, min: 0.8, value: 0.3333, met: false } });
  });
});
