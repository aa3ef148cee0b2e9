// The service client's errors (src/api makes them, with the one factory per failure kind): part of
// the one error root, each class with a stable `code` like undici's errors. Messages name the method
// and the path without its query string (the stream token travels as `?token=`) and never a secret:
// every text that goes into one is passed through `redact` with the client's key and tokens.
import { AgentIacError } from "./base.ts";
import type { ModelOrigin } from "./model.ts";

export type ApiErrorInit = {
  message: string;
  method: string;
  path: string;
  status?: number | undefined;
  requestId?: string | undefined;
  body?: unknown;
  attempts?: number | undefined;
  cause?: unknown;
};

/** The stable code of each ApiError class (src/commands/errors.ts maps each to an exit code). */
export const API_ERROR_CODES = [
  /** A status the client has no class for. */
  "AGENT_IAC_API",
  "AGENT_IAC_API_AUTHENTICATION",
  "AGENT_IAC_API_NOT_FOUND",
  "AGENT_IAC_API_INVALID_REQUEST",
  "AGENT_IAC_API_RATE_LIMIT",
  "AGENT_IAC_API_SERVER",
  "AGENT_IAC_API_INVALID_RESPONSE",
  "AGENT_IAC_API_CONNECTION",
  "AGENT_IAC_API_TIMEOUT",
] as const;

export type ApiErrorCode = (typeof API_ERROR_CODES)[number];

export class ApiError extends AgentIacError {
  readonly code: ApiErrorCode = "AGENT_IAC_API";
  /** HTTP status, when the service answered. */
  readonly status: number | undefined;
  readonly method: string;
  /** The request path, never with its query string. */
  readonly path: string;
  /** The service's request id header (see REQUEST_ID_HEADERS), when it sent one. */
  readonly requestId: string | undefined;
  /** The response body: parsed JSON, else text (truncated). */
  readonly body: unknown;
  /** How many attempts were made before giving up. */
  readonly attempts: number;
  /** The model endpoint the request went to, set by the model port (src/model); undefined: the service. */
  origin: ModelOrigin | undefined;

  constructor(init: ApiErrorInit) {
    super(init.message, init.cause === undefined ? {} : { cause: init.cause });
    this.name = new.target.name;
    this.status = init.status;
    this.method = init.method;
    this.path = init.path;
    this.requestId = init.requestId;
    this.body = init.body;
    this.attempts = init.attempts ?? 1;
    this.origin = undefined;
  }
}

/** What a refused request carried: the account's API key, or a conversation's stream token instead. */
export type Credential = "api_key" | "stream_token";

/** 401 or 403: the key (or stream token) is missing, wrong, expired or not allowed here. */
export class AuthenticationError extends ApiError {
  override readonly code = "AGENT_IAC_API_AUTHENTICATION";
  /** Which credential the service refused: a stream opened with its token never sent the key. */
  readonly credential: Credential;
  constructor(init: ApiErrorInit & { credential?: Credential | undefined }) {
    super(init);
    this.credential = init.credential ?? "api_key";
  }
}
/** 404. */
export class NotFoundError extends ApiError {
  override readonly code = "AGENT_IAC_API_NOT_FOUND";
}
/** 400 or 422 from the service, or a request that failed validation and was never sent (`status` undefined). */
export class InvalidRequestError extends ApiError {
  override readonly code = "AGENT_IAC_API_INVALID_REQUEST";
}
/** 429. */
export class RateLimitError extends ApiError {
  override readonly code = "AGENT_IAC_API_RATE_LIMIT";
}
/** 5xx. */
export class ServerError extends ApiError {
  override readonly code = "AGENT_IAC_API_SERVER";
}
/** The service answered something the client cannot read (wrong shape, repeated cursor, broken stream). */
export class InvalidResponseError extends ApiError {
  override readonly code = "AGENT_IAC_API_INVALID_RESPONSE";
}

export class ConnectionError extends ApiError {
  override readonly code = "AGENT_IAC_API_CONNECTION";
  /** True when the request may have reached the service (e.g. a reset after it was written). */
  readonly requestSent: boolean;
  /** The network error code, e.g. ECONNREFUSED or UND_ERR_SOCKET. */
  readonly networkCode: string | undefined;
  constructor(init: ApiErrorInit & { requestSent: boolean; networkCode?: string | undefined }) {
    super(init);
    this.requestSent = init.requestSent;
    this.networkCode = init.networkCode;
  }
}

/** Which bound ran out: undici's headers/body timeout, the whole-response deadline, or a stream's idle timeout. */
export type TimeoutLimit = "socket" | "deadline" | "idle";

export class TimeoutError extends ApiError {
  override readonly code = "AGENT_IAC_API_TIMEOUT";
  /** True when the request may have reached the service (a headers or body timeout). */
  readonly requestSent: boolean;
  readonly limit: TimeoutLimit;
  constructor(init: ApiErrorInit & { requestSent: boolean; limit?: TimeoutLimit }) {
    super(init);
    this.requestSent = init.requestSent;
    this.limit = init.limit ?? "socket";
  }
}

/** Replaces every occurrence of the given secrets (and any `token=` query value) with `***`. */
export function redact(text: string, secrets: readonly (string | undefined)[]): string {
  let out = text.replace(/([?&]token=)[^&#\s"']*/gi, "$1***");
  for (const secret of secrets) {
    if (secret && secret.length >= 4) out = out.split(secret).join("***");
  }
  return out;
}

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
