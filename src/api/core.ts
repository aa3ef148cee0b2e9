// The one request core: every HTTP request of the client goes through `Core.request`, which sets the
// headers, validates the request before sending, retries by `shouldRetry`, reads the response
// tolerantly and turns every failure into a typed error. The undici Agent (keep-alive pools per
// origin) is made on first use, so importing this module opens nothing.
import { Agent, type Dispatcher, request } from "undici";
import type { z } from "zod";
import packageJson from "../../package.json" with { type: "json" };
import { issuesText, SERVICE_VERSION, serviceVersionShape } from "../contract/index.ts";
import {
  ApiError,
  ConnectionError,
  type Credential,
  InvalidRequestError,
  InvalidResponseError,
  type RetryNotice,
  redact,
  TimeoutError,
} from "../errors/index.ts";
import { errorCode, errorFromNetwork, errorFromResponse, MAX_ERROR_BODY_CHARS, requestIdFrom } from "./errors.ts";
import { DEFAULT_RETRY_BASE_DELAY_MS, MAX_RETRY_DELAY_MS, type RetryOutcome, shouldRetry } from "./retry.ts";
import { Deadline, wait } from "./timeout.ts";

const USER_AGENT = `agent-iac/${packageJson.version}`;

// Defaults, sane for a real service over the internet: a list page or a create answers in well under
// a second, a stream may be quiet while the agent waits for a caller, and a stalled or trickling
// service should fail a command in minutes, not hang it.
export type Timeouts = {
  /** TCP (and TLS) connect. Default 10 s. */
  connectMs?: number;
  /** From sending the request to the response headers. Default 30 s. */
  headersMs?: number;
  /** Between two chunks of a response body (not used for event streams, which have their idle timeout). Default 30 s. */
  bodyMs?: number;
  /**
   * The whole response of one attempt: headers and every byte of the body (a service that trickles
   * its body resets the per-chunk timeout forever). Not retried when it passes. Default 120 s.
   */
  requestMs?: number;
};

/** Longest event the client reads (an SSE event with all its lines, or a WebSocket message). */
const DEFAULT_MAX_EVENT_BYTES = 1024 * 1024;

export type ClientOptions = {
  /** The service's base address, e.g. https://api.example.com or the simulator's http://127.0.0.1:8787. */
  baseUrl: string;
  /** The account's API key. Optional only for a client that opens event streams with a stream token. */
  apiKey?: string | undefined;
  /** `Service-Version` of every request. Default SERVICE_VERSION. */
  serviceVersion?: string | undefined;
  /** `Service-Version` of `GET /feedbacks` (any date-shaped string). Default: serviceVersion. */
  feedbacksServiceVersion?: string | undefined;
  /** Retries after the first attempt (bounded; see shouldRetry). Default 3. */
  maxRetries?: number;
  retryBaseDelayMs?: number;
  maxRetryDelayMs?: number;
  timeouts?: Timeouts;
  /**
   * Longest event read from a stream or a session, in bytes (text is counted in UTF-16 units, never
   * more than the bytes received): a service that never ends a line cannot fill memory. Default 1 MiB.
   */
  maxEventBytes?: number;
  /** Called before each retry's wait, so callers can show that a request is being retried. */
  onRetry?: ((retry: RetryNotice) => void) | undefined;
  /**
   * Every request of this client only reads (a model endpoint's answers, not the service): POSTs
   * are retried like GETs (429, 5xx, network errors), no Service-Version header is sent, and the key
   * is optional (a local model server may need none).
   */
  readOnly?: boolean;
  /** Use this undici dispatcher instead of the client's own keep-alive Agent (then `close` leaves it open). */
  dispatcher?: Dispatcher;
};

export type { RetryNotice };

/** Per-call options of every client method (event streams and sessions included). */
export type RequestOptions = {
  /** Aborts the call (its retries' waits, a stream's reconnections): a caller's deadline covers the whole call. */
  signal?: AbortSignal | undefined;
};

