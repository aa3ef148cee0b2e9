// `agent-iac watch`: each conversational agent's current version against its previous one on live
// traffic. The previous version comes from a versions file (as `smoke --compare` takes), else the
// stack's update history, else the traffic itself (another version of the same agent id). The
// baseline is read over the window of equal length just before (or the same window, where both
// versions take calls side by side). A figure that got worse by more than its threshold fails.
import type { Client } from "../api/index.ts";
import { agentIdOf, pinnedVersion } from "../contract/index.ts";
import type { HeldAgent } from "../provider/index.ts";
import { pct } from "../results/index.ts";
import { type Attribution, attributor } from "./attribute.ts";
import { type Figures, figures, type Share, Tally } from "./figures.ts";
import { gatherFeedbacks, gatherProcedures, gatherWindow, type WindowTraffic } from "./gather.ts";
import { previousVersionOf, type StackHistory } from "./history.ts";
import type { ReadCount, ResumeOptions } from "./read.ts";
import { previousWindow, type Window } from "./window.ts";

type BaselineSource = "versions file" | "stack history" | "traffic";
export type Baseline = { version_id: string; source: BaselineSource; postprocess_agents?: string[] };

export type Thresholds = {
  /** Largest allowed increase of the failure rate, as a fraction (0.05 = 5 points). */
  maxFailureRateIncrease: number;
  maxNegativeFeedbackIncrease: number;
  /** Fewer finished calls than this on a side: no verdict ("not enough traffic"). */
  minCalls: number;
};

export type WatchInput = {
  client: Client;
  stack: string;
  agents: Record<string, HeldAgent>;
  /** Key → old version id from a versions file. */
  baselineFile?: Record<string, string> | undefined;
  history: StackHistory;
  window: Window;
  baselineWindow: "previous" | "same";
  includeTestCalls: boolean;
  serviceId?: string | undefined;
  negativeRatings: ReadonlySet<string>;
  thresholds: Thresholds;
  resume: ResumeOptions;
  now: Date;
};

type Breach = { figure: string; current: Share; previous: Share; increase: number; allowed: number };

type AgentStatus = "ok" | "regressed" | "not_enough_traffic" | "not_enough_baseline_traffic" | "no_baseline";

export type AgentWatch = {
  key: string;
  version_id: string;
  baseline: Baseline | null;
  current: Figures;
  previous: Figures | null;
  status: AgentStatus;
  breaches: Breach[];
  /** What the status means for this agent, in a sentence. */
  message: string;
  /** How to roll back (with a baseline to go back to). */
  rollback: string | null;
};

export type WatchResult = {
  stack: string;
  window: Window;
  baseline_window: Window;
  agents: AgentWatch[];
  reads: ReadCount[];
  test_calls_excluded: number;
  feedback_read: boolean;
  /** How the conversations' `agent_id`s were attributed to versions (attribute.ts). */
  attribution: Attribution;
  notes: string[];
};

const versionNumber = (id: string) => pinnedVersion(id)?.version ?? Number.NaN;
const points = (fraction: number) => `${(fraction * 100).toFixed(1)} points`;

/** Another version of the same agent id seen in the baseline window: the highest one below the current. */
function baselineFromTraffic(agent: HeldAgent, traffic: WindowTraffic): Baseline | undefined {
  const current = versionNumber(agent.version_id);
  const others = [...traffic.tallies.keys()].filter((id) => agentIdOf(id) === agent.id && id !== agent.version_id);
  const below = others.filter((id) => versionNumber(id) < current).sort((a, b) => versionNumber(b) - versionNumber(a));
  const chosen = below[0] ?? others.sort((a, b) => versionNumber(b) - versionNumber(a))[0];
  return chosen ? { version_id: chosen, source: "traffic" } : undefined;
}

function explicitBaseline(input: WatchInput, agent: HeldAgent): Baseline | undefined {
  const fromFile = input.baselineFile?.[agent.key];
  if (fromFile && fromFile !== agent.version_id) return { version_id: fromFile, source: "versions file" };
  const past = previousVersionOf(input.history, agent.key, agent.version_id);
  if (past)
    return { version_id: past.version_id, source: "stack history", postprocess_agents: past.postprocess_agents };
  return undefined;
}

function breachOf(figure: string, current: Share, previous: Share, allowed: number): Breach | undefined {
  if (current.value === null || previous.value === null) return undefined;
  const increase = current.value - previous.value;
  return increase > allowed + 1e-9 ? { figure, current, previous, increase, allowed } : undefined;
}

function rollbackHint(key: string, baseline: Baseline): string {
  return (
    `to roll back ${key}: send its calls to ${baseline.version_id} again (the old version still exists on the service), ` +
    `or revert the change to agents/${key}.yaml and run \`pulumi up\` (a new agent with the old config)`
  );
}

