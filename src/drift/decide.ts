// `agent-iac drift`'s logic: the calls it places (the baseline's scenarios on the baseline's pinned
// versions, each as a sequential test against the baseline's counts, src/stats/drift.ts) and the
// verdict of each from what the calls showed, with what moved besides the agent. Pure: the use
// case places the calls (the smoke job) and hands the results here.
import type { SmokeScenario } from "../definitions/index.ts";
import { ConfigError } from "../errors/index.ts";
import type { Drift, DriftScenario, Moved, Report, ScenarioSummary, Verdict } from "../results/index.ts";
import { type DriftRule, driftSequentialRule, latencyDrift } from "../stats/index.ts";
import {
  type Baseline,
  type BaselineScenario,
  callerModels,
  expectationCounts,
  judgeModels,
  percentile,
  scenarioHash,
} from "./baseline.ts";

/** The default rule: a drop of 0.1 at α 0.05 within 40 calls (those of `smoke --compare`'s sequential test). */
export const DRIFT_DEFAULTS: DriftRule = { alpha: 0.05, margin: 0.1, maxCalls: 40 };

/** The refusal when the stack holds other versions than the baseline's: after a deploy, re-bless or compare. */
export function requireBlessedVersions(baseline: Baseline, held: Record<string, string>, file: string): void {
  const moved = Object.entries(baseline.agents)
    .filter(([agent, a]) => held[agent] !== a.version_id)
    .map(([agent, a]) => `${agent}: baseline ${a.version_id}, stack ${held[agent] ?? "(not deployed)"}`);
  if (moved.length === 0) return;
  throw new ConfigError(
    `the stack's versions are not the baseline's (${moved.join("; ")}): after a deploy, re-bless (\`agent-iac smoke --stack ${baseline.stack} --json r.json\`, then \`agent-iac baseline bless r.json --stack ${baseline.stack}\`, reviewed in a pull request), or compare the old versions with the new as today (\`agent-iac smoke --compare OLD\`); ${file} was not changed`,
  );
}

type Planned = { agent: string; scenario: SmokeScenario };

/**
 * The scenario as the drift test places it: its own calls and expectations, judged by the drift
 * rule (a sequential test against the baseline's counts, capped), not by its file's repeats.
 * Undefined when the baseline's rate is too low for any drop to be told.
 */
export function driftScenario(scenario: SmokeScenario, blessed: BaselineScenario, rule: DriftRule) {
  const sequential = driftSequentialRule(blessed, rule);
  if (!sequential) return undefined;
  const { min_pass: _minPass, pass_k: _passK, ...rest } = scenario;
  return {
    ...rest,
    iterations: rule.maxCalls,
    pass_rate: sequential.passRate,
    confidence: sequential.confidence,
    margin: sequential.margin,
    max_iterations: rule.maxCalls,
  } as SmokeScenario;
}

/** What moved besides the agent: the scenario's text, the judge's and the caller's models as answered, the tool. */
export function movedSince(
  blessed: BaselineScenario,
  now: { hash: string | undefined; judge: string[]; caller: string[]; toolVersion: string; baselineTool: string },
): DriftScenario["moved"] {
  const moved: DriftScenario["moved"] = [];
  const add = (what: Moved, baseline: string, current: string) => moved.push({ what, baseline, now: current });
  if (now.hash !== undefined && now.hash !== blessed.scenario_hash) {
    add("scenario_text", blessed.scenario_hash.slice(0, 19), now.hash.slice(0, 19));
  }
  const list = (models: string[]) => models.join(", ") || "(none named)";
  // Models are compared only where both sides named some: a run whose judge was not asked says nothing.
  const differs = (a: string[], b: string[]) => a.length > 0 && b.length > 0 && a.join("\n") !== b.join("\n");
  if (differs(blessed.judge_models, now.judge)) add("judge_model", list(blessed.judge_models), list(now.judge));
  if (differs(blessed.caller_models, now.caller)) add("caller_model", list(blessed.caller_models), list(now.caller));
  if (now.toolVersion !== now.baselineTool) add("tool_version", now.baselineTool, now.toolVersion);
  return moved;
}

const rate = (passes: number, calls: number) => (calls === 0 ? null : Math.round((passes / calls) * 10_000) / 10_000);

