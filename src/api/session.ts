// A conversation's WebSocket session (`WS /conversations/{id}/session`) with undici's WebSocket: the
// same iterable of validated envelopes as the event stream, plus `send` for control messages (their
// shape is not shown by the interface: any JSON object). The core gives the address, the headers
// and the secrets; a refused handshake is classified by the core's error factory from its status,
// headers and the start of its body (recorded by a dispatcher over the core's), so a wrong key is an
// AuthenticationError with the request id like any request. A stream token (query parameter `token`)
// opens the session without the API key. Messages are bounded by the client's maxEventBytes.
import type { Duplex } from "node:stream";
import { type Dispatcher, WebSocket } from "undici";
import type { EventEnvelope } from "../contract/index.ts";
import { type ApiError, ConnectionError, InvalidRequestError, redact, TimeoutError } from "../errors/index.ts";
import { type Core, MAX_ERROR_BODY_BYTES, type RequestOptions, seconds } from "./core.ts";
import { errorFromResponse } from "./errors.ts";
import { DEFAULT_IDLE_TIMEOUT_MS, decodeEnvelope, eventTooLarge } from "./events.ts";
import { Deadline } from "./timeout.ts";

export type SessionOptions = RequestOptions & {
  /** The conversation's stream token: when given, the API key is not sent. */
  token?: string | undefined;
  /** Longest wait for the session to open and then for each message. Default 120 s. */
  idleTimeoutMs?: number | undefined;
};

type Item = { envelope: EventEnvelope } | { error: unknown } | { done: true };

/**
 * What the server answered to the upgrade request (kept when it was not a 101), and the code of the
 * Close frame the client sent, if it did.
 */
type Handshake = {
  status?: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
  closeCodeSent?: number;
};

/** RFC 6455 close code of a message too big to process (what undici sends past maxPayloadSize). */
const MESSAGE_TOO_BIG = 1009;

/**
 * The core's dispatcher with the message size limit, recording a refused handshake's response
 * (status, headers, the start of its body), which undici's WebSocket does not expose.
 */
function recordingDispatcher(dispatcher: Dispatcher, maxPayloadSize: number, handshake: Handshake): Dispatcher {
  const composed = dispatcher.compose(
    (dispatch) => (options, handler) =>
      dispatch(options, {
        onRequestStart: (controller, context) => handler.onRequestStart?.(controller, context),
        onRequestUpgrade: (controller, status, headers, socket: Duplex) => {
          watchCloseFrames(socket, handshake);
          return handler.onRequestUpgrade?.(controller, status, headers, socket);
        },
        onResponseStart: (controller, status, headers, message) => {
          handshake.status = status;
          handshake.headers = headers;
          return handler.onResponseStart?.(controller, status, headers, message);
        },
        onResponseData: (controller, chunk) => {
          if (handshake.body.length < MAX_ERROR_BODY_BYTES) handshake.body += chunk.toString("utf8");
          return handler.onResponseData?.(controller, chunk);
        },
        onResponseEnd: (controller, trailers) => handler.onResponseEnd?.(controller, trailers),
        onResponseError: (controller, error) => handler.onResponseError?.(controller, error),
      }),
  );
  const webSocketOptions = { maxFragments: 1024, maxPayloadSize };
  return new Proxy(composed, {
    get: (target, key) => (key === "webSocketOptions" ? webSocketOptions : Reflect.get(target, key)),
  });
}

/**
 * Records the code of a Close frame the client writes. undici fails a message over maxPayloadSize
 * by sending Close 1009, but reports it as 1006 when the server does not answer that frame (a
 * hostile one would not): the frame it sent is the only reliable sign that the limit was hit.
 */
function watchCloseFrames(socket: Duplex, handshake: Handshake): void {
  const write = socket.write;
  socket.write = function (this: Duplex, chunk: unknown, ...rest: unknown[]) {
    // A masked client frame: FIN + opcode 8, then 0x80 | length, a 4-byte mask, the masked code.
    if (Buffer.isBuffer(chunk) && chunk.length >= 8 && chunk[0] === 0x88 && ((chunk[1] ?? 0) & 0x7f) >= 2) {
      const code = ((chunk[6] ?? 0) ^ (chunk[2] ?? 0)) * 256 + ((chunk[7] ?? 0) ^ (chunk[3] ?? 0));
      handshake.closeCodeSent ??= code;
    }
    return (write as (...args: unknown[]) => boolean).call(this, chunk, ...rest);
  } as Duplex["write"];
}

export class Session implements AsyncIterable<EventEnvelope> {
  readonly #ws: WebSocket;
  readonly #path: string;
  readonly #idleMs: number;
  readonly #core: Core;
  readonly #handshake: Handshake;
  readonly #queue: Item[] = [];
  #wake: (() => void) | undefined;
  #ended = false;
  #started = false;