export type RequestSpec<T> = {
  method: "GET" | "POST";
  path: string;
  query?: Record<string, string | undefined>;
  /** Validated (strictly) before anything is sent. */
  body?: unknown;
  requestSchema?: z.ZodType;
  /** Parses the response (tolerantly). */
  responseSchema: z.ZodType<T>;
  serviceVersion?: string;
  signal?: AbortSignal | undefined;
};

/** One HTTP exchange, never retried: what `Core.send` sends. */
export type Exchange = {
  method: "GET" | "POST";
  /** For messages: the path, never the query (a stream token travels as `?token=`). */
  path: string;
  url: string | URL;
  headers: Record<string, string>;
  body?: string | undefined;
  attempt: number;
  /** Ends the exchange: the caller's signal, a deadline, a stream that closes. */
  signal: AbortSignal;
  /** Event streams: no undici headers/body timeout (their Deadline watches them instead). */
  stream?: boolean;
};

/** A response below 400 (its body unread), or the typed error of the exchange and its retry outcome. */
export type Sent =
  | { ok: true; response: Dispatcher.ResponseData }
  | { ok: false; failure: ApiError; outcome: RetryOutcome };

type Attempted<T> = { ok: true; value: T } | { ok: false; failure: ApiError; outcome: RetryOutcome };

const NOT_SENT_CODES = new Set([
  "ECONNREFUSED",
  "ENOTFOUND",
  "EAI_AGAIN",
  "EHOSTUNREACH",
  "ENETUNREACH",
  "EADDRNOTAVAIL",
]);

/** Which retry outcome a thrown network error is, and whether the request may have been sent. */
function classifyNetworkError(error: unknown): Extract<RetryOutcome, { kind: "network" | "timeout" }> {
  const code = errorCode(error);
  if (code === "UND_ERR_CONNECT_TIMEOUT") return { kind: "timeout", requestSent: false };
  if (code === "UND_ERR_HEADERS_TIMEOUT" || code === "UND_ERR_BODY_TIMEOUT")
    return { kind: "timeout", requestSent: true };
  return { kind: "network", code, requestSent: !(code && NOT_SENT_CODES.has(code)) };
}

/** RFC 9110 §8.3.1: type and subtype compare case-insensitively; parameters (charset…) do not matter. */
export function isMediaType(contentType: string | string[] | undefined, expected: string): boolean {
  const value = Array.isArray(contentType) ? contentType[0] : contentType;
  const essence = (value ?? "").split(";")[0]?.trim().toLowerCase();
  return essence === expected.toLowerCase();
}

export class Core {
  readonly baseUrl: string;
  readonly apiKey: string | undefined;
  readonly serviceVersion: string;
  readonly feedbacksServiceVersion: string;
  readonly maxAttempts: number;
  readonly retryBaseDelayMs: number;
  readonly maxRetryDelayMs: number;
  readonly timeouts: Required<Timeouts>;
  readonly maxEventBytes: number;
  readonly onRetry: ClientOptions["onRetry"];
  readonly readOnly: boolean;
  readonly #ownDispatcher: boolean;
  #dispatcher: Dispatcher | undefined;
  /** Stream tokens seen by this client, removed from every error text like the key. */
  readonly #secrets = new Set<string>();

  constructor(options: ClientOptions) {
    let base: URL;
    try {
      base = new URL(options.baseUrl);
    } catch {
      throw new TypeError(`invalid base URL ${JSON.stringify(redact(options.baseUrl, []))}`);
    }
    if (base.protocol !== "http:" && base.protocol !== "https:") {
      throw new TypeError(`the base URL must be http(s), not ${base.protocol}`);
    }
    base.search = "";
    base.hash = "";
    this.baseUrl = base.toString().replace(/\/+$/, "");
    this.apiKey = options.apiKey || undefined;
    this.serviceVersion = serviceVersionShape.parse(options.serviceVersion ?? SERVICE_VERSION);
    this.feedbacksServiceVersion = serviceVersionShape.parse(options.feedbacksServiceVersion ?? this.serviceVersion);
    this.maxAttempts = 1 + Math.max(0, Math.floor(options.maxRetries ?? 3));
    this.onRetry = options.onRetry;
    this.retryBaseDelayMs = options.retryBaseDelayMs ?? DEFAULT_RETRY_BASE_DELAY_MS;
    this.maxRetryDelayMs = Math.min(options.maxRetryDelayMs ?? MAX_RETRY_DELAY_MS, MAX_RETRY_DELAY_MS);
    this.timeouts = {
      connectMs: options.timeouts?.connectMs ?? 10_000,
      headersMs: options.timeouts?.headersMs ?? 30_000,
      bodyMs: options.timeouts?.bodyMs ?? 30_000,
      requestMs: options.timeouts?.requestMs ?? 120_000,
    };
    this.maxEventBytes = Math.max(1, Math.floor(options.maxEventBytes ?? DEFAULT_MAX_EVENT_BYTES));
    this.readOnly = options.readOnly ?? false;
    this.#dispatcher = options.dispatcher;
    this.#ownDispatcher = !options.dispatcher;
    if (this.apiKey) this.#secrets.add(this.apiKey);
  }

