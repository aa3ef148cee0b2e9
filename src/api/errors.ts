// The factories of the client's typed errors (the classes are src/errors' service.ts: one error
// root): each made from what the service answered (status, headers, body) or from how the connection
// failed; every text that goes into an error is passed through `redact` with the client's key and tokens.
import {
  ApiError,
  AuthenticationError,
  ConnectionError,
  type Credential,
  InvalidRequestError,
  NotFoundError,
  RateLimitError,
  redact,
  ServerError,
  TimeoutError,
} from "../errors/index.ts";

/** Longest response body text kept on an error (the rest is cut with an ellipsis). */
export const MAX_ERROR_BODY_CHARS = 2000;

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
