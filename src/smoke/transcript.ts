// What a call showed, as data for the expectations and the reports: the client's transcript with
// tool-call arguments decoded, in arrival order. Rendering to text happens only for display (the
// reports' transcript and an assertion's context), never to decide anything.
import type { Transcript, TranscriptToolCall } from "../api/index.ts";
import { decodeArguments } from "./matchers.ts";

/** A tool call with its arguments decoded; `rawArguments` is what the service sent, when that differs. */
export type ObservedToolCall = TranscriptToolCall & { rawArguments?: unknown };

export type ObservedEntry =
  | { kind: "agent"; text: string; complete: boolean }
  | { kind: "user"; text: string }
  | { kind: "tool"; call: ObservedToolCall }
  | { kind: "error"; error: unknown };

function observedToolCall(call: TranscriptToolCall): ObservedToolCall {
  const decoded = decodeArguments(call.arguments);
  return decoded === call.arguments ? { ...call } : { ...call, arguments: decoded, rawArguments: call.arguments };
}

/** The transcript's entries, in arrival order, as data. */
export function observedEntries(transcript: Transcript): { entries: ObservedEntry[]; toolCalls: ObservedToolCall[] } {
  const messages = new Map(transcript.messages.map((m) => [m.generationId, m]));
  const toolCalls = transcript.toolCalls.map(observedToolCall);
  const calls = new Map(toolCalls.map((c) => [c.callId, c]));
  const entries = transcript.entries.flatMap((entry): ObservedEntry[] => {
    switch (entry.kind) {
      case "agent": {
        const message = messages.get(entry.generationId);
        return message ? [{ kind: "agent", text: message.text, complete: message.complete }] : [];
      }
      case "tool": {
        const call = calls.get(entry.callId);
        return call ? [{ kind: "tool", call }] : [];
      }
      case "user":
        return [{ kind: "user", text: entry.text }];
      case "error":
        return [{ kind: "error", error: entry.error }];
      default:
        return [];
    }
  });
  return { entries, toolCalls };
}

const json = (value: unknown) => (value === undefined ? "" : JSON.stringify(value));

/** One entry as a line of text: "agent: …", "user: …", "tool name({…}) → …", "error: …". */
export function renderEntry(entry: ObservedEntry): string {
  switch (entry.kind) {
    case "agent":
      return `agent: ${entry.text}${entry.complete ? "" : " …"}`;
    case "user":
      return `user: ${entry.text}`;
    case "error":
      return `error: ${json(entry.error ?? null)}`;
    case "tool": {
      const call = entry.call;
      const head = `tool ${call.name}(${json(call.arguments ?? {})})`;
      if (!call.returned) return `${head} …`;
      if (call.error !== undefined && call.error !== null) return `${head} → error ${json(call.error)}`;
      return `${head} → ${call.result === undefined ? "(no result)" : json(call.result)}`;
    }
  }
}
