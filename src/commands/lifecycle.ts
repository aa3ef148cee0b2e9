// One command lifecycle per run. A command gets a `CommandIO`: its two output streams and what
// its run owns — nothing else of the process, so a test runs a command in-process and reads what
// it said. The run owns:
// - SIGINT and SIGTERM, delivered with `io.signal(…)` (the process entry, src/cli.ts, forwards the
//   process's; a test may call it). A command that can stop cleanly takes an `interruption()` (its
//   AbortSignal stops placing calls and aborts the calls in flight; the command then writes its
//   reports with every call's result) and ends with `interrupted(...)`: one line, exit 130. Its
//   `release()` says the run's result is final (its report made): from then on a signal changes
//   nothing, so the run writes that result's reports and ends by them (ending at once instead left
//   no reports, or exit 130 beside reports of a run that was not interrupted). Before any part of
//   the command listens, a signal ends the run at once (`onIdleSignal`).
// - the report files it was asked for, from its first moment (`claimReports`, before the command
//   is even loaded): an earlier run's files of those names are removed then, so an interrupted or
//   failed run never leaves another run's reports (green or not) where its own were asked for.
//   Signals that come before (while the command's code loads) are held and delivered right after.
// - how a retried request is said (`printRetry`, on stderr), handed to the use cases, which open
//   and close their own clients for the service (a command gets none);
// - the connection the command talks to, in whose terms the service's errors are said (./errors.ts).
import { existsSync } from "node:fs";
import { rm } from "node:fs/promises";
import path from "node:path";
import { InterruptedError, type RetryNotice, retryLine } from "../errors/index.ts";
import { reportPath } from "../report/index.ts";
import { type CallOutcomeKind, finishedCalls } from "../results/index.ts";
import { type Connection, type ProjectContext, projectContext } from "../settings/index.ts";

/** Told of each signal; `repeat` is true from the second one on. */
export type InterruptListener = (signal: NodeJS.Signals, repeat: boolean) => void;

export type Output = { write(text: string): unknown; isTTY?: boolean | undefined; columns?: number | undefined };

export type Interruption = {
  /** Aborted at the first SIGINT/SIGTERM (at once when one came before). */
  signal: AbortSignal;
  /** The run's result is final: a later signal neither aborts nor ends the run (it writes its reports). */
  release(): void;
};

/** Told of a signal nothing listens for; `note` says which asked-for reports are not written. */
export type IdleSignalHandler = (signal: NodeJS.Signals, note: string) => void;

export class CommandIO {
  readonly stdout: Output;
  readonly stderr: Output;
  /** The run's directory (the process's by default): the use cases read it, never the process's. */
  readonly cwd: string;
  #env: NodeJS.ProcessEnv;
  #project: ProjectContext;
  #debug: boolean;
  readonly #onIdleSignal: IdleSignalHandler;
  readonly #listeners = new Set<InterruptListener>();
  #received: NodeJS.Signals | undefined;
  #connection: Connection | undefined;
  /** Signals received before the run claimed its reports; undefined once it has. */
  #held: NodeJS.Signals[] | undefined = [];
  #claimed: readonly string[] = [];
  /** An interruption was released: the run's result is final, the run is ending by it. */
  #final = false;

  /** Stdout's reader is gone: what the run still says there is dropped. */
  #stdoutClosed = false;

  /** `onIdleSignal`: a signal with nothing listening ends the run (the process: exit 130 at once). */
  constructor(
    streams: { stdout: Output; stderr: Output; env?: NodeJS.ProcessEnv; cwd?: string },
    onIdleSignal: IdleSignalHandler,
  ) {
    const out = streams.stdout;
    this.stdout = {
      write: (text) => this.#stdoutClosed || out.write(text),
      get isTTY() {
        return out.isTTY;
      },
      get columns() {
        return out.columns;
      },
    };
    this.stderr = streams.stderr;
    // The process entry's own environment and directory when the run is given none.
    this.#env = streams.env ?? process.env;
    this.cwd = streams.cwd ?? process.cwd();
    this.#project = projectContext({ cwd: this.cwd, env: this.#env, processEnv: process.env });
    this.#debug = this.#env.AGENT_IAC_DEBUG === "1";
    this.#onIdleSignal = onIdleSignal;
  }

  /** The run's environment (the process's by default): the use cases read it, never the process's. */
  get env(): NodeJS.ProcessEnv {
    return this.#env;
  }

  /** The project the run works in, built from `cwd` and `env`. */
  get project(): ProjectContext {
    return this.#project;
  }

  /** --debug or AGENT_IAC_DEBUG=1: errors keep their stack traces. */
  get debug(): boolean {
    return this.#debug;
  }

  /**
   * --debug: the run's environment says AGENT_IAC_DEBUG=1 from now on, so the Pulumi program (its
   * own process, or inline) keeps its stack traces too; the process's environment is left alone.
   */
  enableDebug(): void {
    if (this.#env.AGENT_IAC_DEBUG !== "1") {
      this.#env = { ...this.#env, AGENT_IAC_DEBUG: "1" };
      this.#project = projectContext({ cwd: this.cwd, env: this.#env, processEnv: process.env });
    }
    this.#debug = true;
  }

