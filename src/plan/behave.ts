// The behaviour preview of `plan --behave`: a replaced conversational agent whose change is
// confined to `config` has its smoke scenarios played against the version the stack holds now,
// with every changed top-level config section sent whole as `override_config` (the service does
// not document its merge rules, so no section is sent in part) and `livemode: false`. Nothing is
// created: a conversation is the only thing a preview asks for. Everything else that changes is
// named with the reason it cannot be previewed.

import type { AgentDefinition } from "../definitions/index.ts";
import type { HeldAgent } from "../provider/index.ts";
import {
  type AgentPlan,
  type BehaveSummary,
  type BehaviourScenario,
  evaluated,
  type Plan,
  type Report,
  runReport,
  type UnmetExpectation,
} from "../results/index.ts";
import { callResult, type PlannedCall, planCalls, type ScenarioResult, scenarioSummaries } from "../smoke/index.ts";

/** The request body the preview would send (before) and proposes (after), per agent key. */
export type PlanInputs = Map<string, { before: Record<string, unknown>; after: Record<string, unknown> }>;

export type BehaviourTarget = {
  agent: string;
  versionId: string;
  sections: string[];
  calls: PlannedCall[];
};

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value);
const same = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b);

/**
 * Which changed agents can be previewed (with the calls to place) and why the others cannot.
 * Pure: decides from the plan, the proposed inputs, the agent files and the stack's versions.
 */
export function behaviourTargets(
  plan: Plan,
  inputs: PlanInputs,
  definitions: AgentDefinition[],
  held: Record<string, HeldAgent>,
): { targets: BehaviourTarget[]; skipped: Map<string, string> } {
  const targets: BehaviourTarget[] = [];
  const skipped = new Map<string, string>();
  for (const agent of plan.agents) {
    if (agent.action === "unchanged" || agent.action === "remove") continue;
    const decision = decide(agent, inputs.get(agent.agent), definitions, held);
    if (typeof decision === "string") {
      skipped.set(agent.agent, decision);
      continue;
    }
    const versionId = held[agent.agent]?.version_id as string;
    // `live: true` only lets planCalls accept a scenario written with livemode: true; the call
    // itself is a test call (`live: false` below).
    const calls = planCalls(definitions, held, { agents: [agent.agent], live: true }).map(
      (call): PlannedCall => ({ ...call, live: false, overrideConfig: decision.override }),
    );
    targets.push({ agent: agent.agent, versionId, sections: Object.keys(decision.override), calls });
  }
  return { targets, skipped };
}

