// What a call's events show, computed from the envelopes alone (a live call and a replayed
// recording go through the same code, so they reach the same verdicts): the transcript, when each
// entry happened, the call's latency from the events' own `created_at`, and what this tool's
// schemas did not recognise (drift between the service and the contract).
import type { EventEnvelope, Transcript } from "../api/index.ts";
import { TranscriptBuilder } from "../api/index.ts";
import { type CallerLine, isCallerLine } from "../caller/index.ts";
import { knownPayload } from "../contract/index.ts";
import type { CallLatency } from "../results/index.ts";

/** When an entry of the transcript appeared (and, for a tool call, returned), in ms from the call's start. */
export type EntryTime = { atMs: number | null; returnedAtMs: number | null };

export type EventsObserved = {
  transcript: Transcript;
  /** Parallel to `transcript.entries`. */
  entryTimes: EntryTime[];
  /** The user entries that are the caller's lines (matched in order by text), by index in the entries. */
  callerEntries: number[];
  latency: CallLatency;
};

const AGENT_RESPONSE = new Set(["agent.message.delta", "agent.message.completed"]);

function timeOf(envelope: EventEnvelope): number | null {
  const t = Date.parse(envelope.created_at);
  return Number.isFinite(t) ? t : null;
}

const elapsed = (from: number | null, to: number | null): number | null =>
  from === null || to === null ? null : Math.max(0, to - from);

/**
 * The transcript, entry times and latency of a call. The call's start is `conversation.started`
 * (else its first event); first response is the first agent message event after it; each user
 * turn's response latency runs to the next agent message event; a tool's round trip from
 * `agent.tool_call.created` to `returned` with the same call_id. A turn the scenario's caller
 * played (`callerLines`, matched in order by text) runs instead from the caller's send to the
 * agent's first word as this machine received them — what the caller waited, network included —
 * when both were seen; other turns keep the service's `created_at`.
 */
export function observeEvents(
  envelopes: readonly EventEnvelope[],
  callerLines: readonly CallerLine[] = [],
): EventsObserved {
  const builder = new TranscriptBuilder();
  const entryTimes: EntryTime[] = [];
  const callEntry = new Map<string, number>();
  const toolStarted = new Map<string, number | null>();
  const latency: CallLatency = { first_response_ms: null, response_ms: [], tool_ms: [] };
  const startEvent = envelopes.find((e) => e.payload?.type === "conversation.started") ?? envelopes[0];
  const start = startEvent ? timeOf(startEvent) : null;
  const seen = new Set<string>();
  let started = false;
  /** Turns waiting for the agent's answer: the service's time of the turn, or the caller's measured latency. */
  let waitingTurns: ({ at: number | null } | { measured: number })[] = [];
  let nextCallerLine = 0;
  const callerEntries: number[] = [];
  for (const envelope of envelopes) {
    const type = envelope.payload?.type;
    const at = timeOf(envelope);
    const before = entryTimes.length;
    if (builder.add(envelope) && addsEntry(envelope, seen))
      entryTimes.push({ atMs: elapsed(start, at), returnedAtMs: null });
    const after = entryTimes.length;
    if (envelope === startEvent) started = true;
    if (type === "user.message.received") {
      const line = callerLines[nextCallerLine];
      const text = (envelope.payload as { text?: unknown }).text;
      if (line && typeof text === "string" && isCallerLine(line, text)) {
        nextCallerLine++;
        if (after > before) callerEntries.push(before);
        const { sentAt, firstWordAt } = line;
        waitingTurns.push(firstWordAt === undefined ? { at } : { measured: Math.max(0, firstWordAt - sentAt) });
      } else waitingTurns.push({ at });
    }
    if (AGENT_RESPONSE.has(type)) {
      if (started && latency.first_response_ms === null) latency.first_response_ms = elapsed(start, at);
      for (const turn of waitingTurns) {
        const ms = "measured" in turn ? turn.measured : elapsed(turn.at, at);
        if (ms !== null) latency.response_ms.push(ms);
      }
      waitingTurns = [];
    }
    const callId = (envelope.payload as { call_id?: unknown }).call_id;
    if (typeof callId !== "string") continue;
    if (type === "agent.tool_call.created") {
      if (after > before) callEntry.set(callId, before);
      if (!toolStarted.has(callId)) toolStarted.set(callId, at);
    } else if (type === "agent.tool_call.returned") {
      if (after > before) callEntry.set(callId, before);
      const index = callEntry.get(callId);
      const time = index === undefined ? undefined : entryTimes[index];
      if (time && time.returnedAtMs === null) time.returnedAtMs = elapsed(start, at);
      if (toolStarted.has(callId)) {
        const ms = elapsed(toolStarted.get(callId) ?? null, at);
        if (ms !== null) latency.tool_ms.push(ms);
        toolStarted.delete(callId);
      }
    }
  }
  return { transcript: builder.transcript, entryTimes, callerEntries, latency };
}

/** Whether an event the transcript took starts a new entry (rather than updating a message or a call). */
function addsEntry(envelope: EventEnvelope, seen: Set<string>): boolean {
  const payload = envelope.payload as { type: string; generation_id?: unknown; call_id?: unknown };
  const key =
    payload.type === "agent.message.delta" || payload.type === "agent.message.completed"
      ? `g:${String(payload.generation_id)}`
      : payload.type === "agent.tool_call.created" || payload.type === "agent.tool_call.returned"
        ? `c:${String(payload.call_id)}`
        : undefined;
  if (key === undefined) return payload.type === "user.message.received" || payload.type === "server.error";
  if (seen.has(key)) return false;
  seen.add(key);
  return true;
}

/** Event types and fields this tool's schemas do not know, with how often each was seen. */
export type Drift = { eventTypes: Record<string, number>; fields: Record<string, number> };

const ENVELOPE_FIELDS = new Set(["id", "created_at", "payload"]);
const KNOWN_FIELDS: Map<string, Set<string>> = new Map(
  knownPayload.options.map((option) => {
    const shape = option.shape as Record<string, unknown> & { type: { value: string } };
    return [shape.type.value, new Set(Object.keys(shape))];
  }),
);

/** Adds what the envelopes show that the contract does not name to `drift`. */
export function addDrift(drift: Drift, envelopes: readonly EventEnvelope[]): Drift {
  const count = (record: Record<string, number>, key: string) => {
    record[key] = (record[key] ?? 0) + 1;
  };
  for (const envelope of envelopes) {
    for (const key of Object.keys(envelope)) if (!ENVELOPE_FIELDS.has(key)) count(drift.fields, `envelope.${key}`);
    const type = String(envelope.payload?.type);
    const known = KNOWN_FIELDS.get(type);
    if (!known) {
      count(drift.eventTypes, type);
      continue;
    }
    for (const key of Object.keys(envelope.payload)) if (!known.has(key)) count(drift.fields, `${type}.${key}`);
  }
  return drift;
}

/** The drift as lines for a reader; none when everything was recognised. */
export function driftLines(drift: Drift): string[] {
  const list = (record: Record<string, number>) =>
    Object.entries(record)
      .sort(([a], [b]) => a.localeCompare(b))
      .map(([key, n]) => `${key} (${n}×)`)
      .join(", ");
  const lines: string[] = [];
  if (Object.keys(drift.eventTypes).length > 0) lines.push(`event types not recognised: ${list(drift.eventTypes)}`);
  if (Object.keys(drift.fields).length > 0) lines.push(`fields not recognised: ${list(drift.fields)}`);
  return lines;
}