  get dispatcher(): Dispatcher {
    this.#dispatcher ??= new Agent({
      connect: { timeout: this.timeouts.connectMs },
      headersTimeout: this.timeouts.headersMs,
      bodyTimeout: this.timeouts.bodyMs,
      keepAliveTimeout: 4_000,
    });
    return this.#dispatcher;
  }

  /** Secrets to strip from any text that goes into an error. */
  get secrets(): string[] {
    return [...this.#secrets];
  }

  addSecret(secret: string | undefined): void {
    if (secret) this.#secrets.add(secret);
  }

  url(path: string, query?: Record<string, string | undefined>): string {
    const search = new URLSearchParams();
    for (const [key, value] of Object.entries(query ?? {})) if (value !== undefined) search.set(key, value);
    const qs = search.toString();
    return `${this.baseUrl}${path}${qs ? `?${qs}` : ""}`;
  }

  /** Headers of every request (Authorization only when a key is given and wanted). */
  headers(options: { serviceVersion?: string; auth?: boolean } = {}): Record<string, string> {
    const headers: Record<string, string> = {
      ...(this.readOnly ? {} : { "service-version": options.serviceVersion ?? this.serviceVersion }),
      "user-agent": USER_AGENT,
    };
    if (options.auth !== false && this.apiKey) headers.authorization = `Bearer ${this.apiKey}`;
    return headers;
  }

  requireKey(method: string, path: string): void {
    if (!this.apiKey && !this.readOnly) {
      throw new InvalidRequestError({
        message: `${method} ${path}: request not sent: no API key was given to the client`,
        method,
        path,
        attempts: 0,
      });
    }
  }

  /** Validates what would be sent; an InvalidRequestError (nothing sent) when it is invalid. */
  validate<S extends z.ZodType>(method: string, path: string, schema: S, value: unknown): z.output<S> {
    const checked = schema.safeParse(value);
    if (checked.success) return checked.data;
    throw new InvalidRequestError({
      message: `${method} ${path}: request not sent, it is invalid: ${issuesText(checked.error)}`,
      method,
      path,
      attempts: 0,
      body: checked.error.issues,
    });
  }

  async request<T>(spec: RequestSpec<T>): Promise<T> {
    const { method, path } = spec;
    this.requireKey(method, path);
    let payload: string | undefined;
    if (spec.requestSchema) {
      const data = this.validate(method, path, spec.requestSchema, spec.body);
      if (method === "POST") payload = JSON.stringify(data);
    }
    const headers: Record<string, string> = {
      ...this.headers(spec.serviceVersion ? { serviceVersion: spec.serviceVersion } : {}),
      accept: "application/json",
    };
    if (payload !== undefined) headers["content-type"] = "application/json";
    const url = this.url(path, spec.query);

    for (let attempt = 1; ; attempt++) {
      const result = await this.#attempt(spec, { method, path, url, headers, body: payload, attempt });
      if (result.ok) return result.value;
      const { failure, outcome } = result;
      const decision = shouldRetry({
        method,
        outcome,
        attempt,
        maxAttempts: this.maxAttempts,
        idempotent: this.readOnly,
        baseDelayMs: this.retryBaseDelayMs,
        maxDelayMs: this.maxRetryDelayMs,
      });
      if (!decision.retry) throw failure;
      this.onRetry?.({
        method,
        path,
        reason:
          outcome.kind === "status"
            ? String(outcome.status)
            : outcome.kind === "network"
              ? (outcome.code ?? "network error")
              : "timeout",
        attempt,
        maxAttempts: this.maxAttempts,
        delayMs: decision.delayMs,
      });
      await wait(decision.delayMs, spec.signal);
    }
  }

  /** One attempt of a request under its whole-response deadline: the parsed body, or why it failed. */
  async #attempt<T>(spec: RequestSpec<T>, exchange: Omit<Exchange, "signal">): Promise<Attempted<T>> {
    const { method, path, attempt } = exchange;
    const ms = this.timeouts.requestMs;
    const deadline = new Deadline(
      spec.signal,
      ms,
      () =>
        new TimeoutError({
          message: redact(
            `${method} ${path}: no complete response within ${seconds(ms)} (the request deadline, timeouts.requestMs; attempt ${attempt})`,
            this.secrets,
          ),
          method,
          path,
          attempts: attempt,
          requestSent: true,
          limit: "deadline",
        }),
    );
    try {
      const sent = await this.send({ ...exchange, signal: deadline.signal });
      if (!sent.ok) return sent;
      const { response } = sent;
      let text: string;
      try {
        text = await readBoundedText(response.body, MAX_RESPONSE_BYTES, () =>
          this.#unreadable(spec, response, attempt, `it is larger than ${MAX_RESPONSE_BYTES} bytes`),
        );
      } catch (error) {
        if (error instanceof ApiError || deadline.signal.aborted) throw error;
        return this.#networkFailure(exchange, error);
      }
      return { ok: true, value: this.#parse(spec, text, response, attempt) };
    } catch (error) {
      if (deadline.expired && !deadline.callerAborted) {
        return { ok: false, failure: deadline.expired as ApiError, outcome: DEADLINE_OUTCOME };
      }
      if (deadline.callerAborted) throw spec.signal?.reason;
      throw error;
    } finally {
      deadline.dispose();
    }
  }

  /**
   * Sends one exchange (no retry): a response below 400 with its body unread, or the typed error.
   * An error body is read bounded in size and in time (the exchange's signal). Throws only the
   * abort reason of the exchange's signal.
   */
  async send(exchange: Exchange): Promise<Sent> {
    const { method, path, attempt } = exchange;
    let response: Dispatcher.ResponseData;
    try {
      response = await request(exchange.url, {
        method,
        headers: exchange.headers,
        body: exchange.body,
        dispatcher: this.dispatcher,
        signal: exchange.signal,
        headersTimeout: exchange.stream ? 0 : this.timeouts.headersMs,
        bodyTimeout: exchange.stream ? 0 : this.timeouts.bodyMs,
      });
    } catch (error) {
      if (exchange.signal.aborted) throw exchange.signal.reason;
      return this.#networkFailure(exchange, error);
    }
    if (response.statusCode < 400) return { ok: true, response };
    const bodyText = await readBoundedText(response.body, MAX_ERROR_BODY_BYTES).catch(() => "");
    const retryAfter = response.headers["retry-after"];
    const failure = errorFromResponse({
      method,
      path,
      status: response.statusCode,
      ...(response.statusText ? { statusText: response.statusText } : {}),
      headers: response.headers,
      bodyText,
      attempts: attempt,
      secrets: this.secrets,
      credential: credentialOf(exchange),
    });
    const outcome: RetryOutcome = {
      kind: "status",
      status: response.statusCode,
      retryAfter: Array.isArray(retryAfter) ? retryAfter[0] : retryAfter,
    };
    return { ok: false, failure, outcome };
  }

  #networkFailure(
    exchange: Pick<Exchange, "method" | "path" | "attempt">,
    error: unknown,
  ): { ok: false; failure: ApiError; outcome: RetryOutcome } {
    const network = classifyNetworkError(error);
    const failure = errorFromNetwork({
      method: exchange.method,
      path: exchange.path,
      error,
      requestSent: network.requestSent,
      timeout: network.kind === "timeout",
      attempts: exchange.attempt,
      secrets: this.secrets,
    });
    return { ok: false, failure, outcome: network };
  }

  /**
   * A 2xx whose body cannot be read or parsed. To a creating POST the service has acted: that is a
   * lost response (a ConnectionError with requestSent, never retried), not a failure to create.
   */
  #unreadable<T>(
    spec: RequestSpec<T>,
    response: Dispatcher.ResponseData,
    attempts: number,
    reason: string,
    text?: string,
  ): ApiError {
    const requestId = requestIdFrom(response.headers);
    const init = {
      method: spec.method,
      path: spec.path,
      status: response.statusCode,
      attempts,
      requestId,
      ...(text === undefined ? {} : { body: redact(text.slice(0, MAX_ERROR_BODY_CHARS), this.secrets) }),
    };
    const where = `${spec.method} ${spec.path} → ${response.statusCode}`;
    const id = requestId ? ` (request id ${requestId})` : "";
    if (spec.method === "POST" && !this.readOnly) {
      return new ConnectionError({
        ...init,
        message: redact(
          `${where}: the service answered but its response could not be read (${reason}); it may have acted on the request${id}`,
          this.secrets,
        ),
        requestSent: true,
        networkCode: "RESPONSE_UNREADABLE",
      });
    }
    return new InvalidResponseError({
      ...init,
      message: redact(`${where}: unexpected response: ${reason}${id}`, this.secrets),
    });
  }

  #parse<T>(spec: RequestSpec<T>, text: string, response: Dispatcher.ResponseData, attempts: number): T {
    let json: unknown;
    try {
      json = JSON.parse(text);
    } catch {
      throw this.#unreadable(spec, response, attempts, "the body is not JSON", text);
    }
    const parsed = spec.responseSchema.safeParse(json);
    if (!parsed.success) throw this.#unreadable(spec, response, attempts, issuesText(parsed.error), text);
    return parsed.data;
  }

  async close(): Promise<void> {
    const dispatcher = this.#dispatcher;
    if (this.#ownDispatcher && dispatcher) {
      this.#dispatcher = undefined;
      await dispatcher.close();
    }
  }
}

