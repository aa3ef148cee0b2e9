// One command lifecycle. Every command runs inside `runCommand` (src/cli.ts), which owns:
// - SIGINT and SIGTERM: the only process signal handlers of agent-iac. A command that can stop
//   cleanly takes an `interruption()` (its AbortSignal stops placing calls and aborts the calls in
//   flight; the command then writes its reports with every call's result) and ends with
//   `interrupted(...)`: one line, exit 130. While no command part listens, a signal ends the
//   process at once with exit 130.
// - the client for the service, which says each retry on stderr (`serviceClient`, or
//   `withRetryLines` for the runners that open their own), closed when the command ends;
// - the service's errors, said as one message for the connection the command used.
import path from "node:path";
import type { Client, RetryNotice } from "../api/index.ts";
import { createClient } from "../api/index.ts";
import { CliError, retryLine } from "../errors/index.ts";
import { type CallOutcomeKind, finishedCalls, reportPath } from "../report/index.ts";
import type { Connection, ResolvedConnection } from "../settings/index.ts";
import { explainServiceError } from "./connect.ts";

/** Told of each signal; `repeat` is true from the second one on. */
export type InterruptListener = (signal: NodeJS.Signals, repeat: boolean) => void;

const listeners = new Set<InterruptListener>();
const clients = new Set<Client>();
let received: NodeJS.Signals | undefined;
let connection: Connection | undefined;

function onSignal(signal: NodeJS.Signals): void {
  const repeat = received !== undefined;
  received ??= signal;
  if (listeners.size === 0) {
    // Nothing in flight that could stop cleanly (reading files, building the toolchain, a list).
    process.stderr.write(`\ninterrupted (${signal})\n`);
    process.exit(130);
  }
  for (const listener of [...listeners]) listener(signal, repeat);
}

/** Runs a command: signals, clients and service errors as described above. */
export async function runCommand(body: () => Promise<number>): Promise<number> {
  process.on("SIGINT", onSignal);
  process.on("SIGTERM", onSignal);
  try {
    return await body();
  } catch (error) {
    throw connection ? explainServiceError(error, connection) : error;
  } finally {
    process.off("SIGINT", onSignal);
    process.off("SIGTERM", onSignal);
    await Promise.all([...clients].map((client) => client.close().catch(() => {})));
    clients.clear();
  }
}

/** Listens for SIGINT/SIGTERM until the returned function is called. */
export function onInterrupt(listener: InterruptListener): () => void {
  listeners.add(listener);
  return () => listeners.delete(listener);
}

/** The signal received by this process, if any. */
export const interruptedBy = (): NodeJS.Signals | undefined => received;

export type Interruption = {
  /** Aborted at the first SIGINT/SIGTERM (at once when one came before). */
  signal: AbortSignal;
  /** Stops listening (the command's part that could stop cleanly is over). */
  release(): void;
};

/** From now on a signal aborts `signal` instead of ending the process. */
export function interruption(): Interruption {
  const controller = new AbortController();
  const abort = (signal: NodeJS.Signals) => controller.abort(new Error(`interrupted by ${signal}`));
  if (received) abort(received);
  const release = onInterrupt((signal) => abort(signal));
  return { signal: controller.signal, release };
}

/** Resolves with the first SIGINT/SIGTERM (e.g. to stop a server). */
export function untilInterrupted(): Promise<NodeJS.Signals> {
  return new Promise((resolve) => {
    if (received) return resolve(received);
    const off = onInterrupt((signal) => {
      off();
      resolve(signal);
    });
  });
}

/** An interrupted run's end: one line, exit 130 (src/cli.ts prints it without a label). */
export class Interrupted extends CliError {
  override name = "Interrupted";
}

export type InterruptedRun = {
  /** Every planned call's result: those that ended on their own count as finished. */
  calls: readonly { outcome: { kind: CallOutcomeKind } }[];
  /** The report files written with every call's result. */
  reports: readonly string[];
  /** Said after the counts (e.g. "after `pulumi up` completed"). */
  phase?: string;
};

/** `interrupted: N of M calls finished; reports in reports/smoke.json, …` */
export function interrupted(run: InterruptedRun): Interrupted {
  // Where src/report wrote them: a bare name under reports/.
  const files = run.reports.map((file) => path.relative(process.cwd(), path.resolve(reportPath(file))) || file);
  const where = files.length > 0 ? `; reports in ${files.join(", ")}` : "; no report was asked for";
  const phase = run.phase ? ` (${run.phase})` : "";
  const finished = finishedCalls(run.calls);
  return new Interrupted(`interrupted: ${finished} of ${run.calls.length} calls finished${phase}${where}`, 130);
}

/** An interrupted run that places no calls (a stream, a read of the traffic): `interrupted: <what>`. */
export function interruptedWhile(what: string): Interrupted {
  return new Interrupted(`interrupted: ${what}`, 130);
}

export const printRetry = (notice: RetryNotice): void => {
  process.stderr.write(`${retryLine(notice)}\n`);
};

/** The connection the command talks to: its errors are explained in its terms. */
export function useConnection(given: Connection): void {
  connection = given;
}

/** A connection for runners that open their own client: each retry said on stderr. */
export function withRetryLines<C extends ResolvedConnection>(resolved: C): C & { onRetry: typeof printRetry } {
  return { ...resolved, onRetry: printRetry };
}

/** A client on the connection that says each retry on stderr; closed when the command ends. */
export function serviceClient(resolved: ResolvedConnection | { baseUrl: string; apiKey?: undefined }): Client {
  const client = createClient({ ...resolved, onRetry: printRetry });
  clients.add(client);
  return client;
}