function decide(
  agent: AgentPlan,
  inputs: { before: Record<string, unknown>; after: Record<string, unknown> } | undefined,
  definitions: AgentDefinition[],
  held: Record<string, HeldAgent>,
): string | { override: Record<string, unknown> } {
  if (agent.kind === "procedural") {
    return "procedural agent: its effect shows through the conversational agents' `procedures` expectations only after deploy";
  }
  if (agent.action === "create") return "new agent: nothing is deployed to call yet";
  const outside = [...new Set(agent.fields.map((f) => f.path.split(".")[0] ?? f.path))].filter((p) => p !== "config");
  if (outside.includes("postprocess_agents")) {
    return "its linked procedural agents (`postprocess_agents`) change: their procedures run only after deploy";
  }
  if (outside.length > 0) {
    return `${outside.map((p) => `\`${p}\``).join(" and ")} change${outside.length > 1 ? "" : "s"}: a conversation cannot override ${outside.length > 1 ? "them" : "it"}`;
  }
  const removed = agent.fields.filter((f) => f.after === undefined).map((f) => f.path);
  if (removed.length > 0) {
    return `${removed.map((p) => `\`${p}\``).join(", ")} removed: override_config can add and change fields, not remove them`;
  }
  const definition = definitions.find((d) => d.key === agent.agent);
  if (!definition?.smoke.length) return "no smoke scenarios";
  const versionId = held[agent.agent]?.version_id;
  if (!versionId) return "no version of it in the stack's state to call";
  const before = isObject(inputs?.before.config) ? inputs.before.config : {};
  const after = isObject(inputs?.after.config) ? inputs.after.config : undefined;
  if (!after) return "the proposed config is not known before apply";
  const override: Record<string, unknown> = {};
  for (const [section, value] of Object.entries(after)) {
    if (!same(before[section], value)) override[section] = value;
  }
  if (Object.keys(override).length === 0) return "no config change to preview";
  return { override };
}

/** Puts each agent's behaviour under it in the plan and the totals on the plan (both mutated). */
export function attachBehaviour(
  plan: Plan,
  targets: BehaviourTarget[],
  skipped: Map<string, string>,
  results: ScenarioResult[],
): Plan {
  const byAgent = new Map(plan.agents.map((a) => [a.agent, a]));
  for (const [agent, reason] of skipped) {
    const entry = byAgent.get(agent);
    if (entry) entry.behaviour = { previewed: false, reason };
  }
  const summary: BehaveSummary = {
    previewed: targets.map((t) => t.agent),
    not_previewed: [...skipped].map(([agent, reason]) => ({ agent, reason })),
    scenarios: 0,
    passed: 0,
    failed: 0,
    errors: 0,
  };
  // Verdicts under each scenario's threshold (min_pass, latency bounds), as smoke judges them.
  const verdicts = new Map(scenarioSummaries(results).map((v) => [`${v.agent}\u0000${v.scenario}`, v.verdict]));
  for (const target of targets) {
    const scenarios = scenarioResults(
      results.filter((r) => r.agent === target.agent),
      (scenario) => verdicts.get(`${target.agent}\u0000${scenario}`),
    );
    const entry = byAgent.get(target.agent);
    const passed = scenarios.filter((s) => s.status === "passed").length;
    const notRun = scenarios.filter((s) => s.status === "not_run").length;
    // A scenario that could not complete is an error, not a failure (as on every surface).
    const errors = scenarios.filter((s) => s.status === "error").length;
    // An inconclusive scenario (its calls decided nothing) is neither a pass nor a failure.
    const inconclusive = scenarios.filter((s) => s.status === "inconclusive").length;
    if (entry) {
      entry.behaviour = {
        previewed: true,
        version_id: target.versionId,
        override_sections: target.sections,
        passed,
        // A scenario none of whose calls was placed neither passed nor failed.
        failed: scenarios.length - passed - notRun - errors - inconclusive,
        ...(errors > 0 ? { errors } : {}),
        ...(inconclusive > 0 ? { inconclusive } : {}),
        ...(notRun > 0 ? { not_run: notRun } : {}),
        scenarios,
      };
    }
    summary.scenarios += scenarios.length;
    summary.passed += passed;
    summary.failed += scenarios.filter((s) => s.status === "failed").length;
    summary.errors += errors;
    if (notRun > 0) summary.not_run = (summary.not_run ?? 0) + notRun;
    if (inconclusive > 0) summary.inconclusive = (summary.inconclusive ?? 0) + inconclusive;
  }
  plan.behave = summary;
  return plan;
}

/** One entry per scenario over its iterations: passed when its verdict passed (a flaky one met its threshold). */
function scenarioResults(
  results: ScenarioResult[],
  verdictOf: (scenario: string) => string | undefined,
): BehaviourScenario[] {
  const byScenario = new Map<string, ScenarioResult[]>();
  for (const r of results) byScenario.set(r.scenario, [...(byScenario.get(r.scenario) ?? []), r]);
  return [...byScenario].map(([scenario, calls]) => {
    const passes = calls.filter((c) => c.outcome.kind === "passed").length;
    const errored = calls.find((c) => !evaluated(c.outcome.kind));
    const verdict = verdictOf(scenario) ?? (errored ? "error" : "failed");
    const unmet = new Map<string, UnmetExpectation>();
    for (const call of calls) {
      for (const a of call.assertions.filter((x) => !x.passed)) {
        if (!unmet.has(a.description)) {
          unmet.set(a.description, { description: a.description, detail: a.detail ?? null, context: a.context ?? [] });
        }
      }
      if (call.outcome.kind === "failed" && call.assertions.length === 0) {
        unmet.set("nothing was checked", {
          description: "nothing was checked",
          detail: "the scenario evaluated no assertion",
          context: [],
        });
      }
    }
    return {
      scenario,
      // The scenario's verdict under its threshold, as every report counts it (a flaky one passed).
      status: behaviourStatus(verdict),
      iterations: calls.length,
      passes,
      conversation_ids: calls.flatMap((c) => (c.conversationId ? [c.conversationId] : [])),
      unmet: [...unmet.values()],
      error: errored?.error ?? null,
    };
  });
}

/** A previewed scenario's status from its verdict: a flaky one passed; one whose calls were never placed did not run; an inconclusive one neither passed nor failed. */
function behaviourStatus(verdict: string): BehaviourScenario["status"] {
  if (verdict === "passed" || verdict === "flaky") return "passed";
  if (verdict === "error" || verdict === "not_run" || verdict === "inconclusive") return verdict;
  return "failed";
}

/** The behaviour preview as the shared JSON report (kind "behave"), for the HTML report and scripts. */
export function behaveReport(plan: Plan, targets: BehaviourTarget[], results: ScenarioResult[]): Report {
  const notes = [
    ...targets.map(
      (t) =>
        `${t.agent}: played against ${t.versionId} with the proposed config sections ${t.sections.join(", ")} as override_config (test calls)`,
    ),
    ...(plan.behave?.not_previewed ?? []).map(({ agent, reason }) => `${agent}: not previewed: ${reason}`),
  ];
  return runReport({
    kind: "behave",
    stack: plan.stack,
    versions: Object.fromEntries(targets.map((t) => [t.agent, t.versionId])),
    scenarios: scenarioSummaries(results),
    // A preview's calls are test calls whatever the scenario says.
    results: results.map((r) => ({ ...callResult(r), livemode: false })),
    notes,
  });
}
