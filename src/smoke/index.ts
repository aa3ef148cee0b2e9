// Pinned-version smoke calls: plan the calls, place them, evaluate, report.
import { writeFile } from "node:fs/promises";
import { type ClientOptions, createClient } from "../api/index.ts";
import type { AgentDefinition } from "../definitions/index.ts";
import type { Progress } from "./call.ts";
import { type AgentOutput, planCalls, type Selection } from "./plan.ts";
import { jsonReport, junitReport, type ScenarioResult } from "./reports.ts";
import { type Output, runCalls } from "./run.ts";

export type { Progress } from "./call.ts";
export { type AgentOutput, UsageError } from "./plan.ts";
export type { ScenarioResult } from "./reports.ts";

/** 0 all passed; 1 an expectation failed; 3 a call could not complete (service or stream). */
function exitCodeFor(results: ScenarioResult[]): number {
  if (results.some((r) => r.status === "error")) return 3;
  if (results.some((r) => r.status === "failed")) return 1;
  return 0;
}

export type SmokeOptions = {
  definitions: AgentDefinition[];
  outputs: Record<string, AgentOutput> | undefined;
  selection: Selection;
  connection: { baseUrl: string; apiKey: string; serviceVersion?: string; onRetry?: ClientOptions["onRetry"] };
  concurrency: number;
  junitFile?: string;
  jsonFile?: string;
  out: Output;
  /** Stops the run (e.g. on SIGINT): the reports still hold every call, finished or not. */
  signal?: AbortSignal;
  /** Progress of waiting calls; by default a status line on a terminal and a line every 15 s otherwise. */
  onProgress?: (progress: Progress) => void;
};

/**
 * Plans (UsageError on a bad selection), places the calls, writes the reports, returns the exit
 * code. The reports are rewritten after every finished call, so a run killed part-way leaves the
 * results it had.
 */
export async function runSmoke(options: SmokeOptions): Promise<{ results: ScenarioResult[]; exitCode: number }> {
  const calls = planCalls(options.definitions, options.outputs, options.selection);
  const client = createClient(options.connection);
  let writing: Promise<unknown> = Promise.resolve();
  const write = (results: readonly ScenarioResult[]) => {
    const list = [...results];
    // Each write runs after the previous one, even after a failed one.
    writing = writing
      .catch(() => {})
      .then(() =>
        Promise.all([
          options.junitFile ? writeFile(options.junitFile, junitReport(list)) : undefined,
          options.jsonFile ? writeFile(options.jsonFile, jsonReport(list)) : undefined,
        ]),
      );
    return writing;
  };
  try {
    const results = await runCalls(client, calls, {
      concurrency: options.concurrency,
      out: options.out,
      ...(options.signal ? { signal: options.signal } : {}),
      ...(options.onProgress ? { onProgress: options.onProgress } : {}),
      onResult: (_, results) => {
        write(results).catch(() => {});
      },
    });
    await write(results);
    return { results, exitCode: exitCodeFor(results) };
  } finally {
    await client.close();
  }
}
