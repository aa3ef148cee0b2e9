// A conversation's event stream over Server-Sent Events, in layers: bytes (undici body) → text
// (streaming UTF-8 decoder) → SSE messages (eventsource-parser) → validated envelopes. The iterable
// owns an AbortController: `break`, `abort()` or the caller's signal closes the connection. When the
// stream drops before `conversation.ended` it reconnects (bounded, honouring `retry:`) with
// `Last-Event-ID`, and drops envelopes it has already yielded. An idle timeout ends a stalled stream
// with a TimeoutError.
import { createParser, type EventSourceMessage } from "eventsource-parser";
import { request } from "undici";
import { type EventEnvelope, eventEnvelope } from "../contract/index.ts";
import type { Core } from "./core.ts";
import { classifyNetworkError, readBoundedText, sleep } from "./core.ts";
import {
  ApiError,
  ConnectionError,
  errorFromNetwork,
  errorFromResponse,
  InvalidRequestError,
  InvalidResponseError,
  RateLimitError,
  redact,
  ServerError,
  TimeoutError,
} from "./errors.ts";

export type EventStreamOptions = {
  /** The ephemeral stream token: the stream is opened with `?token=` and without the API key. */
  token?: string | undefined;
  /** The stream address from the create-conversation response (default: {base_url}/conversations/{id}/events). */
  eventsUrl?: string | undefined;
  /** Resume after this event id. */
  lastEventId?: string | undefined;
  /** Longest wait for any byte of the stream (comments included). Default 120 s. */
  idleTimeoutMs?: number | undefined;
  signal?: AbortSignal | undefined;
  /** Reconnections in a row without a new event before giving up. Default 5. */
  maxReconnects?: number | undefined;
  /** Wait before reconnecting until the server sends `retry:`. Default 1 s. */
  reconnectDelayMs?: number | undefined;
};

export const DEFAULT_IDLE_TIMEOUT_MS = 120_000;
/** Longest error response of the stream endpoint that is read (for its reason and request id). */
const MAX_ERROR_BODY_BYTES = 64 * 1024;

/**
 * Bytes → SSE messages, a batch per chunk: one async step per chunk rather than per event, which
 * is what makes long streams cheap. `onRetry` receives each `retry:` value (ms).
 */
export async function* sseBatches(
  chunks: AsyncIterable<Uint8Array | string>,
  onRetry?: (ms: number) => void,
): AsyncGenerator<EventSourceMessage[], void, undefined> {
  let batch: EventSourceMessage[] = [];
  const parser = createParser({
    onEvent: (message) => batch.push(message),
    ...(onRetry ? { onRetry } : {}),
  });
  const decoder = new TextDecoder("utf-8");
  const take = () => {
    const taken = batch;
    batch = [];
    return taken;
  };
  for await (const chunk of chunks) {
    parser.feed(typeof chunk === "string" ? chunk : decoder.decode(chunk, { stream: true }));
    if (batch.length > 0) yield take();
  }
  // An unterminated last event is discarded, as the SSE specification requires.
  parser.feed(decoder.decode());
  if (batch.length > 0) yield take();
}

/** Bytes → SSE messages, one at a time. */
export async function* sseMessages(
  chunks: AsyncIterable<Uint8Array | string>,
  onRetry?: (ms: number) => void,
): AsyncGenerator<EventSourceMessage, void, undefined> {
  for await (const batch of sseBatches(chunks, onRetry)) yield* batch;
}

/** Ends (by `onIdle`'s error) when no chunk arrives within `ms` while one is awaited. */
export async function* withIdleTimeout<T>(
  source: AsyncIterable<T>,
  ms: number,
  onIdle: () => Error,
): AsyncGenerator<T, void, undefined> {
  const iterator = source[Symbol.asyncIterator]();
  try {
    for (;;) {
      let timer: NodeJS.Timeout | undefined;
      const idle = new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(onIdle()), ms);
      });
      try {
        const next = await Promise.race([iterator.next(), idle]);
        if (next.done) return;
        yield next.value;
      } finally {
        clearTimeout(timer);
      }
    }
  } finally {
    await iterator.return?.();
  }
}