  /** Delivers SIGINT/SIGTERM to the run (held until it has claimed its reports). */
  readonly signal = (signal: NodeJS.Signals): void => {
    if (this.#held) {
      this.#held.push(signal);
      return;
    }
    const repeat = this.#received !== undefined;
    this.#received ??= signal;
    if (this.#listeners.size > 0) {
      for (const listener of [...this.#listeners]) listener(signal, repeat);
    } else if (!this.#final) {
      // Nothing in flight that could stop cleanly (reading files, building the toolchain, a list).
      this.#onIdleSignal(signal, this.#unwrittenNote());
    }
  };

  /**
   * The run's first moment: removes the files of the reports it was asked for (an earlier run's;
   * the run writes its own later), then delivers the signals held until now. Once per run.
   */
  async claimReports(files: readonly string[]): Promise<void> {
    if (!this.#held) return;
    // A file that cannot be removed cannot be written either: the run's write says so.
    await Promise.all(files.map((file) => rm(path.resolve(this.cwd, file), { force: true }).catch(() => undefined)));
    this.#claimed = files;
    const held = this.#held;
    this.#held = undefined;
    for (const signal of held) this.signal(signal);
  }

  /** `; no report written (reports/a.json removed: not this run's)` for the claimed files not written. */
  #unwrittenNote(): string {
    const missing = this.#claimed
      .filter((file) => !existsSync(path.resolve(this.cwd, file)))
      .map((file) => path.relative(this.cwd, path.resolve(this.cwd, file)) || file);
    return missing.length > 0 ? `; no report written (${missing.join(", ")} removed: not this run's)` : "";
  }

  /**
   * Stdout's reader is gone (EPIPE: `… | head`, or a `| tee` that the same Ctrl+C ended). A run with
   * report files to write, or one being stopped, goes on without its stdout and still ends by its
   * result, reports written (true); any other may end quietly (false): the reader has what it asked for.
   */
  stdoutClosed(): boolean {
    this.#stdoutClosed = true;
    return this.#claimed.length > 0 || this.#received !== undefined;
  }

  /** Listens for SIGINT/SIGTERM until the returned function is called. */
  readonly onInterrupt = (listener: InterruptListener): (() => void) => {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  };

  /** The signal received by this run, if any. */
  get interruptedBy(): NodeJS.Signals | undefined {
    return this.#received;
  }

  /** From now on a signal aborts `signal` instead of ending the run; after `release()` it changes nothing. */
  interruption(): Interruption {
    const controller = new AbortController();
    const abort = (signal: NodeJS.Signals) => controller.abort(new Error(`interrupted by ${signal}`));
    if (this.#received) abort(this.#received);
    this.#final = false;
    const off = this.onInterrupt((signal) => abort(signal));
    const release = () => {
      off();
      this.#final = true;
    };
    return { signal: controller.signal, release };
  }

  /** Resolves with the first SIGINT/SIGTERM (e.g. to stop a server). */
  untilInterrupted(): Promise<NodeJS.Signals> {
    return new Promise((resolve) => {
      if (this.#received) return resolve(this.#received);
      const off = this.onInterrupt((signal) => {
        off();
        resolve(signal);
      });
    });
  }

  /** Says a retried request on stderr. */
  readonly printRetry = (notice: RetryNotice): void => {
    this.stderr.write(`${retryLine(notice)}\n`);
  };

  /** The connection the command talks to: the service's errors are explained in its terms. */
  useConnection(given: Connection): void {
    this.#connection = given;
  }

  /** The connection the command said it talks to, if any. */
  get connection(): Connection | undefined {
    return this.#connection;
  }
}

/** The process's own streams; a signal nothing listens for ends the process with exit 130. */
export function processIO(): CommandIO {
  return new CommandIO({ stdout: process.stdout, stderr: process.stderr }, (signal, note) => {
    process.stderr.write(`\ninterrupted (${signal})${note}\n`);
    process.exit(130);
  });
}

export type InterruptedRun = {
  /** Every planned call's result: those that ended on their own count as finished. */
  calls: readonly { outcome: { kind: CallOutcomeKind } }[];
  /** The report files written with every call's result. */
  reports: readonly string[];
  /** Said after the counts (e.g. "after `pulumi up` completed"). */
  phase?: string;
  /** The run's directory: where the report paths are said from. */
  cwd: string;
};

/** `interrupted: N of M calls finished; reports in reports/smoke.json, …` (said without a label, exit 130). */
export function interrupted(run: InterruptedRun): InterruptedError {
  // Where src/report wrote them: a bare name under reports/.
  const files = run.reports.map((file) => shownPath(reportPath(file), run.cwd));
  const where = files.length > 0 ? `; reports in ${files.join(", ")}` : "; no report was asked for";
  const phase = run.phase ? ` (${run.phase})` : "";
  const finished = finishedCalls(run.calls);
  return new InterruptedError(undefined, `${finished} of ${run.calls.length} calls finished${phase}${where}`);
}

/** A written file's path as said: relative to the run's directory. */
function shownPath(file: string, cwd: string): string {
  return path.relative(cwd, path.resolve(cwd, file)) || file;
}

/** An interrupted run that places no calls (a stream, a read of the traffic): `interrupted: <what>`. */
export function interruptedWhile(what: string): InterruptedError {
  return new InterruptedError(undefined, what);
}
