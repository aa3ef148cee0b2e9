// Clean interruption of a Pulumi run. SIGINT/SIGTERM to agent-iac (the command lifecycle, in
// src/commands/lifecycle.ts, owns the process's handlers and tells `interrupts`) reach the Pulumi CLI through the
// Automation API's `signal` (it sends the CLI one SIGINT: a graceful cancel that lets the steps in
// flight finish, saves the state and unlocks the stack). A Ctrl+C on a terminal already reaches
// the CLI itself (same process group), and a second SIGINT would make it stop at once, leaving the
// lock: so the signal is forwarded only when the CLI has not said within a moment that it is
// cancelling.
import { setImmediate, setTimeout as sleep } from "node:timers/promises";
import * as pulumi from "@pulumi/pulumi";
import { InterruptedError, StackLockedError } from "../errors/index.ts";

/** How long to wait for the CLI to react to a terminal's Ctrl+C before forwarding the signal. */
const FORWARD_AFTER_MS = 750;

export type InterruptibleRun = {
  signal: AbortSignal;
  /** Pass the CLI's output through this (it also watches for the CLI's own cancel notice). */
  onOutput: (text: string) => void;
  /** Only watches the CLI's output for its cancel notice (for output that is not shown). */
  watch: (text: string) => void;
  /** The signal received, if any. */
  interrupted(): NodeJS.Signals | undefined;
};

/** Subscribes a listener to the process's SIGINT/SIGTERM (repeat: not the first); returns the unsubscribe. */
export type Interrupts = (listener: (signal: NodeJS.Signals, repeat: boolean) => void) => () => void;

/**
 * Runs `work` with SIGINT/SIGTERM forwarded to it as an abort, waits for it to finish, and then
 * throws an InterruptedError when it was interrupted. Nothing is killed here: the Pulumi CLI stops
 * its own plugins, and the caller's `finally` (e.g. the embedded simulator) runs after it.
 */
export async function interruptible<T>(
  write: (text: string) => void,
  work: (run: InterruptibleRun) => Promise<T>,
  interrupts: Interrupts,
): Promise<T> {
  const controller = new AbortController();
  let received: NodeJS.Signals | undefined;
  let cliCancelling = false;
  const onSignal = async (signal: NodeJS.Signals) => {
    if (received) {
      write(`\n${signal}: still waiting for Pulumi to finish the operations in flight and unlock the stack\n`);
      return;
    }
    received = signal;
    write(`\n${signal}: cancelling the Pulumi run (the operations in flight finish first)\n`);
    await sleep(FORWARD_AFTER_MS);
    // A busy event loop runs this timer before it reads the output that arrived meanwhile: read it
    // first (setImmediate runs after the loop's I/O), or the CLI's own notice is missed and a second
    // SIGINT stops it at once, leaving the stack locked.
    await setImmediate();
    if (!cliCancelling) controller.abort(new Error(`interrupted by ${signal}`));
  };
  const release = interrupts((signal) => void onSignal(signal));
  const watch = (text: string) => {
    if (/received; cancelling/i.test(text)) cliCancelling = true;
  };
  const run: InterruptibleRun = {
    signal: controller.signal,
    watch,
    onOutput: (text) => {
      watch(text);
      write(text);
    },
    interrupted: () => received,
  };
  try {
    const result = await work(run);
    if (received) throw interruptedError(received);
    return result;
  } catch (error) {
    if (received) throw interruptedError(received, error);
    throw error;
  } finally {
    release();
  }
}

function interruptedError(signal: NodeJS.Signals, cause?: unknown): InterruptedError {
  const locked = cause !== undefined && isLockError(cause);
  return new InterruptedError(signal, `the Pulumi run was cancelled${locked ? "" : "; the stack is unlocked"}`, {
    cause,
    hint: "run the same command again: it continues from what the stack holds",
  });
}

/** Pulumi's refusal to run on a locked stack (the Automation API's own ConcurrentUpdateError). */
export function isLockError(error: unknown): boolean {
  return error instanceof pulumi.automation.ConcurrentUpdateError;
}

/** When a run failed because the stack is locked: what happened and the exact recovery. */
export function lockedStackError(
  error: unknown,
  stackName: string,
  env: Record<string, string>,
  rerun: string,
): StackLockedError | undefined {
  if (!isLockError(error)) return undefined;
  const backend = env.PULUMI_BACKEND_URL ? `PULUMI_BACKEND_URL=${env.PULUMI_BACKEND_URL} ` : "";
  return new StackLockedError(
    stackName,
    `stack ${stackName} is locked: another update is running, or one was stopped before it could unlock the stack. Nothing was changed by this run.`,
    {
      cause: error,
      hint:
        "If no other `pulumi up` or `npm start` is running on this stack, remove the lock and run again:\n" +
        `  ${backend}pulumi cancel --stack ${stackName} --yes\n  ${rerun}`,
    },
  );
}
