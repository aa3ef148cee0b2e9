// Runs planned calls with bounded concurrency and prints progress: a live transcript on a terminal,
// and each finished call's result lines (src/render's callLines: the unmet expectations with the
// nearest transcript lines). Every planned call gets a result, whatever stopped the others: reports
// can always be written. The closing count is the report's (src/report's terminal summary).
import type { Client } from "../api/index.ts";
import type { Judge } from "../judge/index.ts";
import { callLines, terminalText, transcriptPrinter } from "../render/index.ts";
import { userLabel } from "../results/index.ts";
import { type CallHooks, type CallListener, gateOf, type PlannedCall, type Progress, placeCall } from "./call.ts";
import { scenarioKey } from "./gates.ts";
import { OUTCOME_CODES } from "./outcome.ts";
import { callResult, type ScenarioResult, summarize } from "./reports.ts";
import { Schedule } from "./schedule.ts";

export type Output = { write(text: string): unknown; isTTY?: boolean; columns?: number };

export type RunOptions = {
  concurrency: number;
  out: Output;
  /** Stops the run: calls in flight end `interrupted`, calls still needed and not placed `not_run`. */
  signal?: AbortSignal;
  /** Progress of waiting calls (default: `progressPrinter(out)`). */
  onProgress?: (progress: Progress) => void;
  /** Each result as soon as its call finishes (e.g. to write the reports so far). */
  onResult?: (result: ScenarioResult, results: readonly ScenarioResult[], call: PlannedCall) => unknown;
  /** The calls are one shard's: thresholds are judged only where already missed (see gates.ts). */
  partial?: boolean;
  /** Keep each call's envelopes on its result (for recordings). */
  keepEnvelopes?: boolean;
  /** Stop fixed repeats once their verdict cannot change (default true; see schedule.ts). */
  earlyDecisions?: boolean;
  /** Judges the scenarios' `expect.judge` rubrics. */
  judge?: Judge | undefined;
  /** How the scenarios' callers send their lines, and a persona's model (see CallHooks). */
  caller?: Pick<CallHooks, "callerShape" | "persona" | "variations" | "modelCallerWaitMs">;
};

