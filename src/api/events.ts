// A conversation's event stream over Server-Sent Events, in layers: bytes (undici body) → text
// (streaming UTF-8 decoder) → SSE messages (eventsource-parser, its buffer bounded by the client's
// maxEventBytes) → validated envelopes. Each connection is opened by the request core (URL,
// headers, error classification, bounded error body). The iterable owns an AbortController:
// `break`, `abort()` or the caller's signal closes the connection. When the stream drops before
// `conversation.ended` it reconnects (bounded, honouring `retry:`) with `Last-Event-ID`, and drops
// envelopes it has already yielded. An idle timeout that only new events restart (not comments,
// keep-alives or a line that never ends) stops a stalled stream with a TimeoutError.
import { createParser, type EventSourceMessage } from "eventsource-parser";
import { type EventEnvelope, eventEnvelope } from "../contract/index.ts";
import {
  ApiError,
  ConnectionError,
  InvalidRequestError,
  InvalidResponseError,
  RateLimitError,
  redact,
  ServerError,
  TimeoutError,
} from "../errors/index.ts";
import { type Core, isMediaType, type RequestOptions, seconds } from "./core.ts";
import { errorFromNetwork } from "./errors.ts";
import { Deadline, wait } from "./timeout.ts";

export type EventStreamOptions = RequestOptions & {
  /** The ephemeral stream token: the stream is opened with `?token=` and without the API key. */
  token?: string | undefined;
  /** The stream address from the create-conversation response (default: {base_url}/conversations/{id}/events). */
  eventsUrl?: string | undefined;
  /** Resume after this event id. */
  lastEventId?: string | undefined;
  /**
   * Longest wait for the stream to open and then for each new event (comments, keep-alives and
   * partial lines do not count). Default 120 s.
   */
  idleTimeoutMs?: number | undefined;
  /** Reconnections in a row without a new event before giving up. Default 5. */
  maxReconnects?: number | undefined;
  /** Wait before reconnecting until the server sends `retry:`. Default 1 s. */
  reconnectDelayMs?: number | undefined;
};

/** Two minutes without a new event: a live call may pause, but not this long without the service saying anything. */
export const DEFAULT_IDLE_TIMEOUT_MS = 120_000;

/** Ids kept to drop replayed events: ids repeat only on a resume, which replays recent events. */
const DEDUPE_WINDOW = 1024;

