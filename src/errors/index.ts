// The one error type a command throws to stop with a message: src/cli.ts prints it and exits with
// its code (0 ok, 1 failed check, 2 usage or configuration error, 3 service or backend failure, 130 interrupted).
// Anything else that reaches src/cli.ts is a bug.
import type { RetryNotice } from "../api/index.ts";

/** 130: stopped by SIGINT/SIGTERM (the shell convention, 128 + 2). */
export type ExitCode = 1 | 2 | 3 | 130;

export class CliError extends Error {
  override name = "CliError";
  readonly exitCode: ExitCode;
  /** What to do about it, printed after the message (e.g. a command to run, or the usage). */
  readonly hint: string | undefined;
  /** Printed before the message (e.g. each invalid file's file:line). */
  readonly details: string | undefined;
  constructor(
    message: string,
    exitCode: ExitCode,
    options: { hint?: string | undefined; cause?: unknown; details?: string } = {},
  ) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.exitCode = exitCode;
    this.hint = options.hint;
    this.details = options.details;
  }
}

/** A usage or configuration error: the caller must change a flag, a file or a setting. */
export const usageError = (message: string, hint?: string) => new CliError(message, 2, hint ? { hint } : {});

/** One line per retried request (the client's onRetry notice): status or network code, route, wait, attempt n of m. */
export function retryLine(notice: RetryNotice): string {
  const wait = notice.delayMs >= 1000 ? `${(notice.delayMs / 1000).toFixed(1)} s` : `${notice.delayMs} ms`;
  return `retrying ${notice.method} ${notice.path} after ${notice.reason} in ${wait} (attempt ${notice.attempt + 1} of ${notice.maxAttempts})`;
}
