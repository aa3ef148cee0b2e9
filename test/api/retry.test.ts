import { describe, expect, test } from "vitest";
import { MAX_RETRY_DELAY_MS, parseRetryAfter, type RetryOutcome, shouldRetry } from "../../src/api/retry.ts";

const status = (s: number, retryAfter?: string): RetryOutcome => ({ kind: "status", status: s, retryAfter });
const refused: RetryOutcome = { kind: "network", code: "ECONNREFUSED", requestSent: false };
const reset: RetryOutcome = { kind: "network", code: "UND_ERR_SOCKET", requestSent: true };
const resetBefore: RetryOutcome = { kind: "network", code: "ECONNRESET", requestSent: false };
const notFound: RetryOutcome = { kind: "network", code: "ENOTFOUND", requestSent: false };
const headersTimeout: RetryOutcome = { kind: "timeout", requestSent: true };
const connectTimeout: RetryOutcome = { kind: "timeout", requestSent: false };
const deadline: RetryOutcome = { kind: "timeout", requestSent: true, deadline: true };

describe("shouldRetry: method × outcome", () => {
  const table: [string, RetryOutcome, boolean, boolean][] = [
    // outcome, GET retries?, POST retries?
    ["429", status(429), true, true],
    ["500", status(500), true, false],
    ["502", status(502), true, false],
    ["503", status(503), true, false],
    ["400", status(400), false, false],
    ["401", status(401), false, false],
    ["403", status(403), false, false],
    ["404", status(404), false, false],
    ["409", status(409), false, false],
    ["422", status(422), false, false],
    ["connection refused", refused, true, true],
    ["reset after sending", reset, true, false],
    ["reset, not sent, not refused", resetBefore, true, false],
    ["DNS failure", notFound, true, false],
    ["headers timeout", headersTimeout, true, false],
    ["connect timeout", connectTimeout, true, false],
    ["whole-response deadline (a trickle)", deadline, false, false],
  ];
  test.each(table)("%s: GET %s, POST %s", (_name, outcome, get, post) => {
    expect(shouldRetry({ method: "GET", outcome, attempt: 1, maxAttempts: 4, random: () => 0 }).retry).toBe(get);
    expect(shouldRetry({ method: "POST", outcome, attempt: 1, maxAttempts: 4, random: () => 0 }).retry).toBe(post);
    // An idempotent POST (a judge model's answer: a read) is retried exactly like a GET.
    const idempotent = { method: "POST", outcome, attempt: 1, maxAttempts: 4, random: () => 0, idempotent: true };
    expect(shouldRetry(idempotent).retry).toBe(get);
  });

  test("bounded: no retry once maxAttempts were made, and the reason says how many", () => {
    const last = shouldRetry({ method: "GET", outcome: status(503), attempt: 4, maxAttempts: 4 });
    expect(last).toMatchObject({ retry: false, delayMs: 0 });
    expect(last.reason).toContain("4 attempts");
    expect(shouldRetry({ method: "GET", outcome: status(503), attempt: 3, maxAttempts: 4 }).retry).toBe(true);
  });

  test("a POST that was sent explains why it is not retried", () => {
    expect(shouldRetry({ method: "POST", outcome: reset, attempt: 1, maxAttempts: 4 }).reason).toMatch(
      /may have been acted on/,
    );
  });
});

describe("shouldRetry: delay", () => {
  const at = (attempt: number, random: number) =>
    shouldRetry({
      method: "GET",
      outcome: status(503),
      attempt,
      maxAttempts: 100,
      baseDelayMs: 500,
      random: () => random,
    }).delayMs;

  test("exponential with equal jitter: between half and all of base·2^(attempt-1)", () => {
    expect([at(1, 0), at(1, 0.999)]).toEqual([250, 500]);
    expect([at(2, 0), at(2, 0.5)]).toEqual([500, 750]);
    expect([at(3, 0), at(3, 0.999)]).toEqual([1000, 1999]);
  });

  test("capped at 60 s", () => {
    expect(at(30, 0.999)).toBeLessThanOrEqual(MAX_RETRY_DELAY_MS);
    expect(at(30, 0.999)).toBeGreaterThan(MAX_RETRY_DELAY_MS / 2);
  });

  test("Retry-After in seconds is honoured over the backoff", () => {
    const d = shouldRetry({ method: "POST", outcome: status(429, "7"), attempt: 1, maxAttempts: 4, random: () => 0 });
    expect(d).toMatchObject({ retry: true, delayMs: 7000 });
  });

  test("Retry-After as an HTTP date is honoured", () => {
    const now = Date.parse("2025-06-19T12:00:00Z");
    const d = shouldRetry({
      method: "GET",
      outcome: status(503, "Thu, 19 Jun 2025 12:00:12 GMT"),
      attempt: 1,
      maxAttempts: 4,
      now,
    });
    expect(d.delayMs).toBe(12_000);
  });

  test("Retry-After beyond the cap waits the cap; a past date waits 0; garbage falls back to backoff", () => {
    expect(shouldRetry({ method: "GET", outcome: status(429, "3600"), attempt: 1, maxAttempts: 4 }).delayMs).toBe(
      60_000,
    );
    const now = Date.parse("2025-06-19T12:00:00Z");
    expect(
      shouldRetry({
        method: "GET",
        outcome: status(429, "Thu, 19 Jun 2025 11:00:00 GMT"),
        attempt: 1,
        maxAttempts: 4,
        now,
      }).delayMs,
    ).toBe(0);
    expect(
      shouldRetry({
        method: "GET",
        outcome: status(429, "soon"),
        attempt: 1,
        maxAttempts: 4,
        baseDelayMs: 100,
        random: () => 0,
      }).delayMs,
    ).toBe(50);
  });

  test("parseRetryAfter", () => {
    expect(parseRetryAfter("0", 0)).toBe(0);
    expect(parseRetryAfter("1.5", 0)).toBe(1500);
    expect(parseRetryAfter(undefined, 0)).toBeUndefined();
    expect(parseRetryAfter("", 0)).toBeUndefined();
    expect(parseRetryAfter("-3", 0)).toBeUndefined();
  });
});
