// Runs planned calls with bounded concurrency and prints progress: a live transcript on a terminal,
// one line per finished scenario otherwise (CI), and the closing `N passed, N failed` line.
import type { Client, EventEnvelope } from "../api/index.ts";
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

/** Prints each call's events as they arrive; agent text streams when one call runs at a time. */
function liveTranscript(out: Output, streamText: boolean): CallListener {
  let openGeneration: string | undefined;
  return (call, envelope: EventEnvelope) => {
    const prefix = `  ${call.agent}/${call.scenario.name}#${call.iteration} │ `;
    const payload = envelope.payload as Record<string, unknown> & { type: string };
    const closeLine = () => {
      if (openGeneration !== undefined) out.write("\n");
      openGeneration = undefined;
    };
    switch (payload.type) {
      case "agent.message.delta":
        if (!streamText) return;
        if (openGeneration !== payload.generation_id) {
          closeLine();
          openGeneration = String(payload.generation_id);
          out.write(`${prefix}agent: `);
        }
        out.write(String(payload.text_delta ?? ""));
        return;
      case "agent.message.completed":
        if (streamText && openGeneration === payload.generation_id) return closeLine();
        closeLine();
        out.write(`${prefix}agent: ${payload.text}\n`);
        return;
      case "user.message.received":
        closeLine();
        out.write(`${prefix}user: ${payload.text}\n`);
        return;
      case "agent.tool_call.created":
        closeLine();
        out.write(`${prefix}tool ${payload.name}(${JSON.stringify(payload.arguments ?? {})})\n`);
        return;
      case "agent.tool_call.returned":
        closeLine();
        out.write(
          `${prefix}tool ${payload.name} → ${JSON.stringify(payload.error !== undefined && payload.error !== null ? { error: payload.error } : (payload.result ?? null))}\n`,
        );
        return;
      case "server.error":
        closeLine();
        out.write(`${prefix}error: ${JSON.stringify(payload.error ?? null)}\n`);
        return;
      case "conversation.ended":
        closeLine();
        out.write(`${prefix}(ended)\n`);
        return;
      default:
        return;
    }
  };
}