export async function runCalls(client: Client, planned: PlannedCall[], options: RunOptions): Promise<ScenarioResult[]> {
  // Grows by the calls placed again (a caller that strayed); the planned list is the caller's.
  const calls = [...planned];
  const again = placedAgain(calls);
  const status = new StatusLine(options.out);
  const out: Output = status.output;
  const concurrency = Math.max(1, Math.min(options.concurrency, calls.length));
  const onEvent = out.isTTY ? liveTranscript(out, concurrency === 1) : undefined;
  const onProgress = options.onProgress ?? progressPrinter(status);
  // In planned order, whatever order the calls finish in.
  const slots: (ScenarioResult | undefined)[] = new Array(calls.length).fill(undefined);
  const done = () => slots.filter((r): r is ScenarioResult => r !== undefined);
  const finished = (index: number, result: ScenarioResult) => {
    slots[index] = result;
    out.write(callLines(callResult(result)));
    options.onResult?.(result, done(), calls[index] as PlannedCall);
  };
  const schedule = new Schedule(calls, {
    concurrency,
    partial: options.partial ?? false,
    earlyDecisions: options.earlyDecisions ?? true,
    ...(options.signal ? { signal: options.signal } : {}),
  });
  const worker = async () => {
    for (let index = await schedule.next(); index !== undefined; index = await schedule.next()) {
      const call = calls[index] as PlannedCall;
      const hooks = {
        onEvent,
        onProgress,
        keepEnvelopes: options.keepEnvelopes ?? false,
        judge: options.judge,
        ...options.caller,
        ...(options.signal ? { signal: options.signal } : {}),
      };
      let result: ScenarioResult;
      try {
        result = await placeCall(client, call, hooks);
      } catch (error) {
        // placeCall reports its own failures; this is a bug, and the other calls' results still count.
        result = unplacedResult(call, {
          status: "error",
          outcome: { kind: "error", code: OUTCOME_CODES.internal },
          error: `could not run: ${error instanceof Error ? error.message : String(error)}`,
        });
      }
      finished(index, result);
      // A caller that strayed is placed again; a judge that did not settle is not (the budget counts no such call).
      const strayed = result.outcome.kind === "inconclusive" && result.outcome.code !== OUTCOME_CODES.judgeUnsettled;
      const next = strayed && !options.signal?.aborted ? again(call) : undefined;
      if (next) {
        slots.push(undefined);
        schedule.add(calls.push(next) - 1);
      }
      schedule.finished(index, result.outcome.kind);
    }
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
  for (const index of schedule.unplaced()) {
    const reason = { reason: "the smoke run was stopped first", code: OUTCOME_CODES.runStopped };
    finished(index, notRunResult(calls[index] as PlannedCall, reason));
  }
  const results = done();
  status.clear();
  const summary = summarize(results);
  if (summary.errors > 0) out.write(`${summary.errors} of them could not complete (see above)\n`);
  return results;
}

/**
 * A call whose caller strayed (inconclusive), placed again as its scenario's next iteration: at
 * most once per planned iteration of the scenario (the budget counts this worst case).
 */
function placedAgain(calls: PlannedCall[]): (call: PlannedCall) => PlannedCall | undefined {
  const times = new Map<string, number>();
  return (call) => {
    const key = scenarioKey(call.agent, call.scenario.name, call.versionId);
    const n = times.get(key) ?? 0;
    if (n >= call.scenario.iterations) return undefined;
    times.set(key, n + 1);
    const same = calls.filter((c) => scenarioKey(c.agent, c.scenario.name, c.versionId) === key);
    return { ...call, iteration: Math.max(...same.map((c) => c.iteration)) + 1 };
  };
}

/**
 * Whether a stop cut the run short: a call it ended before its end, or one still needed that it left
 * unplaced. A signal that came once every call had ended on its own stopped nothing: that run is
 * complete, and ends by its results (never 130 beside reports of a complete run).
 */
export function cutShort(results: readonly { outcome: { kind: string; code?: string | null | undefined } }[]): boolean {
  return results.some((r) => r.outcome.kind === "interrupted" || r.outcome.code === OUTCOME_CODES.runStopped);
}

/** Why planned calls were not placed: in words (the call's `error`), and a code for its outcome. */
export type NotRunReason = { reason: string; code?: string };

/** A planned call that was never placed: outcome `not_run`, with why. */
export function notRunResult(call: PlannedCall, why: NotRunReason): ScenarioResult {
  return unplacedResult(call, {
    status: "not_run",
    outcome: { kind: "not_run", ...(why.code ? { code: why.code } : {}) },
    error: `not run: ${why.reason}`,
  });
}

function unplacedResult(call: PlannedCall, end: Pick<ScenarioResult, "status" | "outcome" | "error">): ScenarioResult {
  return {
    agent: call.agent,
    scenario: call.scenario.name,
    iteration: call.iteration,
    versionId: call.versionId,
    transport: call.scenario.transport,
    ...end,
    assertions: [],
    timings: { durationMs: 0 },
    gate: gateOf(call.scenario),
  };
}

/** One waiting call in words: `support/greets#1 waits for …; last seen: …; 104 s left`. */
function progressText(progress: Progress): string {
  const { call } = progress;
  const left = Math.ceil(progress.remainingMs / 1000);
  return terminalText(
    `${call.agent}/${call.scenario.name}#${call.iteration} waits for ${progress.waitingFor}; last seen: ${progress.lastSeen}; ${left} s left`,
  );
}

/** Writes progress to a status line: redrawn in place on a terminal, a line every `everyMs` (15 s) per call in CI. */
export function progressPrinter(status: StatusLine, everyMs = 15_000): (progress: Progress) => void {
  const firstSeen = new Map<PlannedCall, number>();
  const lastPrinted = new Map<PlannedCall, number>();
  return (progress) => {
    if (status.live) return status.show(progressText(progress));
    const now = performance.now();
    const since = lastPrinted.get(progress.call) ?? firstSeen.get(progress.call);
    if (since === undefined) firstSeen.set(progress.call, now);
    else if (now - since >= everyMs) {
      lastPrinted.set(progress.call, now);
      status.output.write(`… ${progressText(progress)}\n`);
    }
  };
}

/** A terminal's last line kept for progress: cleared before anything else is written. */
export class StatusLine {
  readonly live: boolean;
  readonly output: Output;
  #shown = false;
  #atLineStart = true;
  readonly #out: Output;

  constructor(out: Output) {
    this.#out = out;
    this.live = Boolean(out.isTTY);
    this.output = {
      isTTY: out.isTTY,
      ...(out.columns === undefined ? {} : { columns: out.columns }),
      write: (text: string) => {
        this.clear();
        if (text.length > 0) this.#atLineStart = text.endsWith("\n");
        return out.write(text);
      },
    };
  }

  show(text: string): void {
    // A line being written (streamed agent text) is not overwritten: the status waits for its end.
    if (!this.#atLineStart) return;
    const width = Math.max(20, (this.#out.columns ?? 100) - 1);
    this.#out.write(`\r\x1b[2K${text.length > width ? `${text.slice(0, width - 1)}…` : text}`);
    this.#shown = true;
  }

  clear(): void {
    if (this.#shown) this.#out.write("\r\x1b[2K");
    this.#shown = false;
  }
}

/** Each call's transcript as it grows; agent text streams when one call runs at a time. */
function liveTranscript(out: Output, streamText: boolean): CallListener {
  const printers = new Map<PlannedCall, ReturnType<typeof transcriptPrinter>>();
  return (call, envelope, by) => {
    let printer = printers.get(call);
    if (!printer) {
      const prefix = `  ${call.agent}/${call.scenario.name}#${call.iteration} │ `;
      printer = transcriptPrinter((text) => out.write(text), { prefix, streamText });
      printers.set(call, printer);
    }
    // A call with a caller labels each user line by who said it, as its reports do.
    printer(envelope, by && userLabel(by));
  };
}
