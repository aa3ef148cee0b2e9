// What a command's use case ends with, and what a command hands it of its run. The command keeps
// its flags, its help, the writing of the report (emitReport) and of the notes, and the mapping of
// errors to exit codes; the workflow in between is the use case's.
import type { RetryNotice } from "../api/index.ts";
import type { Connection } from "../settings/index.ts";
import type { Interrupts } from "../workspace/index.ts";

/**
 * A command's run as it ended: the report the command emits (undefined where the run ends without
 * one: a dry run, a deploy without smoke calls), the notes it says on stderr after the report, and
 * the exit code by the one exit rule (the report's; 0 without one).
 */
export type CommandOutcome<R> = { report: R | undefined; notes: string[]; code: number };

/** Where a run's progress goes. */
type Output = { write(text: string): unknown; isTTY?: boolean | undefined; columns?: number | undefined };

/** What a command hands its use case of its run (its CommandIO, seen from below). */
export type RunIO = {
  /** Progress and each call's lines. */
  out: Output;
  /** Warnings, said as they come (before a long run, or before an error ends it). */
  warn: (text: string) => void;
  onRetry?: ((notice: RetryNotice) => void) | undefined;
  /** The connection the run talks to: the command says the service's errors in its terms. */
  useConnection: (connection: Connection) => void;
  /**
   * From now on a signal aborts the returned AbortSignal instead of ending the run; `release()`
   * says the run's result is final. Taken where the run can stop cleanly (a signal before that ends
   * the command at once), so the use case takes it, not the command.
   */
  interruption: () => { signal: AbortSignal; release(): void };
  /** SIGINT/SIGTERM as they come: the Pulumi CLI is asked to cancel gracefully. */
  interrupts: Interrupts;
};
