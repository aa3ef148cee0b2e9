// What a call showed, as data for the expectations and the reports: the client's transcript with
// tool-call arguments decoded, in arrival order. Rendering to text happens only for display (the
// reports' transcript and an assertion's context), never to decide anything.
import type { Transcript, TranscriptEntry, TranscriptToolCall } from "../api/index.ts";
import { entryLine } from "../render/index.ts";
import { callerTime } from "../report/index.ts";
import { decodeArguments } from "./matchers.ts";
import type { EntryTime } from "./observe.ts";

/** A tool call with its arguments decoded; `rawArguments` is what the service sent, when that differs. */
export type ObservedToolCall = TranscriptToolCall & { rawArguments?: unknown };

/** The client's transcript entry, with a tool call's arguments decoded. */
export type ObservedEntry = Exclude<TranscriptEntry, { kind: "tool" }> | { kind: "tool"; call: ObservedToolCall };

function observedToolCall(call: TranscriptToolCall): ObservedToolCall {
  const decoded = decodeArguments(call.arguments);
  return decoded === call.arguments ? { ...call } : { ...call, arguments: decoded, rawArguments: call.arguments };
}

/** The transcript's entries, in arrival order, as data. */
export function observedEntries(transcript: Transcript): { entries: ObservedEntry[]; toolCalls: ObservedToolCall[] } {
  const toolCalls = transcript.toolCalls.map(observedToolCall);
  const calls = new Map(toolCalls.map((c) => [c.callId, c]));
  const entries = transcript.entries.map(
    (entry): ObservedEntry =>
      entry.kind === "tool"
        ? { kind: "tool", call: calls.get(entry.call.callId) ?? observedToolCall(entry.call) }
        : entry,
  );
  return { entries, toolCalls };
}

/** One entry as a line of text: "agent: …", "user: …", "tool name({…}) → …", "error: …". */
export const renderEntry: (entry: ObservedEntry) => string = entryLine;

/**
 * The call's transcript as the reports show it (their transcript lines, an expectation's cited
 * lines): a line the scenario's caller said is `caller: … (at N s)`, the rest as `renderEntry`.
 */
export function displayLines(observed: {
  entries: readonly ObservedEntry[];
  entryTimes?: readonly EntryTime[] | undefined;
  byCaller?: boolean | undefined;
}): string[] {
  return observed.entries.map((entry, i) => {
    if (!observed.byCaller || entry.kind !== "user") return renderEntry(entry);
    const at = observed.entryTimes?.[i]?.atMs;
    return `caller: ${renderEntry(entry).replace(/^user: /, "")}${at === null || at === undefined ? "" : ` ${callerTime(at)}`}`;
  });
}
