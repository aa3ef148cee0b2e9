// Runs planned calls with bounded concurrency and prints progress: a live transcript on a terminal,
// one line per finished scenario otherwise (CI), and the closing `N passed, N failed` line.
import type { Client, EventEnvelope } from "../api/index.ts";
import { transcriptPrinter } from "../commands/transcript.ts";
import { type CallListener, type PlannedCall, placeCall } from "./call.ts";
import { type ScenarioResult, summarize, testcaseName } from "./reports.ts";

export type Output = { write(text: string): unknown; isTTY?: boolean };

export async function runCalls(
  client: Client,
  calls: PlannedCall[],
  options: { concurrency: number; out: Output },
): Promise<ScenarioResult[]> {
  const { out } = options;
  const concurrency = Math.max(1, Math.min(options.concurrency, calls.length));
  const listener = out.isTTY ? liveTranscript(out, concurrency === 1) : undefined;
  const results: ScenarioResult[] = new Array(calls.length);
  let next = 0;
  const worker = async () => {
    while (next < calls.length) {
      const index = next++;
      const call = calls[index] as PlannedCall;
      const result = await placeCall(client, call, listener);
      results[index] = result;
      out.write(`${resultLine(result)}\n`);
    }
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
  const summary = summarize(results);
  if (summary.errors > 0) out.write(`${summary.errors} of them could not complete (see above)\n`);
  out.write(`${summary.passed} passed, ${summary.failed + summary.errors} failed\n`);
  return results;
}

export function resultLine(result: ScenarioResult): string {
  const name = `${result.agent}/${testcaseName(result)}`;
  const where = `${result.versionId}${result.conversationId ? `, ${result.conversationId}` : ""}`;
  const time = `${(result.timings.durationMs / 1000).toFixed(1)} s`;
  if (result.status === "passed") return `✓ ${name} (${where}) ${result.assertions.length} checks, ${time}`;
  if (result.status === "error") return `! ${name} (${where}) ${result.error}`;
  const failed = result.assertions.filter((a) => !a.passed);
  const reasons =
    failed.length > 0 ? failed.map((a) => `${a.description}: ${a.detail}`).join("; ") : "nothing was checked";
  return `✗ ${name} (${where}) ${reasons}`;
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
