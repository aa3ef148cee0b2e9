// The transcript of a conversation, built from its events by a pure reducer following the
// interface's rules: deltas are concatenated per generation_id into an incomplete message,
// `agent.message.completed` makes it complete with its `text`, tool calls are joined by call_id,
// other types are ignored. User turns, `server.error`s and the end are kept as well (smoke checks
// use them). Robust to a completed message without deltas, a returned call without its created
// event, malformed payloads and unknown types (the transcript is returned unchanged).
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

/**
 * Builds a transcript event by event in constant time per event (indexes by generation_id and
 * call_id), for long streams. `transcript` returns an immutable snapshot. `reduceTranscript` is the
 * same logic as a pure function.
 */
export class TranscriptBuilder {
  #messages: TranscriptMessage[];
  #toolCalls: TranscriptToolCall[];
  #userMessages: string[];
  #errors: unknown[];
  #entries: TranscriptEntry[];
  #started: boolean;
  #ended: boolean;
  /** generation_id → [index in messages, index in entries]; call_id likewise for tool calls. */
  #messageAt = new Map<string, [number, number]>();
  #callAt = new Map<string, [number, number]>();
  /** The entry the last `add` created or updated. */
  #lastChanged: TranscriptEntry | undefined;

  constructor(from: Transcript = emptyTranscript()) {
    this.#messages = [...from.messages];
    this.#toolCalls = [...from.toolCalls];
    this.#userMessages = [...from.userMessages];
    this.#errors = [...from.errors];
    this.#entries = [...from.entries];
    this.#started = from.started;
    this.#ended = from.ended;
    this.#messages.forEach((m, i) => {
      this.#messageAt.set(m.generationId, [
        i,
        this.#entries.findIndex((e) => e.kind === "agent" && e.generationId === m.generationId),
      ]);
    });
    this.#toolCalls.forEach((c, i) => {
      this.#callAt.set(c.callId, [i, this.#entries.findIndex((e) => e.kind === "tool" && e.callId === c.callId)]);
    });
  }

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

  /** The agent message of a generation, as it stands. */
  message(generationId: string): TranscriptMessage | undefined {
    const at = this.#messageAt.get(generationId);
    return at ? this.#messages[at[0]] : undefined;
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
        this.#pushEntry({ kind: "user", text: payload.text, line: `user: ${payload.text}` });
        return true;
      case "server.error":
        this.#errors.push(payload.error ?? null);
        this.#pushEntry({
          kind: "error",
          error: payload.error ?? null,
          line: `error: ${json(payload.error ?? null)}`,
        });
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
    const entry: TranscriptEntry = { kind: "agent", generationId, line: messageLine(message) };
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
    const entry: TranscriptEntry = { kind: "tool", callId, line: toolLine(call) };
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

/** The transcript after one more event. Pure: the given transcript is not modified (and is returned when nothing changes). */
export function reduceTranscript(transcript: Transcript, envelope: Pick<EventEnvelope, "payload">): Transcript {
  const builder = new TranscriptBuilder(transcript);
  return builder.add(envelope) ? builder.transcript : transcript;
}

export type TranscriptPrinterOptions = {
  /** Written before every line (e.g. which call it belongs to). */
  prefix?: string;
  /** Write agent text as its deltas arrive (default); otherwise each message once, when complete. */
  streamText?: boolean;
};

/**
 * Prints a transcript as it grows: agent text as it streams, user turns, tool calls (again when
 * they return), errors and the end, one line each. Returns the function to feed events to.
 */
export function transcriptPrinter(write: (text: string) => void, options: TranscriptPrinterOptions = {}) {
  const prefix = options.prefix ?? "";
  const streamText = options.streamText ?? true;
  const builder = new TranscriptBuilder();
  let open: { generationId: string; printed: string } | undefined;
  const closeOpen = () => {
    if (open) write("\n");
    open = undefined;
  };
  return (envelope: Pick<EventEnvelope, "payload">): void => {
    const wasEnded = builder.ended;
    if (!builder.add(envelope)) return;
    const entry = builder.lastChanged;
    if (entry?.kind === "agent") {
      const message = builder.message(entry.generationId);
      if (!message) return;
      if (!streamText) {
        if (message.complete) write(`${prefix}agent: ${message.text}\n`);
        return;
      }
      if (open?.generationId !== message.generationId) {
        closeOpen();
        write(`${prefix}agent: `);
        open = { generationId: message.generationId, printed: "" };
      }
      // The final text normally extends what was streamed; when it does not, show it whole.
      if (message.text.startsWith(open.printed)) write(message.text.slice(open.printed.length));
      else write(`\n${prefix}agent (final): ${message.text}`);
      open.printed = message.text;
      if (message.complete) closeOpen();
      return;
    }
    if (entry) {
      closeOpen();
      write(`${prefix}${entry.line}\n`);
    }
    if (builder.ended && !wasEnded) {
      closeOpen();
      write(`${prefix}(conversation ended)\n`);
    }
  };
}