/** One SSE message's data → a validated envelope. */
export function decodeEnvelope(
  data: string,
  describe: { method: string; path: string },
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

/** Whether a failed connection of the stream is worth another one. */
function transient(error: unknown): boolean {
  if (error instanceof TimeoutError) return false; // idle: the stream stalled; say so instead of waiting again
  if (error instanceof RateLimitError || error instanceof ServerError || error instanceof ConnectionError) return true;
  return !(error instanceof ApiError);
}

export class EventStream implements AsyncIterable<EventEnvelope> {
  readonly #core: Core;
  readonly #url: URL;
  readonly #path: string;
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
    this.#path = this.#url.pathname;
    this.#lastEventId = options.lastEventId;
    if (!this.#token) {
      core.requireKey("GET", this.#path);
      // The API key goes only to the service's own address; a stream elsewhere needs its token.
      if (this.#url.origin !== new URL(core.baseUrl).origin) {
        throw new InvalidRequestError({
          message: `GET ${this.#path}: the stream is on another host (${this.#url.origin}) than the service; open it with its stream token`,
          method: "GET",
          path: this.#path,
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
    const describe = { method: "GET", path: this.#path };
    const secrets = this.#core.secrets;
    const maxReconnects = this.#options.maxReconnects ?? 5;
    const idleMs = this.#options.idleTimeoutMs ?? DEFAULT_IDLE_TIMEOUT_MS;
    let delayMs = this.#options.reconnectDelayMs ?? 1000;
    const yielded = new Set<string>();
    let failuresInARow = 0;
    let connections = 0;
    try {
      for (;;) {
        connections++;
        let progressed = false;
        let failure: unknown;
        try {
          const messages = this.#connect(idleMs, connections, (ms) => {
            delayMs = ms;
          });
          for await (const batch of messages) {
            for (const message of batch) {
              if (message.id !== undefined) this.#lastEventId = message.id;
              if (message.data === "") continue;
              const envelope = decodeEnvelope(message.data, describe, secrets);
              if (yielded.has(envelope.id)) continue;
              yielded.add(envelope.id);
              progressed = true;
              yield envelope;
              if (envelope.payload.type === "conversation.ended") return;
            }
          }
          failure = new ConnectionError({
            message: `GET ${this.#path}: the event stream closed before conversation.ended`,
            ...describe,
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
            message: `GET ${this.#path}: the event stream failed ${failuresInARow} times in a row (${connections} connections); last: ${reason}`,
            ...describe,
            requestSent: true,
            attempts: connections,
            cause: failure,
          });
        }
        await sleep(delayMs, this.#controller.signal);
      }
    } finally {
      this.#options.signal?.removeEventListener("abort", this.#onCallerAbort);
      this.#controller.abort(new Error("event stream closed"));
    }
  }

  /** One connection: its SSE messages in batches, until the body ends. */
  async *#connect(
    idleMs: number,
    attempt: number,
    onRetry: (ms: number) => void,
  ): AsyncGenerator<EventSourceMessage[]> {
    const core = this.#core;
    const url = new URL(this.#url);
    if (this.#token) url.searchParams.set("token", this.#token);
    const headers: Record<string, string> = {
      ...core.headers({ auth: !this.#token }),
      accept: "text/event-stream",
      "cache-control": "no-cache",
    };
    if (this.#lastEventId !== undefined) headers["last-event-id"] = this.#lastEventId;
    const connection = new AbortController();
    const onAbort = () => connection.abort(this.#controller.signal.reason);
    this.#controller.signal.addEventListener("abort", onAbort, { once: true });
    const idleError = () => {
      const error = new TimeoutError({
        message: `GET ${this.#path}: no event for ${Math.round(idleMs / 1000)} s (idle timeout)`,
        method: "GET",
        path: this.#path,
        requestSent: true,
        attempts: attempt,
      });
      connection.abort(error);
      return error;
    };
    try {
      let response: Awaited<ReturnType<typeof request>>;
      const opening = request(url, {
        method: "GET",
        headers,
        dispatcher: core.dispatcher,
        signal: connection.signal,
        bodyTimeout: 0,
        headersTimeout: 0,
      });
      try {
        response = await withTimeout(opening, idleMs, idleError);
      } catch (error) {
        if (error instanceof ApiError || this.#controller.signal.aborted) throw error;
        const network = classifyNetworkError(error);
        throw errorFromNetwork({
          method: "GET",
          path: this.#path,
          error,
          requestSent: network.requestSent,
          timeout: network.kind === "timeout",
          attempts: attempt,
          secrets: core.secrets,
        });
      }
      if (response.statusCode >= 400) {
        // Bounded in size and time: a failing stream must not hang or fill memory.
        const bodyText = await withTimeout(
          readBoundedText(response.body, MAX_ERROR_BODY_BYTES, () => new Error("error body too large")),
          idleMs,
          idleError,
        ).catch(() => "");
        throw errorFromResponse({
          method: "GET",
          path: this.#path,
          status: response.statusCode,
          headers: response.headers,
          bodyText,
          attempts: attempt,
          secrets: core.secrets,
        });
      }
      const type = String(response.headers["content-type"] ?? "");
      if (!type.startsWith("text/event-stream")) {
        response.body.destroy();
        throw new InvalidResponseError({
          message: `GET ${this.#path}: expected text/event-stream, got ${JSON.stringify(type)}`,
          method: "GET",
          path: this.#path,
          status: response.statusCode,
          attempts: attempt,
        });
      }
      try {
        yield* sseBatches(withIdleTimeout(response.body, idleMs, idleError), onRetry);
      } catch (error) {
        if (error instanceof ApiError || this.#controller.signal.aborted) throw error;
        throw errorFromNetwork({
          method: "GET",
          path: this.#path,
          error,
          requestSent: true,
          timeout: false,
          attempts: attempt,
          secrets: core.secrets,
        });
      }
    } finally {
      this.#controller.signal.removeEventListener("abort", onAbort);
      connection.abort(new Error("connection closed"));
    }
  }
}

async function withTimeout<T>(promise: Promise<T>, ms: number, onTimeout: () => Error): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([
      promise,
      new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(onTimeout()), ms);
      }),
    ]);
  } finally {
    clearTimeout(timer);
  }
}