  private constructor(core: Core, path: string, token: string | undefined, idleMs: number) {
    this.#core = core;
    this.#path = path;
    this.#idleMs = idleMs;
    this.#handshake = { headers: {}, body: "" };
    const url = new URL(core.url(path));
    url.protocol = url.protocol === "https:" ? "wss:" : "ws:";
    if (token) url.searchParams.set("token", token);
    this.#ws = new WebSocket(url, {
      headers: core.headers({ auth: !token }),
      dispatcher: recordingDispatcher(core.dispatcher, core.maxEventBytes, this.#handshake),
    });
  }

  static async open(core: Core, path: string, options: SessionOptions): Promise<Session> {
    const token = options.token || undefined;
    core.addSecret(token);
    if (!token) core.requireKey("WS", path);
    const session = new Session(core, path, token, options.idleTimeoutMs ?? DEFAULT_IDLE_TIMEOUT_MS);
    await session.#opened(options.signal);
    return session;
  }

  #opened(signal: AbortSignal | undefined): Promise<void> {
    const ws = this.#ws;
    const opening = new Deadline(signal, this.#idleMs, () =>
      this.#timeout(`the session did not open within ${seconds(this.#idleMs)} (the idle timeout)`),
    );
    return new Promise<void>((resolve, reject) => {
      let open = false;
      const onAbort = () => {
        if (!open) reject(opening.signal.reason);
        else this.#push({ error: signal?.reason });
        this.close();
      };
      if (opening.signal.aborted) return onAbort();
      opening.signal.addEventListener("abort", onAbort, { once: true });
      signal?.addEventListener("abort", onAbort, { once: true });
      ws.addEventListener("open", () => {
        open = true;
        opening.signal.removeEventListener("abort", onAbort);
        opening.dispose();
        resolve();
      });
      ws.addEventListener("message", (event) => this.#onMessage(event.data));
      ws.addEventListener("close", (event) => {
        signal?.removeEventListener("abort", onAbort);
        opening.signal.removeEventListener("abort", onAbort);
        opening.dispose();
        if (!open) {
          if (!signal?.aborted) reject(this.#refused(event.code, event.reason));
          return;
        }
        if (this.#ended) return this.#push({ done: true });
        if (event.code === MESSAGE_TOO_BIG || this.#handshake.closeCodeSent === MESSAGE_TOO_BIG) {
          const describe = { method: "WS", path: this.#path };
          return this.#push({ error: eventTooLarge(describe, this.#core.maxEventBytes, "a message") });
        }
        this.#push({
          error: this.#error(
            `the session closed before conversation.ended (code ${event.code}${event.reason ? `: ${event.reason}` : ""})`,
          ),
        });
      });
      // "error" is always followed by "close", which settles everything.
      ws.addEventListener("error", () => {});
    });
  }

  #onMessage(data: unknown): void {
    if (typeof data !== "string") {
      this.#push({ error: this.#error("a binary message was received") });
      return;
    }
    try {
      const envelope = decodeEnvelope(data, { method: "WS", path: this.#path }, this.#core.secrets);
      if (envelope.payload.type === "conversation.ended") this.#ended = true;
      this.#push({ envelope });
    } catch (error) {
      this.#push({ error });
    }
  }

  /** Why the handshake failed: the service's answer through the core's error factory, else the connection. */
  #refused(code: number, reason: string): ApiError {
    const handshake = this.#handshake;
    if (handshake.status !== undefined && handshake.status >= 400) {
      return errorFromResponse({
        method: "WS",
        path: this.#path,
        status: handshake.status,
        headers: handshake.headers,
        bodyText: handshake.body,
        attempts: 1,
        secrets: this.#core.secrets,
      });
    }
    const answered = handshake.status === undefined ? "" : `the service answered ${handshake.status}; `;
    return this.#error(
      `the session could not be opened (${answered}close code ${code}${reason ? `: ${reason}` : ""}); check the address, the key or token and the conversation id`,
    );
  }

  #error(reason: string): ConnectionError {
    return new ConnectionError({
      message: redact(`WS ${this.#path}: ${reason}`, this.#core.secrets),
      method: "WS",
      path: this.#path,
      requestSent: true,
    });
  }

  #timeout(reason: string): TimeoutError {
    return new TimeoutError({
      message: `WS ${this.#path}: ${reason}`,
      method: "WS",
      path: this.#path,
      requestSent: true,
      limit: "idle",
    });
  }

  #push(item: Item): void {
    this.#queue.push(item);
    this.#wake?.();
  }

  /** Sends a control message (any JSON object). */
  send(message: Record<string, unknown>): void {
    if (!message || typeof message !== "object" || Array.isArray(message)) {
      throw new InvalidRequestError({
        message: `WS ${this.#path}: a control message must be a JSON object`,
        method: "WS",
        path: this.#path,
        attempts: 0,
      });
    }
    if (this.#ws.readyState !== WebSocket.OPEN) throw this.#error("the session is not open");
    this.#ws.send(JSON.stringify(message));
  }

  close(): void {
    if (this.#ws.readyState === WebSocket.OPEN || this.#ws.readyState === WebSocket.CONNECTING) this.#ws.close(1000);
  }

  [Symbol.asyncIterator](): AsyncGenerator<EventEnvelope, void, undefined> {
    if (this.#started) throw new Error("a session can be iterated once");
    this.#started = true;
    return this.#run();
  }

  async *#run(): AsyncGenerator<EventEnvelope, void, undefined> {
    try {
      for (;;) {
        const item = this.#queue.shift() ?? (await this.#next());
        if ("done" in item) return;
        if ("error" in item) throw item.error;
        yield item.envelope;
        if (item.envelope.payload.type === "conversation.ended") return;
      }
    } finally {
      this.close();
    }
  }

  /** The next item, waiting at most the idle timeout. */
  async #next(): Promise<Item> {
    const idle = new Deadline(undefined, this.#idleMs, () =>
      this.#timeout(`no event for ${seconds(this.#idleMs)} (the idle timeout)`),
    );
    try {
      return await new Promise<Item>((resolve, reject) => {
        idle.signal.addEventListener("abort", () => reject(idle.signal.reason), { once: true });
        // Taken at most once: several messages can arrive before the awaiting code runs again.
        this.#wake = () => {
          this.#wake = undefined;
          resolve(this.#queue.shift() as Item);
        };
      });
    } finally {
      this.#wake = undefined;
      idle.dispose();
    }
  }
}
