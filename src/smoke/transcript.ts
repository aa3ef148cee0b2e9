// What a call showed, as data for the expectations and the reports: the client's transcript with
// tool-call arguments decoded, in arrival order. Rendering to text happens only for display (the
// reports' transcript and an assertion's context), never to decide anything.
import type { Transcript, TranscriptEntry, TranscriptToolCall } from "../api/index.ts";
import { entryLine } from "../render/index.ts";
import { callerTime, NOT_THE_CALLER } from "../results/index.ts";
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

/** Who said a user entry of a call that had a caller: its line, or not (the service's own turns). */
export function speakerOf(
  observed: { callerEntries?: readonly number[] | undefined },
  index: number,
): "caller" | "not_caller" | undefined {
  if (!observed.callerEntries) return undefined;
  return observed.callerEntries.includes(index) ? "caller" : "not_caller";
}

/**
 * The call's transcript as the reports show it (their transcript lines, an expectation's cited
 * lines): a line the scenario's caller said is `caller: … (at N s)`, another user line of a call
 * with a caller `user (not the caller): …`, the rest as `renderEntry`.
 */
export function displayLines(
  observed: {
    entries: readonly ObservedEntry[];
    entryTimes?: readonly EntryTime[] | undefined;
    callerEntries?: readonly number[] | undefined;
  },
  options: { times?: boolean } = {},
): string[] {
  return observed.entries.map((entry, i) => {
    const by = entry.kind === "user" ? speakerOf(observed, i) : undefined;
    if (by === undefined) return renderEntry(entry);
    const text = renderEntry(entry).replace(/^user: /, "");
    if (by === "not_caller") return `${NOT_THE_CALLER}: ${text}`;
    const at = options.times === false ? undefined : observed.entryTimes?.[i]?.atMs;
    return `caller: ${text}${at === null || at === undefined ? "" : ` ${callerTime(at)}`}`;
  });
}