/** The verdict of one agent from its figures. */
export function trafficVerdict(
  agent: { key: string; version_id: string },
  current: Figures,
  previous: Figures | null,
  baseline: Baseline | null,
  t: Thresholds,
): Pick<AgentWatch, "status" | "breaches" | "message"> {
  const { key, version_id } = agent;
  if (current.finished < t.minCalls) {
    const message = `${key}: not enough traffic on ${version_id}: ${current.finished} finished call(s) in the window, fewer than --min-calls ${t.minCalls}`;
    return { status: "not_enough_traffic", breaches: [], message };
  }
  if (!baseline || !previous) {
    return { status: "no_baseline", breaches: [], message: `${key}: no previous version to compare with` };
  }
  if (previous.finished < t.minCalls) {
    const message = `${key}: not enough traffic on the previous version ${baseline.version_id}: ${previous.finished} finished call(s), fewer than --min-calls ${t.minCalls}`;
    return { status: "not_enough_baseline_traffic", breaches: [], message };
  }
  const breaches = [
    breachOf("failure rate", current.failure_rate, previous.failure_rate, t.maxFailureRateIncrease),
    breachOf("negative feedback", current.negative_feedback, previous.negative_feedback, t.maxNegativeFeedbackIncrease),
  ].filter((b): b is Breach => b !== undefined);
  if (breaches.length === 0)
    return { status: "ok", breaches, message: `${key}: ${version_id} does as well as ${baseline.version_id}` };
  const said = breaches.map(
    (b) =>
      `${b.figure} ${pct(b.current)} on ${version_id} vs ${pct(b.previous)} on ${baseline.version_id}: ` +
      `up ${points(b.increase)}, more than the allowed ${points(b.allowed)}`,
  );
  return { status: "regressed", breaches, message: `${key}: ${said.join("; ")}` };
}

/** "25.0 % (50 of 200 calls)". */

export async function watch(input: WatchInput): Promise<WatchResult> {
  const conversational = Object.values(input.agents).filter((a) => a.kind === "conversational");
  const explicit = new Map(conversational.map((a) => [a.key, explicitBaseline(input, a)]));
  const bare = new Set([
    ...conversational.map((a) => a.id),
    ...[...explicit.values()].flatMap((b) => (b ? [agentIdOf(b.version_id)] : [])),
  ]);
  const wanted = (agentId: string) => bare.has(agentIdOf(agentId));
  const reads: ReadCount[] = [];
  const attribute = attributor([
    ...Object.values(input.agents).map((a) => a.version_id),
    ...[...input.history.past.values()].map((p) => p.version_id),
    ...Object.values(input.baselineFile ?? {}),
  ]);
  const gather = {
    client: input.client,
    includeTestCalls: input.includeTestCalls,
    resume: input.resume,
    reads,
    now: input.now,
    versionOf: attribute.versionOf,
  };
  const byConversation = new Map<string, Tally>();
  const current = await gatherWindow(input.window, wanted, byConversation, gather);
  const baselineWindow = input.baselineWindow === "same" ? input.window : previousWindow(input.window);
  const before =
    input.baselineWindow === "same" ? current : await gatherWindow(baselineWindow, wanted, byConversation, gather);
  const baselines = new Map(conversational.map((a) => [a.key, explicit.get(a.key) ?? baselineFromTraffic(a, before)]));
  const span = { from: baselineWindow.from, to: input.window.to };
  const links = conversational.flatMap((a) => [
    ...a.postprocess_agents,
    ...(baselines.get(a.key)?.postprocess_agents ?? []),
  ]);
  await gatherProcedures(links, span, byConversation, gather);
  if (input.serviceId) await gatherFeedbacks(input.serviceId, span, byConversation, input.negativeRatings, gather);

  const agents = conversational.map((agent): AgentWatch => {
    const baseline = baselines.get(agent.key) ?? null;
    const now = figures(current.tallies.get(agent.version_id) ?? new Tally());
    const then = baseline ? figures(before.tallies.get(baseline.version_id) ?? new Tally()) : null;
    const verdict = trafficVerdict(agent, now, then, baseline, input.thresholds);
    return {
      key: agent.key,
      version_id: agent.version_id,
      baseline,
      current: now,
      previous: then,
      ...verdict,
      rollback: baseline ? rollbackHint(agent.key, baseline) : null,
    };
  });
  const notes: string[] = [];
  if (!input.serviceId) notes.push("negative feedback not measured: GET /feedbacks needs --service-id");
  if (!input.history.available) notes.push(`stack history: ${input.history.source}`);
  const excluded = current.testCallsExcluded + (before === current ? 0 : before.testCallsExcluded);
  return {
    stack: input.stack,
    window: input.window,
    baseline_window: baselineWindow,
    agents,
    reads,
    test_calls_excluded: excluded,
    feedback_read: Boolean(input.serviceId),
    attribution: attribute.counts,
    notes,
  };
}
