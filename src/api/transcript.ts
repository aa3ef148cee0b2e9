// The transcript of a conversation, built from its events by a pure reducer following the
// interface's rules: deltas are concatenated per generation_id into an incomplete message,
// `agent.message.completed` makes it complete with its `text`, tool calls are joined by call_id,
// other types are ignored. User turns, `server.error`s and the end are kept as well (smoke checks
// use them). Robust to a completed message without deltas, a returned call without its created
// event, malformed payloads and unknown types (the transcript is returned unchanged).
import { type EventEnvelope, knownPayload } from "./schemas.ts";

export type TranscriptMessage = { generationId: string; text: string; complete: boolean };
export type TranscriptToolCall = {
  callId: string;
  name: string;
  arguments?: unknown;
  result?: unknown;
  error?: unknown;
  returned: boolean;
};
export type TranscriptEntry =
  | { kind: "agent"; generationId: string; line: string }
  | { kind: "user"; text: string; line: string }
  | { kind: "tool"; callId: string; line: string }
  | { kind: "error"; error: unknown; line: string };

export type Transcript = {
  /** Agent messages in order of their first event. */
  readonly messages: readonly TranscriptMessage[];
  readonly userMessages: readonly string[];
  readonly toolCalls: readonly TranscriptToolCall[];
  /** The `error` of every `server.error` event. */
  readonly errors: readonly unknown[];
  readonly started: boolean;
  readonly ended: boolean;
  /** Everything above in arrival order, as printable lines ("agent: …", "user: …", "tool …"). */
  readonly entries: readonly TranscriptEntry[];
};

export function emptyTranscript(): Transcript {
  return { messages: [], userMessages: [], toolCalls: [], errors: [], started: false, ended: false, entries: [] };
}

const json = (value: unknown) => (value === undefined ? "" : JSON.stringify(value));

function messageLine(message: TranscriptMessage): string {
  return `agent: ${message.text}${message.complete ? "" : " …"}`;
}

function toolLine(call: TranscriptToolCall): string {
  const head = `tool ${call.name}(${json(call.arguments ?? {})})`;
  if (!call.returned) return `${head} …`;
  if (call.error !== undefined && call.error !== null) return `${head} → error ${json(call.error)}`;
  return `${head} → ${call.result === undefined ? "(no result)" : json(call.result)}`;
}

function replaceAt<T>(items: readonly T[], index: number, value: T): T[] {
  const copy = items.slice();
  copy[index] = value;
  return copy;
}

function upsertMessage(
  t: Transcript,
  generationId: string,
  next: (old?: TranscriptMessage) => TranscriptMessage,
): Transcript {
  const index = t.messages.findIndex((m) => m.generationId === generationId);
  const old = index >= 0 ? t.messages[index] : undefined;
  const message = next(old);
  if (old && old.text === message.text && old.complete === message.complete) return t;
  const entry: TranscriptEntry = { kind: "agent", generationId, line: messageLine(message) };
  if (index < 0) return { ...t, messages: [...t.messages, message], entries: [...t.entries, entry] };
  const entryIndex = t.entries.findIndex((e) => e.kind === "agent" && e.generationId === generationId);
  return { ...t, messages: replaceAt(t.messages, index, message), entries: replaceAt(t.entries, entryIndex, entry) };
}

function upsertCall(t: Transcript, callId: string, next: (old?: TranscriptToolCall) => TranscriptToolCall): Transcript {
  const index = t.toolCalls.findIndex((c) => c.callId === callId);
  const call = next(index >= 0 ? t.toolCalls[index] : undefined);
  const entry: TranscriptEntry = { kind: "tool", callId, line: toolLine(call) };
  if (index < 0) return { ...t, toolCalls: [...t.toolCalls, call], entries: [...t.entries, entry] };
  const entryIndex = t.entries.findIndex((e) => e.kind === "tool" && e.callId === callId);
  return { ...t, toolCalls: replaceAt(t.toolCalls, index, call), entries: replaceAt(t.entries, entryIndex, entry) };
}

/** The transcript after one more event. Pure: the given transcript is not modified. */
export function reduceTranscript(transcript: Transcript, envelope: Pick<EventEnvelope, "payload">): Transcript {
  const parsed = knownPayload.safeParse(envelope?.payload);
  if (!parsed.success) return transcript;
  const payload = parsed.data;
  switch (payload.type) {
    case "agent.message.delta":
      return upsertMessage(transcript, payload.generation_id, (old) =>
        // A delta after the completed event does not change the final text.
        old?.complete
          ? old
          : { generationId: payload.generation_id, text: (old?.text ?? "") + payload.text_delta, complete: false },
      );
    case "agent.message.completed":
      return upsertMessage(transcript, payload.generation_id, () => ({
        generationId: payload.generation_id,
        text: payload.text,
        complete: true,
      }));
    case "agent.tool_call.created":
      return upsertCall(transcript, payload.call_id, (old) =>
        old?.returned
          ? { ...old, arguments: old.arguments ?? payload.arguments }
          : { callId: payload.call_id, name: payload.name, arguments: payload.arguments, returned: false },
      );
    case "agent.tool_call.returned":
      return upsertCall(transcript, payload.call_id, (old) => ({
        callId: payload.call_id,
        name: payload.name || old?.name || "",
        arguments: payload.arguments ?? old?.arguments,
        ...(payload.result === undefined ? {} : { result: payload.result }),
        ...(payload.error === undefined ? {} : { error: payload.error }),
        returned: true,
      }));
    case "user.message.received":
      return {
        ...transcript,
        userMessages: [...transcript.userMessages, payload.text],
        entries: [...transcript.entries, { kind: "user", text: payload.text, line: `user: ${payload.text}` }],
      };
    case "server.error":
      return {
        ...transcript,
        errors: [...transcript.errors, payload.error ?? null],
        entries: [
          ...transcript.entries,
          { kind: "error", error: payload.error ?? null, line: `error: ${json(payload.error ?? null)}` },
        ],
      };
    case "conversation.started":
      return transcript.started ? transcript : { ...transcript, started: true };
    case "conversation.ended":
      return transcript.ended ? transcript : { ...transcript, ended: true };
    default:
      return transcript;
  }
}
