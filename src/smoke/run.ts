// Runs planned calls with bounded concurrency and prints progress: a live transcript on a terminal,
// one line per finished scenario otherwise (CI), and the closing `N passed, N failed` line. Every
// planned call gets a result, whatever stopped the others: reports can always be written.
import type { Client, EventEnvelope } from "../api/index.ts";
import { terminalText, transcriptPrinter } from "../render/index.ts";
import type { ScenarioSummary } from "../report/index.ts";
import { type CallListener, gateOf, type PlannedCall, type Progress, placeCall } from "./call.ts";
import { type ScenarioResult, scenarioSummaries, summarize, testcaseName } from "./reports.ts";

export type Output = { write(text: string): unknown; isTTY?: boolean; columns?: number };

export type RunOptions = {
  concurrency: number;
  out: Output;
  /** Stops the run: calls in flight end as "interrupted", calls not started are reported as not run. */
  signal?: AbortSignal;
  /** Progress of waiting calls (default: `progressPrinter(out)`). */
  onProgress?: (progress: Progress) => void;
  /** Each result as soon as its call finishes (e.g. to write the reports so far). */
  onResult?: (result: ScenarioResult, results: readonly ScenarioResult[], call: PlannedCall) => unknown;
  /** The calls are one shard's: thresholds are judged only where already missed (see gates.ts). */
  partial?: boolean;
  /** Keep each call's envelopes on its result (for recordings). */
  keepEnvelopes?: boolean;
};

export async function runCalls(client: Client, calls: PlannedCall[], options: RunOptions): Promise<ScenarioResult[]> {
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
    // The line quotes the service (an error, what the agent said): shown escaped, one line.
    out.write(`${terminalText(resultLine(result))}\n`);
    options.onResult?.(result, done(), calls[index] as PlannedCall);
  };
  let next = 0;
  const worker = async () => {
    while (next < calls.length && !options.signal?.aborted) {
      const index = next++;
      const call = calls[index] as PlannedCall;
      const hooks = {
        onEvent,
        onProgress,
        keepEnvelopes: options.keepEnvelopes ?? false,
        ...(options.signal ? { signal: options.signal } : {}),
      };
      try {
        finished(index, await placeCall(client, call, hooks));
      } catch (error) {
        // placeCall reports its own failures; this is a bug, and the other calls' results still count.
        finished(index, notRun(call, `could not run: ${error instanceof Error ? error.message : String(error)}`));
      }
    }
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
  for (let index = next; index < calls.length; index++) {
    finished(index, notRun(calls[index] as PlannedCall, "not run: the smoke run was stopped first"));
  }
  const results = done();
  status.clear();
  const summary = summarize(results);
  if (summary.errors > 0) out.write(`${summary.errors} of them could not complete (see above)\n`);
  out.write(closingLines(scenarioSummaries(results, { partial: options.partial ?? false })));
  return results;
}

const percent = (x: number) => `${Math.round(x * 100)} %`;

/** A scenario's gate in words: `support/greets: 8/10 passed (80 %, 95 % CI 49–94 %, min_pass 8) flaky`. */
export function scenarioLine(s: ScenarioSummary): string {
  const rate = s.pass_rate
    ? ` (${percent(s.pass_rate.value)}, 95 % CI ${Math.round(s.pass_rate.low * 100)}–${percent(s.pass_rate.high)}, min_pass ${s.min_pass})`
    : "";
  const l = s.latency;
  const ms = (name: string, v: number | null | undefined) => {
    const bound = l?.bounds[name];
    return v === null || v === undefined
      ? ""
      : `${name.replace(/_ms$/, "")} ${v} ms${bound !== undefined ? ` (≤ ${bound})` : ""}`;
  };
  const measured = l
    ? [
        ms("first_response_ms", l.first_response_ms),
        ms("response_p50_ms", l.response_p50_ms),
        ms("response_p95_ms", l.response_p95_ms),
        ms("tool_ms", l.tool_ms),
      ].filter(Boolean)
    : [];
  const exceeded = l && l.exceeded.length > 0 ? `; exceeded: ${l.exceeded.join(", ")}` : "";
  const latency = measured.length > 0 || exceeded ? `; latency ${measured.join(", ")}${exceeded}` : "";
  return `${s.agent}/${s.scenario}: ${s.passes}/${s.iterations} passed${rate} → ${s.verdict}${latency}`;
}

/** One line per scenario, then `N passed, N failed[, N flaky]` (scenarios; a flaky one passed). */
export function closingLines(scenarios: readonly ScenarioSummary[]): string {
  const count = (...verdicts: string[]) => scenarios.filter((s) => verdicts.includes(s.verdict)).length;
  const flaky = count("flaky");
  const lines = scenarios.filter((s) => s.verdict !== "not_run").map(scenarioLine);
  lines.push(
    `${count("passed", "flaky")} passed, ${count("failed", "error")} failed${flaky > 0 ? `, ${flaky} flaky` : ""}`,
  );
  return `${lines.join("\n")}\n`;
}

function notRun(call: PlannedCall, error: string): ScenarioResult {
  return {
    agent: call.agent,
    scenario: call.scenario.name,
    iteration: call.iteration,
    versionId: call.versionId,
    transport: call.scenario.transport,
    status: "error",
    error,
    assertions: [],
    timings: { durationMs: 0 },
    gate: gateOf(call.scenario),
  };
}

function resultLine(result: ScenarioResult): string {
  const name = `${result.agent}/${testcaseName(result)}`;
  const where = `${result.versionId}${result.conversationId ? `, ${result.conversationId}` : ""}`;
  const time = `${(result.timings.durationMs / 1000).toFixed(1)} s`;
  const byName = result.observation?.procedures.some((p) => p.matchedBy === "name")
    ? " (procedures matched by name: this is not the stack's current version)"
    : "";
  if (result.status === "passed") return `✓ ${name} (${where}) ${result.assertions.length} checks, ${time}${byName}`;
  if (result.status === "error") return `! ${name} (${where}) ${result.error}`;
  const failed = result.assertions.filter((a) => !a.passed);
  const reasons =
    failed.length > 0 ? failed.map((a) => `${a.description}: ${a.detail}`).join("; ") : "nothing was checked";
  return `✗ ${name} (${where}) ${reasons}`;
}

/** One waiting call in words: `support/greets#1 waits for …; last seen: …; 104 s left`. */
export function progressText(progress: Progress): string {
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
  const printers = new Map<PlannedCall, (envelope: EventEnvelope) => void>();
  return (call, envelope) => {
    let printer = printers.get(call);
    if (!printer) {
      const prefix = `  ${call.agent}/${call.scenario.name}#${call.iteration} │ `;
      printer = transcriptPrinter((text) => out.write(text), { prefix, streamText });
      printers.set(call, printer);
    }
    printer(envelope);
  };
}
