// Reading the traffic of some agent versions over windows: conversations (by `created_at` filters),
// then the feedbacks and procedures that join them by `conversation_id`. Only the versions asked
// for are tallied (plus, per window, a call count of every version seen), so memory grows with
// the calls of those versions, not with the whole account's traffic.
import type { Client } from "../api/index.ts";
import type { Conversation, Feedback, Procedure } from "../contract/index.ts";
import { Tally } from "./figures.ts";
import { type ReadCount, type ResumeOptions, readAll } from "./read.ts";
import { createdIn, type Window } from "./window.ts";

/** Feedback is given after the call, procedures run after it: read them this long past the window. */
const FEEDBACK_GRACE_MS = 24 * 3_600_000;
const PROCEDURE_GRACE_MS = 3_600_000;

export type WindowTraffic = {
  window: Window;
  /** Version id (as attributed: attribute.ts) → tally, for the versions asked for. */
  tallies: Map<string, Tally>;
  /** Every version id (as attributed) seen in the window → its calls (live and test). */
  seen: Map<string, { calls: number; live: number }>;
  /** Test calls (livemode: false) left out. */
  testCallsExcluded: number;
};

export type GatherOptions = {
  client: Client;
  includeTestCalls: boolean;
  resume: ResumeOptions;
  reads: ReadCount[];
  now: Date;
  /** The version a conversation's `agent_id` stands for (attribute.ts). */
  versionOf: (agentId: string) => string;
};

const iso = (d: Date) => d.toISOString().replace(/:\d{2}\.\d{3}Z$/, "Z");

/** The conversations of a window, tallied for the version ids `wanted` says yes to. */
export async function gatherWindow(
  window: Window,
  wanted: (agentId: string) => boolean,
  byConversation: Map<string, Tally>,
  options: GatherOptions,
): Promise<WindowTraffic> {
  const traffic: WindowTraffic = { window, tallies: new Map(), seen: new Map(), testCallsExcluded: 0 };
  const count: ReadCount = {
    what: `GET /conversations (created ${iso(window.from)} … ${iso(window.to)})`,
    pages: 0,
    items: 0,
    resumed: 0,
  };
  options.reads.push(count);
  const query = createdIn(window);
  await readAll<Conversation>(
    (cursor) =>
      options.client.conversations.list({ ...query, ...(cursor ? { cursor } : {}) }, { signal: options.resume.signal }),
    count,
    (c) => {
      const versionId = options.versionOf(c.agent_id);
      const seen = traffic.seen.get(versionId) ?? { calls: 0, live: 0 };
      seen.calls++;
      if (c.livemode) seen.live++;
      traffic.seen.set(versionId, seen);
      if (!c.livemode && !options.includeTestCalls) {
        traffic.testCallsExcluded++;
        return;
      }
      if (!wanted(versionId)) return;
      const tally = traffic.tallies.get(versionId) ?? new Tally();
      traffic.tallies.set(versionId, tally);
      tally.addConversation(c);
      byConversation.set(c.id, tally);
    },
    options.resume,
  );
  return traffic;
}

/** The upper bound of a late read: the window's end plus the grace, or none when that is still ahead. */
function lateEnd(window: Window, graceMs: number, now: Date): string | undefined {
  const end = window.to.getTime() + graceMs;
  return end > now.getTime() ? undefined : new Date(end).toISOString();
}

/** Feedback on the tallied conversations (GET /feedbacks needs the service instance's id). */
export async function gatherFeedbacks(
  serviceId: string,
  span: Window,
  byConversation: Map<string, Tally>,
  negativeRatings: ReadonlySet<string>,
  options: GatherOptions,
): Promise<void> {
  const lt = lateEnd(span, FEEDBACK_GRACE_MS, options.now);
  const query = {
    service_id: serviceId,
    created_at_gte: span.from.toISOString(),
    ...(lt ? { created_at_lt: lt } : {}),
  };
  const count: ReadCount = { what: `GET /feedbacks (from ${iso(span.from)})`, pages: 0, items: 0, resumed: 0 };
  options.reads.push(count);
  await readAll<Feedback>(
    (cursor) =>
      options.client.feedbacks.list({ ...query, ...(cursor ? { cursor } : {}) }, { signal: options.resume.signal }),
    count,
    (f) => byConversation.get(f.conversation_id)?.addFeedback(f, negativeRatings),
    options.resume,
  );
}

/** The procedures of the linked procedural agents, joined to the tallied conversations. */
export async function gatherProcedures(
  proceduralIds: Iterable<string>,
  span: Window,
  byConversation: Map<string, Tally>,
  options: GatherOptions,
): Promise<void> {
  const lt = lateEnd(span, PROCEDURE_GRACE_MS, options.now);
  for (const agentId of new Set(proceduralIds)) {
    const query = { agent_id: agentId, created_at_gte: span.from.toISOString(), ...(lt ? { created_at_lt: lt } : {}) };
    const count: ReadCount = {
      what: `GET /procedures (agent_id ${agentId}, from ${iso(span.from)})`,
      pages: 0,
      items: 0,
      resumed: 0,
    };
    options.reads.push(count);
    await readAll<Procedure>(
      (cursor) =>
        options.client.procedures.list({ ...query, ...(cursor ? { cursor } : {}) }, { signal: options.resume.signal }),
      count,
      (p) => byConversation.get(p.conversation_id)?.addProcedure(p),
      options.resume,
    );
  }
}
