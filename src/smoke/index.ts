// Pinned-version smoke calls: plan the calls, place them, evaluate, report.

export type { PlannedCall, Scenario } from "./call.ts";
export { placeCall } from "./call.ts";
export type { Expectations, Observation } from "./expectations.ts";
export { type AgentOutput, planCalls, type Selection, UsageError } from "./plan.ts";
export { jsonReport, junitReport, type ScenarioResult, summarize } from "./reports.ts";
export { type Output, resultLine, runCalls } from "./run.ts";

import type { ScenarioResult } from "./reports.ts";

/** 0 all passed; 1 an expectation failed; 3 a call could not complete (service or stream). */
export function exitCodeFor(results: ScenarioResult[]): number {
  if (results.some((r) => r.status === "error")) return 3;
  if (results.some((r) => r.status === "failed")) return 1;
  return 0;
}

import { writeFile } from "node:fs/promises";
import { type ClientOptions, createClient } from "../api/index.ts";
import type { AgentDefinition } from "../definitions/index.ts";
import { type AgentOutput, planCalls, type Selection } from "./plan.ts";
import { jsonReport, junitReport } from "./reports.ts";
import { type Output, runCalls } from "./run.ts";

export type SmokeOptions = {
  definitions: AgentDefinition[];
  outputs: Record<string, AgentOutput> | undefined;
  selection: Selection;
  connection: { baseUrl: string; apiKey: string; serviceVersion?: string; onRetry?: ClientOptions["onRetry"] };
  concurrency: number;
  junitFile?: string;
  jsonFile?: string;
  out: Output;
};

/** Plans (UsageError on a bad selection), places the calls, writes the reports, returns the exit code. */
export async function runSmoke(options: SmokeOptions): Promise<{ results: ScenarioResult[]; exitCode: number }> {
  const calls = planCalls(options.definitions, options.outputs, options.selection);
  const client = createClient(options.connection);
  try {
    const results = await runCalls(client, calls, { concurrency: options.concurrency, out: options.out });
    if (options.junitFile) await writeFile(options.junitFile, junitReport(results));
    if (options.jsonFile) await writeFile(options.jsonFile, jsonReport(results));
    return { results, exitCode: exitCodeFor(results) };
  } finally {
    await client.close();
  }
}
