// `agent-iac audit`: every conversation of the window grouped by the agent version that handled it
// (`agent_id`, a version id or a bare agent id: attribute.ts): the stack's current versions with
// their calls, older versions of the stack's agents still taking calls (traffic a replace did not
// move; named by key through the stack's update history, a `--baseline` versions file or a shared
// agent id), agent ids the stack never held (created elsewhere, or orphaned
// by an interrupted deploy), and current versions that took no calls.
import type { Client } from "../api/index.ts";
import { agentIdOf } from "../contract/index.ts";
import type { HeldAgent } from "../provider/index.ts";
import { type Attribution, attributor } from "./attribute.ts";
import { gatherWindow } from "./gather.ts";
import type { StackHistory } from "./history.ts";
import type { ReadCount, ResumeOptions } from "./read.ts";
import type { Window } from "./window.ts";

/**
 * `old_tests`: an older version whose calls in the window are all test calls (livemode: false, as
 * every smoke, comparison and behaviour-preview call agent-iac places is): no live traffic was
 * left on it, so it is not "still taking calls".
 */
type Category = "current" | "old" | "old_tests" | "unknown";

export type VersionRow = {
  agent_id: string;
  calls: number;
  live: number;
  test: number;
  category: Category;
  /** The stack's agent key it belongs to, when known. */
  key: string | null;
  /** Why it is in its category, in words. */
  note: string;
};

export type AuditResult = {
  stack: string;
  window: Window;
  current: VersionRow[];
  old: VersionRow[];
  /** Older versions that only test calls reached (agent-iac's own smoke and comparison calls among them). */
  oldTests: VersionRow[];
  unknown: VersionRow[];
  /** Current conversational versions without a call in the window. */
  idle: { key: string; version_id: string }[];
  reads: ReadCount[];
  history: { available: boolean; source: string };
  /** How the conversations' `agent_id`s were attributed to versions (attribute.ts). */
  attribution: Attribution;
};

export type AuditInput = {
  client: Client;
  stack: string;
  agents: Record<string, HeldAgent>;
  history: StackHistory;
  /** Key → old version id from a versions file (`--baseline`): the comparison base of the last update. */
  baselineFile?: Record<string, string> | undefined;
  window: Window;
  resume: ResumeOptions;
  now: Date;
};

/**
 * Which of the stack's agents, current or past, an agent id belongs to. An older version with no
 * live call (`liveCalls` false) took only test calls: `old_tests`, not still taking calls.
 */
export function classify(
  agentId: string,
  agents: Record<string, HeldAgent>,
  history: Pick<StackHistory, "past">,
  baselineFile: Record<string, string> = {},
  liveCalls = true,
): Pick<VersionRow, "category" | "key" | "note"> {
  const old = (key: string, why: string): Pick<VersionRow, "category" | "key" | "note"> =>
    liveCalls
      ? { category: "old", key, note: `old version of ${key} still taking calls${why}` }
      : {
          category: "old_tests",
          key,
          note: `old version of ${key} called only by test calls (livemode: false, as agent-iac's smoke and comparison calls are), no live traffic${why}`,
        };
  const all = Object.values(agents);
  const current = all.find((a) => a.version_id === agentId);
  if (current) return { category: "current", key: current.key, note: `current version of ${current.key}` };
  const sameId = all.find((a) => a.id === agentIdOf(agentId));
  if (sameId && !agentId.includes("@")) {
    return { category: "current", key: sameId.key, note: `${sameId.key}, unpinned (the released version)` };
  }
  const based = Object.entries(baselineFile).find(([, id]) => id === agentId || agentIdOf(id) === agentId);
  if (based) return old(based[0], " (its version before the release: --baseline)");
  const past = history.past.get(agentId) ?? history.past.get(agentIdOf(agentId));
  if (past) {
    if (past.from_outputs) {
      return old(past.key, " (its version before the last replace: the stack's previous_versions)");
    }
    const when = past.last_held_at
      ? ` (held until ${past.last_update === null ? "" : `update ${past.last_update}, `}${past.last_held_at})`
      : "";
    return old(past.key, when);
  }
  if (sameId) return old(sameId.key, " (same agent id)");
  return { category: "unknown", key: null, note: "not in this stack's outputs or history" };
}

export async function audit(input: AuditInput): Promise<AuditResult> {
  const reads: ReadCount[] = [];
  const attribute = attributor([
    ...Object.values(input.agents).map((a) => a.version_id),
    ...[...input.history.past.values()].map((p) => p.version_id),
    ...Object.values(input.baselineFile ?? {}),
  ]);
  const traffic = await gatherWindow(input.window, () => false, new Map(), {
    client: input.client,
    includeTestCalls: true,
    resume: input.resume,
    reads,
    now: input.now,
    versionOf: attribute.versionOf,
  });
  const rows: VersionRow[] = [...traffic.seen].map(([agentId, seen]) => ({
    agent_id: agentId,
    calls: seen.calls,
    live: seen.live,
    test: seen.calls - seen.live,
    ...classify(agentId, input.agents, input.history, input.baselineFile, seen.live > 0),
  }));
  rows.sort((a, b) => b.calls - a.calls || a.agent_id.localeCompare(b.agent_id));
  const idle = Object.values(input.agents)
    .filter((a) => a.kind === "conversational" && !traffic.seen.has(a.version_id))
    .map((a) => ({ key: a.key, version_id: a.version_id }));
  const unknown = rows.filter((r) => r.category === "unknown");
  return {
    stack: input.stack,
    window: input.window,
    current: rows.filter((r) => r.category === "current"),
    old: rows.filter((r) => r.category === "old"),
    oldTests: rows.filter((r) => r.category === "old_tests"),
    unknown,
    idle,
    reads,
    history: { available: input.history.available, source: input.history.source },
    attribution: attribute.counts,
  };
}
