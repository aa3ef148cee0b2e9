// The one request core: every HTTP request of the client goes through `Core.request`, which sets the
// headers, validates the request before sending, retries by `shouldRetry`, reads the response
// tolerantly and turns every failure into a typed error. The undici Agent (keep-alive pools per
// origin) is made on first use, so importing this module opens nothing.
import { Agent, type Dispatcher, request } from "undici";
import { z } from "zod";
import packageJson from "../../package.json" with { type: "json" };
import { SERVICE_VERSION, serviceVersionShape } from "../contract/index.ts";
import {
  type ApiError,
  errorCode,
  errorFromNetwork,
  errorFromResponse,
  InvalidRequestError,
  InvalidResponseError,
  redact,
  requestIdFrom,
} from "./errors.ts";
import { DEFAULT_RETRY_BASE_DELAY_MS, MAX_RETRY_DELAY_MS, type RetryOutcome, shouldRetry } from "./retry.ts";

export const USER_AGENT = `agent-iac/${packageJson.version}`;

export type Timeouts = {
  /** TCP (and TLS) connect. Default 10 s. */
  connectMs?: number;
  /** From sending the request to the response headers. Default 30 s. */
  headersMs?: number;
  /** Between two chunks of a response body (not used for event streams, which have their idle timeout). Default 30 s. */
  bodyMs?: number;
};

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
  /** Called before each retry's wait, so callers can show that a request is being retried. */
  onRetry?: ((retry: RetryNotice) => void) | undefined;
  /** Use this undici dispatcher instead of the client's own keep-alive Agent (then `close` leaves it open). */
  dispatcher?: Dispatcher;
};

/** What a retry is about to do: shown by the commands and logged by the provider. */
export type RetryNotice = {
  method: string;
  path: string;
  /** The HTTP status that is retried, or the network error's code. */
  reason: string;
  /** The attempt that failed (1-based) and the most attempts that will be made. */
  attempt: number;
  maxAttempts: number;
  delayMs: number;
};

/** Per-call options of every client method. */
export type RequestOptions = {
  /** Aborts the request (and its retries' waits): a caller's deadline covers the whole call. */
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
  signal?: AbortSignal;
};

const NOT_SENT_CODES = new Set([
  "ECONNREFUSED",
  "ENOTFOUND",
  "EAI_AGAIN",
  "EHOSTUNREACH",
  "ENETUNREACH",
  "EADDRNOTAVAIL",
]);

/** Which retry outcome a thrown network error is, and whether the request may have been sent. */
export function classifyNetworkError(error: unknown): Extract<RetryOutcome, { kind: "network" | "timeout" }> {
  const code = errorCode(error);
  if (code === "UND_ERR_CONNECT_TIMEOUT") return { kind: "timeout", requestSent: false };
  if (code === "UND_ERR_HEADERS_TIMEOUT" || code === "UND_ERR_BODY_TIMEOUT")
    return { kind: "timeout", requestSent: true };
  return { kind: "network", code, requestSent: !(code && NOT_SENT_CODES.has(code)) };
}

export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const timer = setTimeout(() => {
      signal?.removeEventListener("abort", onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal?.reason);
    };
    signal?.addEventListener("abort", onAbort, { once: true });
  });
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
  readonly onRetry: ClientOptions["onRetry"];
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
    };
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
      "service-version": options.serviceVersion ?? this.serviceVersion,
      "user-agent": USER_AGENT,
    };
    if (options.auth !== false && this.apiKey) headers.authorization = `Bearer ${this.apiKey}`;
    return headers;
  }

  requireKey(method: string, path: string): void {
    if (!this.apiKey) {
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
      message: `${method} ${path}: request not sent, it is invalid:\n${z.prettifyError(checked.error)}`,
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
      let failure: ApiError;
      let outcome: RetryOutcome;
      try {
        const response = await request(url, {
          method,
          headers,
          body: payload,
          dispatcher: this.dispatcher,
          signal: spec.signal,
        });
        const text = await readBoundedText(response.body, MAX_RESPONSE_BYTES, () =>
          this.#tooLarge(spec, response.statusCode, response.headers, attempt),
        );
        if (response.statusCode < 400) return this.#parse(spec, text, response, attempt);
        const retryAfter = response.headers["retry-after"];
        outcome = {
          kind: "status",
          status: response.statusCode,
          retryAfter: Array.isArray(retryAfter) ? retryAfter[0] : retryAfter,
        };
        failure = errorFromResponse({
          method,
          path,
          status: response.statusCode,
          headers: response.headers,
          bodyText: text,
          attempts: attempt,
          secrets: this.secrets,
        });
      } catch (error) {
        if (spec.signal?.aborted) throw spec.signal.reason;
        if (error instanceof InvalidResponseError) throw error;
        const network = classifyNetworkError(error);
        outcome = network;
        failure = errorFromNetwork({
          method,
          path,
          error,
          requestSent: network.requestSent,
          timeout: network.kind === "timeout",
          attempts: attempt,
          secrets: this.secrets,
        });
      }
      const decision = shouldRetry({
        method,
        outcome,
        attempt,
        maxAttempts: this.maxAttempts,
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
      await sleep(decision.delayMs, spec.signal);
    }
  }

  #tooLarge<T>(
    spec: RequestSpec<T>,
    status: number,
    headers: Record<string, string | string[] | undefined>,
    attempts: number,
  ): InvalidResponseError {
    const requestId = requestIdFrom(headers);
    return new InvalidResponseError({
      message: `${spec.method} ${spec.path} → ${status}: the response is larger than ${MAX_RESPONSE_BYTES} bytes${requestId ? ` (request id ${requestId})` : ""}`,
      method: spec.method,
      path: spec.path,
      status,
      attempts,
      requestId,
    });
  }

  #parse<T>(
    spec: RequestSpec<T>,
    text: string,
    response: { statusCode: number; headers: Record<string, string | string[] | undefined> },
    attempts: number,
  ): T {
    let json: unknown;
    const requestId = requestIdFrom(response.headers);
    const fail = (reason: string) =>
      new InvalidResponseError({
        message: redact(
          `${spec.method} ${spec.path} → ${response.statusCode}: unexpected response: ${reason}${requestId ? ` (request id ${requestId})` : ""}`,
          this.secrets,
        ),
        method: spec.method,
        path: spec.path,
        status: response.statusCode,
        attempts,
        requestId,
        body: redact(text.slice(0, 2000), this.secrets),
      });
    try {
      json = JSON.parse(text);
    } catch {
      throw fail("the body is not JSON");
    }
    const parsed = spec.responseSchema.safeParse(json);
    if (!parsed.success) throw fail(z.prettifyError(parsed.error));
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

/** Longest response the client reads (lists and errors are far smaller): bounded memory. */
export const MAX_RESPONSE_BYTES = 10 * 1024 * 1024;

/** A response body as text, failing with `tooLarge()` (and discarding the rest) past `limit` bytes. */
export async function readBoundedText(
  body: AsyncIterable<Uint8Array | string> & { destroy(error?: Error): unknown },
  limit: number,
  tooLarge: () => Error,
): Promise<string> {
  const decoder = new TextDecoder("utf-8");
  let size = 0;
  let text = "";
  for await (const chunk of body) {
    const bytes = typeof chunk === "string" ? Buffer.from(chunk) : chunk;
    size += bytes.byteLength;
    if (size > limit) {
      const error = tooLarge();
      body.destroy(error);
      throw error;
    }
    text += decoder.decode(bytes, { stream: true });
  }
  return text + decoder.decode();
}
