// `smoke --compare OLD [--fail-on regression|failure]`: the smoke command's comparison mode, kept
// here so smoke.ts only hands over to it.
import { type FailOn, readOldVersions, runCompare } from "../compare/index.ts";
import type { AgentDefinition } from "../definitions/index.ts";
import { CliError } from "../errors/index.ts";
import type { HeldAgent } from "../provider/index.ts";
import { appendJobSummary, type ReportFiles } from "../report/index.ts";
import type { ResolvedConnection } from "../settings/index.ts";
import type { Flag } from "./args.ts";
import { unknownVersionsNote } from "./connect.ts";
import { finishedCalls, interrupted, withRetryLines } from "./lifecycle.ts";

export const COMPARE_FLAGS = {
  compare: {
    type: "string",
    arg: "OLD",
    help: "also call the old versions in OLD and compare (see below)",
  },
  "fail-on": {
    type: "string",
    arg: "WHAT",
    help: "with --compare: failure (default) or regression (see below)",
  },
} as const satisfies Record<string, Flag>;

export const COMPARE_HELP = `--compare OLD: OLD is \`pulumi stack output versions --json\` saved before the deploy, or a
previous smoke --json report. Each scenario runs on the new and the old version (same inputs, both
pinned); the result per scenario and expectation is regression, fixed, still failing or
unchanged, with the transcript diff, duration and latency deltas and procedure differences. An
agent with no old version runs as plain smoke and says so. --fail-on failure (default) exits 1 on
any scenario failing on the new version; --fail-on regression only on one that passed on the old.`;

export function failOnValue(value: string | undefined): FailOn {
  if (value === undefined || value === "failure") return "failure";
  if (value === "regression") return "regression";
  throw new CliError(`--fail-on must be regression or failure, not "${value}"`, 2);
}

type Values = {
  compare?: string | undefined;
  "fail-on"?: string | undefined;
  stack: string;
  agent?: string[] | undefined;
  scenario?: string[] | undefined;
  "version-id"?: string | undefined;
  "allow-unpinned"?: boolean | undefined;
  live?: boolean | undefined;
  shard?: string | undefined;
  record?: string | undefined;
  replay?: string | undefined;
  "dry-run"?: boolean | undefined;
};

type Context = {
  agents: AgentDefinition[];
  held: { agents: Record<string, HeldAgent> };
  resolved: ResolvedConnection;
  concurrency: number;
  files: ReportFiles;
  signal: AbortSignal;
};

/** Usage errors of the comparison flags, before anything is read or called. */
export function checkCompareFlags(values: Values): void {
  failOnValue(values["fail-on"]);
  if (values.compare === undefined) throw new CliError("--fail-on needs --compare OLD", 2);
  if (values["version-id"] !== undefined)
    throw new CliError("--compare calls the stack's versions: drop --version-id", 2);
}

export async function compareSmoke(values: Values, context: Context): Promise<number> {
  checkCompareFlags(values);
  const failOn = failOnValue(values["fail-on"]);
  const old = await readOldVersions(values.compare as string);
  const { scenarios, exitCode, report } = await runCompare({
    definitions: context.agents,
    outputs: context.held.agents,
    selection: {
      agents: values.agent,
      scenarios: values.scenario,
      allowUnpinned: values["allow-unpinned"],
      live: values.live,
    },
    connection: withRetryLines(context.resolved),
    old,
    failOn,
    concurrency: context.concurrency,
    stack: values.stack,
    files: context.files,
    out: process.stdout,
    signal: context.signal,
  });
  await appendJobSummary(report);
  if (context.signal.aborted) {
    const calls = report.results;
    throw interrupted({ finished: finishedCalls(calls), total: calls.length, reports: Object.values(context.files) });
  }
  const results = scenarios.flatMap((s) => s.newResults);
  process.stderr.write(unknownVersionsNote(results, context.held.agents, values.stack));
  return exitCode;
}
