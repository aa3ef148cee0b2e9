// A conversation's WebSocket session (`WS /conversations/{id}/session`) with undici's WebSocket: the
// same iterable of validated envelopes as the event stream, plus `send` for control messages (their
// shape is not shown by the interface: any JSON object). As for the event stream, a stream token
// (query parameter `token`) opens the session without the API key; without one, the key goes in
// `Authorization` (undici's WebSocket takes request headers).
import { WebSocket } from "undici";
import type { EventEnvelope } from "../contract/index.ts";
import type { Core } from "./core.ts";
import { ConnectionError, InvalidRequestError, redact, TimeoutError } from "./errors.ts";
import { DEFAULT_IDLE_TIMEOUT_MS, decodeEnvelope } from "./events.ts";

export type SessionOptions = {
  /** The conversation's stream token: when given, the API key is not sent. */
  token?: string | undefined;
  idleTimeoutMs?: number | undefined;
  signal?: AbortSignal | undefined;
};

type Item = { envelope: EventEnvelope } | { error: unknown } | { done: true };

export class Session implements AsyncIterable<EventEnvelope> {
  readonly #ws: WebSocket;
  readonly #path: string;
  readonly #idleMs: number;
  readonly #secrets: string[];
  readonly #queue: Item[] = [];
  #wake: (() => void) | undefined;
  #ended = false;
  #started = false;

  private constructor(ws: WebSocket, path: string, idleMs: number, secrets: string[]) {
    this.#ws = ws;
    this.#path = path;
    this.#idleMs = idleMs;
    this.#secrets = secrets;
  }

  static async open(core: Core, path: string, options: SessionOptions): Promise<Session> {
    const token = options.token || undefined;
    core.addSecret(token);
    const url = new URL(`${core.baseUrl}${path}`);
    url.protocol = url.protocol === "https:" ? "wss:" : "ws:";
    const useKey = !token;
    if (token) url.searchParams.set("token", token);
    else core.requireKey("WS", path);
    const ws = new WebSocket(url, {
      headers: core.headers({ auth: useKey }),
      dispatcher: core.dispatcher,
    });
    const session = new Session(ws, path, options.idleTimeoutMs ?? DEFAULT_IDLE_TIMEOUT_MS, core.secrets);
    await session.#opened(options.signal);
    return session;
  }

  #opened(signal: AbortSignal | undefined): Promise<void> {
    const ws = this.#ws;
    return new Promise((resolve, reject) => {
      let open = false;
      const onAbort = () => {
        if (!open) reject(signal?.reason);
        else this.#push({ error: signal?.reason });
        this.close();
      };
      if (signal?.aborted) return onAbort();
      signal?.addEventListener("abort", onAbort, { once: true });
      ws.addEventListener("open", () => {
        open = true;
        resolve();
      });
      ws.addEventListener("message", (event) => {
        if (typeof event.data !== "string") return this.#push({ error: this.#error("a binary message was received") });
        try {
          const envelope = decodeEnvelope(event.data, { method: "WS", path: this.#path });
          if (envelope.payload.type === "conversation.ended") this.#ended = true;
          this.#push({ envelope });
        } catch (error) {
          this.#push({ error });
        }
      });
      ws.addEventListener("close", (event) => {
        signal?.removeEventListener("abort", onAbort);
        if (!open) {
          if (signal?.aborted) return;
          reject(
            new ConnectionError({
              message: redact(
                `WS ${this.#path}: the session could not be opened (close code ${event.code}${event.reason ? `: ${event.reason}` : ""}); check the address, the key or token and the conversation id`,
                this.#secrets,
              ),
              method: "WS",
              path: this.#path,
              requestSent: true,
              code: String(event.code),
            }),
          );
          return;
        }
        if (this.#ended) return this.#push({ done: true });
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

  #error(reason: string): ConnectionError {
    return new ConnectionError({
      message: redact(`WS ${this.#path}: ${reason}`, this.#secrets),
      method: "WS",
      path: this.#path,
      requestSent: true,
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

  #next(): Promise<Item> {
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.#wake = undefined;
        reject(
          new TimeoutError({
            message: `WS ${this.#path}: no event for ${Math.round(this.#idleMs / 1000)} s (idle timeout)`,
            method: "WS",
            path: this.#path,
            requestSent: true,
          }),
        );
      }, this.#idleMs);
      this.#wake = () => {
        clearTimeout(timer);
        this.#wake = undefined;
        resolve(this.#queue.shift() as Item);
      };
    });
  }
}