type Calls = Report["results"];

/** Baseline against now per expectation, joined on `{kind, key}`; dropped: its rate fell by more than the margin. */
function expectationRows(blessed: BaselineScenario, calls: Calls, margin: number): DriftScenario["expectations"] {
  const now = expectationCounts(calls);
  const id = (e: { kind: string | null; key: string | null; description: string }) =>
    e.kind !== null && e.key !== null ? `${e.kind} ${e.key}` : `description ${e.description}`;
  return blessed.expectations.map((b) => {
    const n = now.find((e) => id(e) === id(b)) ?? { calls: 0, passes: 0 };
    const dropped = n.calls > 0 && b.calls > 0 && n.passes / n.calls < b.passes / b.calls - margin;
    return {
      kind: b.kind,
      key: b.key,
      description: b.description,
      baseline: { calls: b.calls, passes: b.passes },
      now: { calls: n.calls, passes: n.passes },
      dropped,
    };
  });
}

export type DecideInput = {
  baseline: Baseline;
  baselineFile: string;
  rule: DriftRule;
  report: Report;
  /** Agent key → scenario name → its hash as the agent file declares it now. */
  hashes: Map<string, Map<string, string>>;
  toolVersion: string;
  /** Blessed scenarios not placed (their baseline rate too low to tell a drop), with why. */
  untestable: { agent: string; scenario: string }[];
};

/** One scenario's drift verdict from its summary (the sequential test's verdict), its calls and its baseline. */
function decideScenario(
  input: DecideInput,
  blessed: BaselineScenario,
  summary: ScenarioSummary | undefined,
  agent: string,
  name: string,
): DriftScenario {
  const { rule, report } = input;
  const versionId = input.baseline.agents[agent]?.version_id ?? "";
  const calls = report.results.filter((c) => c.agent === agent && c.scenario === name);
  const ended = calls.filter((c) => c.outcome.kind === "passed" || c.outcome.kind === "failed");
  const passes = ended.filter((c) => c.outcome.kind === "passed").length;
  const turns = ended.flatMap((c) => c.latency.response_ms);
  const latency =
    blessed.latency.response_p95_ms === null || turns.length === 0
      ? null
      : {
          baseline_p95_ms: blessed.latency.response_p95_ms,
          ...latencyDrift(turns, { p95Ms: blessed.latency.response_p95_ms, turns: blessed.latency.turns }, rule.alpha),
        };
  const moved = movedSince(blessed, {
    hash: input.hashes.get(agent)?.get(name),
    judge: judgeModels(ended),
    caller: callerModels(ended),
    toolVersion: input.toolVersion,
    baselineTool: input.baseline.tool_version,
  });
  const sequential = driftSequentialRule(blessed, rule);
  const base = {
    agent,
    scenario: name,
    version_id: versionId,
    baseline: {
      calls: blessed.calls,
      passes: blessed.passes,
      rate: rate(blessed.passes, blessed.calls),
      response_p95_ms: blessed.latency.response_p95_ms,
    },
    now: { calls: ended.length, passes, rate: rate(passes, ended.length), response_p95_ms: percentile(turns, 95) },
    reference_rate: sequential?.reference ?? null,
    calls_used: calls.filter((c) => c.outcome.kind !== "not_run").length,
    max_calls: rule.maxCalls,
    latency,
    expectations: expectationRows(blessed, calls, rule.margin),
    moved,
  };
  const flags = {
    slower: latency?.slower ?? false,
    untestable: sequential === undefined,
    removed: input.hashes.get(agent)?.get(name) === undefined,
  };
  return { ...base, ...verdictOf(summary, base, flags) };
}