/** A bounded set of the most recent ids (insertion order; the oldest leaves first). */
export class RecentIds {
  readonly #ids = new Set<string>();
  readonly #size: number;
  constructor(size = DEDUPE_WINDOW) {
    this.#size = size;
  }
  /** Adds the id; false when it is already among the recent ones. */
  add(id: string): boolean {
    if (this.#ids.has(id)) return false;
    this.#ids.add(id);
    if (this.#ids.size > this.#size) this.#ids.delete(this.#ids.values().next().value as string);
    return true;
  }
}

type Describe = { method: string; path: string };

export type SseOptions = {
  /** Receives each `retry:` value (ms). */
  onRetry?: (ms: number) => void;
  /** Longest event (with its lines) or line; past it the parse fails with `tooLarge()`. */
  maxEventChars?: number;
  tooLarge?: () => Error;
};

/**
 * Bytes → SSE messages, a batch per chunk: one async step per chunk rather than per event, which
 * is what makes long streams cheap. An unterminated last event is discarded, as the SSE
 * specification requires.
 */
export async function* sseBatches(
  chunks: AsyncIterable<Uint8Array | string>,
  options: SseOptions = {},
): AsyncGenerator<EventSourceMessage[], void, undefined> {
  const { maxEventChars, tooLarge = () => new Error(`an SSE event is longer than ${maxEventChars} characters`) } =
    options;
  let batch: EventSourceMessage[] = [];
  let failure: Error | undefined;
  const parser = createParser({
    onEvent: (message) => {
      if (maxEventChars !== undefined && message.data.length > maxEventChars) failure ??= tooLarge();
      else batch.push(message);
    },
    onError: (error) => {
      if (error.type === "max-buffer-size-exceeded") failure ??= tooLarge();
    },
    ...(options.onRetry ? { onRetry: options.onRetry } : {}),
    ...(maxEventChars !== undefined ? { maxBufferSize: maxEventChars } : {}),
  });
  const decoder = new TextDecoder("utf-8");
  const take = () => {
    const taken = batch;
    batch = [];
    return taken;
  };
  for await (const chunk of chunks) {
    parser.feed(typeof chunk === "string" ? chunk : decoder.decode(chunk, { stream: true }));
    if (failure) throw failure;
    if (batch.length > 0) yield take();
  }
  parser.feed(decoder.decode());
  if (failure) throw failure;
  if (batch.length > 0) yield take();
}

/** One SSE message's data → a validated envelope. */
export function decodeEnvelope(
  data: string,
  describe: Describe,
  secrets: readonly (string | undefined)[] = [],
): EventEnvelope {
  let json: unknown;
  const fail = (reason: string) =>
    new InvalidResponseError({
      message: `${describe.method} ${describe.path}: ${reason}`,
      ...describe,
      body: redact(data.slice(0, 500), secrets),
    });
  try {
    json = JSON.parse(data);
  } catch {
    throw fail("an event's data is not JSON");
  }
  const parsed = eventEnvelope.safeParse(json);
  if (!parsed.success) throw fail(`an event is not an envelope {id, created_at, payload: {type}}`);
  return parsed.data;
}

/** The error of an event over the client's limit, naming the limit. */
export function eventTooLarge(describe: Describe, limit: number, what: string): InvalidResponseError {
  return new InvalidResponseError({
    message: `${describe.method} ${describe.path}: ${what} is larger than ${limit} bytes (the client's maxEventBytes limit); stopped reading`,
    ...describe,
  });
}

/** Whether a failed connection of the stream is worth another one. */
function transient(error: unknown): boolean {
  if (error instanceof TimeoutError) return false; // idle: the stream stalled; say so instead of waiting again
  if (error instanceof RateLimitError || error instanceof ServerError || error instanceof ConnectionError) return true;
  return !(error instanceof ApiError);
}

export class EventStream implements AsyncIterable<EventEnvelope> {
  readonly #core: Core;
  readonly #url: URL;
  readonly #describe: Describe;
  readonly #token: string | undefined;
  readonly #options: EventStreamOptions;
  readonly #controller = new AbortController();
  #started = false;
  #lastEventId: string | undefined;

  constructor(core: Core, defaultPath: string, options: EventStreamOptions) {
    this.#core = core;
    this.#options = options;
    this.#token = options.token || undefined;
    core.addSecret(this.#token);
    this.#url = new URL(options.eventsUrl ?? `${core.baseUrl}${defaultPath}`, `${core.baseUrl}/`);
    this.#url.searchParams.delete("token");
    const path = this.#url.pathname;
    this.#describe = { method: "GET", path };
    this.#lastEventId = options.lastEventId;
    if (!this.#token) {
      core.requireKey("GET", path);
      // The API key goes only to the service's own address; a stream elsewhere needs its token.
      if (this.#url.origin !== new URL(core.baseUrl).origin) {
        throw new InvalidRequestError({
          message: `GET ${path}: the stream is on another host (${this.#url.origin}) than the service; open it with its stream token`,
          method: "GET",
          path,
        });
      }
    }
    const signal = options.signal;
    if (signal?.aborted) this.#controller.abort(signal.reason);
    else signal?.addEventListener("abort", this.#onCallerAbort, { once: true });
  }

  readonly #onCallerAbort = () => this.#controller.abort(this.#options.signal?.reason);

  /** The id of the last SSE event seen (what a reconnection sends as `Last-Event-ID`). */
  get lastEventId(): string | undefined {
    return this.#lastEventId;
  }

  /** Closes the connection; the iteration ends with the abort reason. */
  abort(reason?: unknown): void {
    this.#controller.abort(reason);
  }

  [Symbol.asyncIterator](): AsyncGenerator<EventEnvelope, void, undefined> {
    if (this.#started) throw new Error("an event stream can be iterated once");
    this.#started = true;
    return this.#run();
  }

  async *#run(): AsyncGenerator<EventEnvelope, void, undefined> {
    const maxReconnects = this.#options.maxReconnects ?? 5;
    const seen = new RecentIds();
    const retry = { delayMs: this.#options.reconnectDelayMs ?? 1000 };
    let failuresInARow = 0;
    let connections = 0;
    try {
      for (;;) {
        connections++;
        let progressed = false;
        let failure: unknown;
        try {
          for await (const envelope of this.#connection(connections, seen, retry)) {
            progressed = true;
            yield envelope;
            if (envelope.payload.type === "conversation.ended") return;
          }
          failure = new ConnectionError({
            message: `GET ${this.#describe.path}: the event stream closed before conversation.ended`,
            ...this.#describe,
            requestSent: true,
            attempts: connections,
          });
        } catch (error) {
          if (this.#controller.signal.aborted) throw this.#controller.signal.reason ?? error;
          if (!transient(error)) throw error;
          failure = error;
        }
        failuresInARow = progressed ? 1 : failuresInARow + 1;
        if (failuresInARow > maxReconnects) {
          const reason = failure instanceof Error ? failure.message : String(failure);
          throw new ConnectionError({
            message: `GET ${this.#describe.path}: the event stream failed ${failuresInARow} times in a row (${connections} connections); last: ${reason}`,
            ...this.#describe,
            requestSent: true,
            attempts: connections,
            cause: failure,
          });
        }
        await wait(retry.delayMs, this.#controller.signal);
      }
    } finally {
      this.#options.signal?.removeEventListener("abort", this.#onCallerAbort);
      this.#controller.abort(new Error("event stream closed"));
    }
  }

  /** One connection, opened through the core: its new envelopes, until the body ends. */
  async *#connection(attempt: number, seen: RecentIds, retry: { delayMs: number }): AsyncGenerator<EventEnvelope> {
    const core = this.#core;
    const describe = this.#describe;
    const idleMs = this.#options.idleTimeoutMs ?? DEFAULT_IDLE_TIMEOUT_MS;
    const deadline = new Deadline(
      this.#controller.signal,
      idleMs,
      () =>
        new TimeoutError({
          message: `GET ${describe.path}: no event for ${seconds(idleMs)} (the idle timeout; comments and keep-alives do not count)`,
          ...describe,
          requestSent: true,
          attempts: attempt,
          limit: "idle",
        }),
    );
    const url = new URL(this.#url);
    if (this.#token) url.searchParams.set("token", this.#token);
    const headers: Record<string, string> = {
      ...core.headers({ auth: !this.#token }),
      accept: "text/event-stream",
      "cache-control": "no-cache",
    };
    if (this.#lastEventId !== undefined) headers["last-event-id"] = this.#lastEventId;
    try {
      const sent = await core.send({
        ...describe,
        method: "GET",
        url,
        headers,
        attempt,
        signal: deadline.signal,
        stream: true,
      });
      if (!sent.ok) throw sent.failure;
      const { response } = sent;
      if (!isMediaType(response.headers["content-type"], "text/event-stream")) {
        response.body.destroy();
        throw new InvalidResponseError({
          message: `GET ${describe.path}: expected text/event-stream, got ${JSON.stringify(String(response.headers["content-type"] ?? ""))}`,
          ...describe,
          status: response.statusCode,
          attempts: attempt,
        });
      }
      const batches = sseBatches(response.body, {
        onRetry: (ms) => {
          retry.delayMs = ms;
        },
        maxEventChars: core.maxEventBytes,
        tooLarge: () => eventTooLarge(describe, core.maxEventBytes, "an event (or a line of the stream)"),
      });
      for await (const batch of batches) {
        for (const message of batch) {
          if (message.id !== undefined) this.#lastEventId = message.id;
          if (message.data === "") continue;
          const envelope = decodeEnvelope(message.data, describe, core.secrets);
          if (!seen.add(envelope.id)) continue;
          deadline.pause(); // the consumer's time is not the service's
          yield envelope;
          deadline.restart();
        }
      }
    } catch (error) {
      if (deadline.expired && !deadline.callerAborted) throw deadline.expired;
      if (error instanceof ApiError || this.#controller.signal.aborted) throw error;
      throw errorFromNetwork({
        ...describe,
        error,
        requestSent: true,
        timeout: false,
        attempts: attempt,
        secrets: core.secrets,
      });
    } finally {
      deadline.dispose();
    }
  }
}
