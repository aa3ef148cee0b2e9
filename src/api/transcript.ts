// The transcript of a conversation as data, built from its events following the interface's rules:
// deltas are concatenated per generation_id into an incomplete message, `agent.message.completed`
// makes it complete with its `text`, tool calls are joined by call_id, other types are ignored.
// User turns, `server.error`s and the end are kept as well (smoke checks use them). Robust to a
// completed message without deltas, a returned call without its created event, malformed payloads
// and unknown types (nothing changes). Rendering it is the commands' business.
import { type EventEnvelope, knownPayload } from "../contract/index.ts";

export type TranscriptMessage = { generationId: string; text: string; complete: boolean };
export type TranscriptToolCall = {
  callId: string;
  name: string;
  arguments?: unknown;
  result?: unknown;
  error?: unknown;
  returned: boolean;
};
/** One step of the conversation in arrival order; an agent message or a tool call as it stands now. */
export type TranscriptEntry =
  | { kind: "agent"; message: TranscriptMessage }
  | { kind: "user"; text: string }
  | { kind: "tool"; call: TranscriptToolCall }
  | { kind: "error"; error: unknown };

export type Transcript = {
  /** Agent messages in order of their first event. */
  readonly messages: readonly TranscriptMessage[];
  readonly userMessages: readonly string[];
  readonly toolCalls: readonly TranscriptToolCall[];
  /** The `error` of every `server.error` event. */
  readonly errors: readonly unknown[];
  readonly started: boolean;
  readonly ended: boolean;
  /** Messages, user turns, tool calls and errors in arrival order. */
  readonly entries: readonly TranscriptEntry[];
};

/**
 * Builds a transcript event by event in constant time per event (indexes by generation_id and
 * call_id), for long streams. `transcript` returns a snapshot: messages and calls are replaced,
 * never changed, so a snapshot stays as it was.
 */
export class TranscriptBuilder {
  readonly #messages: TranscriptMessage[] = [];
  readonly #toolCalls: TranscriptToolCall[] = [];
  readonly #userMessages: string[] = [];
  readonly #errors: unknown[] = [];
  readonly #entries: TranscriptEntry[] = [];
  #started = false;
  #ended = false;
  /** generation_id → [index in messages, index in entries]; call_id likewise for tool calls. */
  readonly #messageAt = new Map<string, [number, number]>();
  readonly #callAt = new Map<string, [number, number]>();
  /** The entry the last `add` created or updated. */
  #lastChanged: TranscriptEntry | undefined;

  get ended(): boolean {
    return this.#ended;
  }

  get transcript(): Transcript {
    return {
      messages: [...this.#messages],
      userMessages: [...this.#userMessages],
      toolCalls: [...this.#toolCalls],
      errors: [...this.#errors],
      started: this.#started,
      ended: this.#ended,
      entries: [...this.#entries],
    };
  }

  /** The entry the last `add` created or updated (undefined when it changed no entry). */
  get lastChanged(): TranscriptEntry | undefined {
    return this.#lastChanged;
  }

  /** Adds one event; returns whether the transcript changed. */
  add(envelope: Pick<EventEnvelope, "payload">): boolean {
    this.#lastChanged = undefined;
    const parsed = knownPayload.safeParse(envelope?.payload);
    if (!parsed.success) return false;
    const payload = parsed.data;
    switch (payload.type) {
      case "agent.message.delta":
        return this.#upsertMessage(payload.generation_id, (old) =>
          // A delta after the completed event does not change the final text.
          old?.complete
            ? old
            : { generationId: payload.generation_id, text: (old?.text ?? "") + payload.text_delta, complete: false },
        );
      case "agent.message.completed":
        return this.#upsertMessage(payload.generation_id, () => ({
          generationId: payload.generation_id,
          text: payload.text,
          complete: true,
        }));
      case "agent.tool_call.created":
        return this.#upsertCall(payload.call_id, (old) =>
          old?.returned
            ? { ...old, arguments: old.arguments ?? payload.arguments }
            : { callId: payload.call_id, name: payload.name, arguments: payload.arguments, returned: false },
        );
      case "agent.tool_call.returned":
        return this.#upsertCall(payload.call_id, (old) => ({
          callId: payload.call_id,
          name: payload.name || old?.name || "",
          arguments: payload.arguments ?? old?.arguments,
          ...(payload.result === undefined ? {} : { result: payload.result }),
          ...(payload.error === undefined ? {} : { error: payload.error }),
          returned: true,
        }));
      case "user.message.received":
        this.#userMessages.push(payload.text);
        this.#pushEntry({ kind: "user", text: payload.text });
        return true;
      case "server.error":
        this.#errors.push(payload.error ?? null);
        this.#pushEntry({ kind: "error", error: payload.error ?? null });
        return true;
      case "conversation.started":
        if (this.#started) return false;
        this.#started = true;
        return true;
      case "conversation.ended":
        if (this.#ended) return false;
        this.#ended = true;
        return true;
      default:
        return false;
    }
  }

  #pushEntry(entry: TranscriptEntry): number {
    this.#lastChanged = entry;
    return this.#entries.push(entry) - 1;
  }

  #upsertMessage(generationId: string, next: (old?: TranscriptMessage) => TranscriptMessage): boolean {
    const at = this.#messageAt.get(generationId);
    const old = at ? this.#messages[at[0]] : undefined;
    const message = next(old);
    if (old && old.text === message.text && old.complete === message.complete) return false;
    const entry: TranscriptEntry = { kind: "agent", message };
    if (at) {
      this.#messages[at[0]] = message;
      this.#entries[at[1]] = entry;
      this.#lastChanged = entry;
    } else {
      this.#messageAt.set(generationId, [this.#messages.push(message) - 1, this.#pushEntry(entry)]);
    }
    return true;
  }

  #upsertCall(callId: string, next: (old?: TranscriptToolCall) => TranscriptToolCall): boolean {
    const at = this.#callAt.get(callId);
    const call = next(at ? this.#toolCalls[at[0]] : undefined);
    const entry: TranscriptEntry = { kind: "tool", call };
    if (at) {
      this.#toolCalls[at[0]] = call;
      this.#entries[at[1]] = entry;
      this.#lastChanged = entry;
    } else {
      this.#callAt.set(callId, [this.#toolCalls.push(call) - 1, this.#pushEntry(entry)]);
    }
    return true;
  }
}