/** The verdict and why: the judge or caller moved first (never the agent's drift), then the test's. */
function verdictOf(
  summary: ScenarioSummary | undefined,
  s: Pick<DriftScenario, "moved" | "now" | "baseline">,
  { slower, untestable, removed }: { slower: boolean; untestable: boolean; removed: boolean },
): Pick<DriftScenario, "verdict" | "reason" | "fault"> {
  const moved = new Set(s.moved.map((m) => m.what));
  if (removed) {
    return { verdict: "inconclusive", reason: "the scenario is no longer in the agent files: re-bless", fault: null };
  }
  if (untestable) {
    return {
      verdict: "inconclusive",
      reason: "the baseline's pass rate is too low to tell a drop: re-bless",
      fault: null,
    };
  }
  if (!summary || summary.verdict === "not_run") return { verdict: "not_run", reason: "not run", fault: null };
  if (summary.verdict === "error") return { verdict: "error", reason: "a call could not complete", fault: "service" };
  if (moved.has("judge_model")) {
    return {
      verdict: "inconclusive",
      reason: "the judge's model changed since the baseline (not the agent): re-bless with this judge, or restore it",
      fault: "judge",
    };
  }
  if (moved.has("caller_model")) {
    return {
      verdict: "inconclusive",
      reason: "the caller's model changed since the baseline (not the agent): re-bless with this caller, or restore it",
      fault: "caller",
    };
  }
  const scenarioMoved = moved.has("scenario_text") ? " (the scenario's text changed since the baseline: re-bless)" : "";
  if (summary.verdict === "failed") {
    return { verdict: "drifted", reason: `the pass rate dropped beyond the margin${scenarioMoved}`, fault: "agent" };
  }
  if (slower) {
    return {
      verdict: "drifted",
      reason: `responses are slower than the baseline's p95${scenarioMoved}`,
      fault: "agent",
    };
  }
  if (summary.verdict === "inconclusive" || scenarioMoved) {
    return {
      verdict: "inconclusive",
      reason: scenarioMoved ? `not comparable${scenarioMoved}` : "undecided at the cap on calls",
      fault: null,
    };
  }
  return { verdict: "holding", reason: "no drop beyond the margin", fault: null };
}

/** Each drift verdict as the scenario verdict every surface and the exit code read. */
const SCENARIO_VERDICT: Record<DriftScenario["verdict"], Verdict> = {
  drifted: "failed",
  holding: "passed",
  inconclusive: "inconclusive",
  error: "error",
  not_run: "not_run",
};

/** The drift report: the smoke job's report, its kind "drift", each scenario's verdict the drift verdict. */
export function driftReport(input: DecideInput): Report {
  const { report, baseline } = input;
  const scenarios: DriftScenario[] = [];
  for (const [agent, a] of Object.entries(baseline.agents)) {
    for (const [name, blessed] of Object.entries(a.scenarios)) {
      const summary = report.scenarios.find((s) => s.agent === agent && s.scenario === name);
      scenarios.push(decideScenario(input, blessed, summary, agent, name));
    }
  }
  const drift: Drift = {
    baseline_file: input.baselineFile,
    blessed_at: baseline.blessed_at,
    tool_version: baseline.tool_version,
    alpha: input.rule.alpha,
    margin: input.rule.margin,
    max_calls: input.rule.maxCalls,
    scenarios,
  };
  const key = (s: { agent: string; scenario: string }) => `${s.agent}\u0000${s.scenario}`;
  const verdictOfScenario = new Map(scenarios.map((s) => [key(s), SCENARIO_VERDICT[s.verdict]]));
  const placed = new Set(report.scenarios.map(key));
  // A blessed scenario not placed (no longer declared, or its baseline too low to test) still
  // counts: its verdict is in the exit code and the counts, never left out as if it held.
  const unplaced: ScenarioSummary[] = scenarios
    .filter((s) => !placed.has(key(s)))
    .map((s) => ({
      agent: s.agent,
      scenario: s.scenario,
      version_id: s.version_id,
      verdict: SCENARIO_VERDICT[s.verdict],
      iterations: 0,
      passes: 0,
      min_pass: 0,
      pass_rate: null,
    }));
  return {
    ...report,
    kind: "drift",
    drift,
    scenarios: [
      ...report.scenarios.map((s) => ({ ...s, verdict: verdictOfScenario.get(key(s)) ?? s.verdict })),
      ...unplaced,
    ],
  };
}

/** Agent key → scenario name → hash, of the scenarios as declared now. */
export function scenarioHashes(scenarios: Planned[]): Map<string, Map<string, string>> {
  const hashes = new Map<string, Map<string, string>>();
  for (const { agent, scenario } of scenarios) {
    const of = hashes.get(agent) ?? new Map<string, string>();
    of.set(scenario.name, scenarioHash(scenario));
    hashes.set(agent, of);
  }
  return hashes;
}
