// Typed errors for every failure of the client, made by one factory from what the service answered
// (status, headers, body) or from how the connection failed. Messages name the method and the path
// without its query string (the stream token travels as `?token=`) and never a secret: every text
// that goes into an error is passed through `redact` with the client's key and tokens. Like
// undici's errors, each class has a stable `code` (API_ERROR_CODES) a caller can branch on.

/** Longest response body text kept on an error (the rest is cut with an ellipsis). */
export const MAX_ERROR_BODY_CHARS = 2000;

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

export class ApiError extends Error {
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

  constructor(init: ApiErrorInit) {
    super(init.message, init.cause === undefined ? undefined : { cause: init.cause });
    this.name = new.target.name;
    this.status = init.status;
    this.method = init.method;
    this.path = init.path;
    this.requestId = init.requestId;
    this.body = init.body;
    this.attempts = init.attempts ?? 1;
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

/** A URL fit for printing: no query string (the stream token is a query parameter), no user info. */
export function displayUrl(url: string | URL): string {
  try {
    const parsed = new URL(url);
    parsed.search = "";
    parsed.username = "";
    parsed.password = "";
    return parsed.toString();
  } catch {
    return String(url).split("?")[0] ?? "";
  }
}

/** Reads an error body: JSON when it parses, else the text; truncated, secrets removed. */
function parseErrorBody(text: string, secrets: readonly (string | undefined)[]): unknown {
  const clean = redact(text, secrets);
  const cut = clean.length > MAX_ERROR_BODY_CHARS ? `${clean.slice(0, MAX_ERROR_BODY_CHARS)}…` : clean;
  if (clean.length <= MAX_ERROR_BODY_CHARS) {
    try {
      return JSON.parse(clean);
    } catch {
      // not JSON: keep the text
    }
  }
  return cut;
}

const MAX_REASON_CHARS = 300;

function shorten(text: string): string | undefined {
  const flat = text.replace(/\s+/g, " ").trim();
  if (!flat) return undefined;
  return flat.length > MAX_REASON_CHARS ? `${flat.slice(0, MAX_REASON_CHARS)}…` : flat;
}

/** A text body: an HTML page's title (a proxy's error page), else the start of the text. */
function reasonFromText(text: string): string | undefined {
  if (/^\s*</.test(text)) {
    const title = /<title[^>]*>([^<]*)<\/title>/i.exec(text)?.[1];
    return shorten(title ?? text.replace(/<[^>]*>/g, " "));
  }
  return shorten(text);
}

/** One field's reason: a string, `{message}` / `{msg}` / `{detail}`, or a list of those (FastAPI's `detail`). */
function reasonFromField(value: unknown): string | undefined {
  if (typeof value === "string") return shorten(value);
  if (Array.isArray(value)) {
    const parts = value.map(reasonFromField).filter((part): part is string => part !== undefined);
    return parts.length > 0 ? shorten(parts.join("; ")) : undefined;
  }
  if (!value || typeof value !== "object") return undefined;
  const record = value as Record<string, unknown>;
  const text = [record.message, record.msg, record.detail, record.title].find((v) => typeof v === "string");
  if (typeof text !== "string") return undefined;
  // FastAPI's validation items name where: {loc: ["body", "name"], msg: "field required"}.
  const where = Array.isArray(record.loc) ? record.loc.join(".") : undefined;
  return shorten(where ? `${where}: ${text}` : text);
}

/**
 * The short reason an error body gives, whatever its shape: the first human-readable field among
 * `error` (string or `{message}`), `message`, `detail` (string, or FastAPI's list of `{msg}`),
 * `errors`, `title` (RFC 9457), `error_description`; else the start of the body.
 */
function reasonFrom(body: unknown): string | undefined {
  if (typeof body === "string") return reasonFromText(body);
  if (Array.isArray(body)) return reasonFromField(body) ?? shorten(JSON.stringify(body));
  if (!body || typeof body !== "object") return undefined;
  const record = body as Record<string, unknown>;
  for (const key of ["error", "message", "detail", "errors", "title", "error_description"]) {
    const reason = reasonFromField(record[key]);
    if (reason) return reason;
  }
  return shorten(JSON.stringify(body));
}

function attemptsNote(attempts: number, requestId: string | undefined): string {
  const parts = [`${attempts} attempt${attempts === 1 ? "" : "s"}`];
  if (requestId) parts.unshift(`request id ${requestId}`);
  return ` (${parts.join("; ")})`;
}

export type ResponseFailure = {
  method: string;
  path: string;
  status: number;
  statusText?: string;
  headers: Record<string, string | string[] | undefined>;
  bodyText: string;
  attempts: number;
  secrets: readonly (string | undefined)[];
  /** A stream or session opened with its token (default: the API key). */
  credential?: Credential | undefined;
};

/** Header names services use for the id of a request, most common first. */
const REQUEST_ID_HEADERS = [
  "request-id",
  "x-request-id",
  "x-amzn-requestid",
  "x-amz-request-id",
  "x-ms-request-id",
  "x-correlation-id",
  "correlation-id",
  "x-trace-id",
] as const;

/** The request id header, if the service sent one (under any common name; header names are lower case). */
export function requestIdFrom(headers: Record<string, string | string[] | undefined>): string | undefined {
  for (const name of REQUEST_ID_HEADERS) {
    const value = headers[name];
    const first = Array.isArray(value) ? value[0] : value;
    if (first) return first;
  }
  return undefined;
}

/** The one factory for errors from an HTTP response. */
export function errorFromResponse(failure: ResponseFailure): ApiError {
  const body = parseErrorBody(failure.bodyText, failure.secrets);
  const requestId = requestIdFrom(failure.headers);
  const reason = reasonFrom(body) ?? failure.statusText ?? "";
  const message = redact(
    `${failure.method} ${failure.path} → ${failure.status}${reason ? `: ${reason}` : ""}${attemptsNote(failure.attempts, requestId)}`,
    failure.secrets,
  );
  const init = {
    message,
    method: failure.method,
    path: failure.path,
    status: failure.status,
    requestId,
    body,
    attempts: failure.attempts,
  };
  const status = failure.status;
  if (status === 401 || status === 403) return new AuthenticationError({ ...init, credential: failure.credential });
  if (status === 404) return new NotFoundError(init);
  if (status === 400 || status === 422) return new InvalidRequestError(init);
  if (status === 429) return new RateLimitError(init);
  if (status >= 500) return new ServerError(init);
  return new ApiError(init);
}

export type NetworkFailure = {
  method: string;
  path: string;
  error: unknown;
  requestSent: boolean;
  timeout: boolean;
  attempts: number;
  secrets: readonly (string | undefined)[];
};

/** The one factory for errors from a failed connection (refused, reset, timed out). */
export function errorFromNetwork(failure: NetworkFailure): ConnectionError | TimeoutError {
  const code = errorCode(failure.error);
  const detail = failure.error instanceof Error ? failure.error.message : String(failure.error);
  const what = failure.timeout
    ? "timed out"
    : failure.requestSent
      ? "connection failed after the request was sent"
      : "could not connect";
  const message = redact(
    `${failure.method} ${failure.path}: ${what} (${code ? `${code}: ` : ""}${detail})${attemptsNote(failure.attempts, undefined)}`,
    failure.secrets,
  );
  const init = {
    message,
    method: failure.method,
    path: failure.path,
    attempts: failure.attempts,
    requestSent: failure.requestSent,
    cause: failure.error,
  };
  return failure.timeout ? new TimeoutError(init) : new ConnectionError({ ...init, networkCode: code });
}

export function errorCode(error: unknown): string | undefined {
  if (!error || typeof error !== "object") return undefined;
  const code = (error as { code?: unknown }).code;
  if (typeof code === "string") return code;
  const cause = (error as { cause?: unknown }).cause;
  return cause && cause !== error ? errorCode(cause) : undefined;
}