const DEADLINE_OUTCOME: RetryOutcome = { kind: "timeout", requestSent: true, deadline: true };

/** A duration for messages: "120 s", "250 ms". */
export function seconds(ms: number): string {
  return ms >= 1000 ? `${Math.round(ms / 100) / 10} s` : `${ms} ms`;
}

/** Longest response the client reads (lists and errors are far smaller): bounded memory. */
export const MAX_RESPONSE_BYTES = 10 * 1024 * 1024;
/** Longest part of an error response that is read (for its reason and request id); the rest is discarded. */
export const MAX_ERROR_BODY_BYTES = 64 * 1024;

/**
 * A response body as text, bounded: past `limit` bytes the rest is discarded and it fails with
 * `tooLarge()`, or, without `tooLarge`, returns what was read (an error body's start is enough).
 */
async function readBoundedText(
  body: AsyncIterable<Uint8Array | string> & { destroy(error?: Error): unknown },
  limit: number,
  tooLarge?: () => Error,
): Promise<string> {
  const decoder = new TextDecoder("utf-8");
  let size = 0;
  let text = "";
  for await (const chunk of body) {
    const bytes = typeof chunk === "string" ? Buffer.from(chunk) : chunk;
    if (size + bytes.byteLength > limit) {
      if (!tooLarge) {
        text += decoder.decode(bytes.subarray(0, limit - size));
        body.destroy();
        return text;
      }
      const error = tooLarge();
      body.destroy(error);
      throw error;
    }
    size += bytes.byteLength;
    text += decoder.decode(bytes, { stream: true });
  }
  return text + decoder.decode();
}

/** A request opened with a stream token (`?token=`, no key) was refused for that token, not the key. */
function credentialOf(exchange: Exchange): Credential {
  const withToken = new URL(exchange.url).searchParams.has("token");
  return withToken && !exchange.headers.authorization ? "stream_token" : "api_key";
}
