// The one retry decision of the client (method × outcome → retry? and after how long). Pure, so a
// table test covers it. A creating POST is retried only where the service certainly did not act:
// a 429, or a connection refused before anything was sent. A timeout or a reset after sending could
// mean the agent or the call exists already, so a retry could duplicate it.

/** Longest wait between two attempts, whatever `Retry-After` asks for. */
export const MAX_RETRY_DELAY_MS = 60_000;
export const DEFAULT_RETRY_BASE_DELAY_MS = 500;

export type RetryOutcome =
  /** The service answered with this status. */
  | { kind: "status"; status: number; retryAfter?: string | undefined }
  /** The connection failed; `requestSent` when the request may have been written. */
  | { kind: "network"; code?: string | undefined; requestSent: boolean }
  /**
   * A connect, headers or body timeout; `requestSent` unless it was the connect timeout. `deadline`:
   * the whole-response deadline passed while the service was still sending (a trickle, which another
   * attempt would repeat).
   */
  | { kind: "timeout"; requestSent: boolean; deadline?: boolean };

export type RetryInput = {
  method: string;
  outcome: RetryOutcome;
  /** Attempts made so far (1 after the first one failed). */
  attempt: number;
  maxAttempts: number;
  baseDelayMs?: number;
  maxDelayMs?: number;
  /** For `Retry-After` given as an HTTP date. */
  now?: number;
  /** For the jitter: a number in [0, 1). */
  random?: () => number;
  /** The request only reads (a model endpoint's answer): retried like a GET whatever its method. */
  idempotent?: boolean;
};

export type RetryDecision = { retry: boolean; delayMs: number; reason: string };

/** `Retry-After` as milliseconds from `now`: delta-seconds or an HTTP date; undefined if unreadable. */
export function parseRetryAfter(value: string | undefined, now: number): number | undefined {
  if (value === undefined) return undefined;
  const text = value.trim();
  if (text === "") return undefined;
  if (/^\d+(\.\d+)?$/.test(text)) return Math.round(Number(text) * 1000);
  // An HTTP date has a month name; Date.parse alone would read "-3" as a year.
  if (!/[a-z]{3}/i.test(text)) return undefined;
  const date = Date.parse(text);
  if (Number.isNaN(date)) return undefined;
  return Math.max(0, date - now);
}

function retryable(method: string, outcome: RetryOutcome, idempotent = false): { retry: boolean; reason: string } {
  const safe = idempotent || method.toUpperCase() === "GET";
  switch (outcome.kind) {
    case "status":
      if (outcome.status === 429) return { retry: true, reason: "rate limited (429)" };
      if (outcome.status >= 500 && outcome.status <= 599) {
        return safe
          ? { retry: true, reason: `server error (${outcome.status})` }
          : { retry: false, reason: `a ${method} that got ${outcome.status} may have been acted on` };
      }
      return { retry: false, reason: `status ${outcome.status} is not transient` };
    case "network":
      if (safe) return { retry: true, reason: `network error (${outcome.code ?? "unknown"})` };
      if (outcome.code === "ECONNREFUSED" && !outcome.requestSent) {
        return { retry: true, reason: "connection refused before the request was sent" };
      }
      return {
        retry: false,
        reason: outcome.requestSent
          ? `the ${method} was sent before the connection failed (${outcome.code ?? "unknown"}): it may have been acted on`
          : `a ${method} is retried only after a refused connection (${outcome.code ?? "unknown"})`,
      };
    case "timeout":
      if (outcome.deadline)
        return { retry: false, reason: "the response did not complete within the request deadline" };
      return safe
        ? { retry: true, reason: "timed out" }
        : { retry: false, reason: `a ${method} that timed out may have been acted on` };
  }
}

/** Whether to make another attempt, and how long to wait first. */
export function shouldRetry(input: RetryInput): RetryDecision {
  const { retry, reason } = retryable(input.method, input.outcome, input.idempotent);
  if (!retry) return { retry: false, delayMs: 0, reason };
  if (input.attempt >= input.maxAttempts) {
    return { retry: false, delayMs: 0, reason: `${reason}; gave up after ${input.attempt} attempts` };
  }
  const cap = input.maxDelayMs ?? MAX_RETRY_DELAY_MS;
  const now = input.now ?? Date.now();
  const retryAfter = input.outcome.kind === "status" ? parseRetryAfter(input.outcome.retryAfter, now) : undefined;
  if (retryAfter !== undefined) {
    return { retry: true, delayMs: Math.min(cap, retryAfter), reason: `${reason}; Retry-After honoured` };
  }
  // Exponential backoff with "equal jitter": half fixed, half random, so clients spread out.
  const base = input.baseDelayMs ?? DEFAULT_RETRY_BASE_DELAY_MS;
  const exponential = Math.min(cap, base * 2 ** Math.max(0, input.attempt - 1));
  const random = (input.random ?? Math.random)();
  return { retry: true, delayMs: Math.round(exponential / 2 + (exponential / 2) * random), reason };
}
