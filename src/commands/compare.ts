// `smoke --compare OLD [--fail-on regression|failure]`: the smoke command's comparison mode, kept
// here so smoke.ts only hands over to it.

import { type FailOn, readOldVersions, runCompare } from "../compare/index.ts";
import type { AgentDefinition } from "../definitions/index.ts";
import { CliError } from "../errors/index.ts";
import type { Judge } from "../judge/index.ts";
import type { HeldAgent } from "../provider/index.ts";
import { emitReport, type ReportFiles } from "../report/index.ts";
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
  alpha: {
    type: "string",
    arg: "A",
    help: "with --compare: the significance level of the regression tests, Holm-corrected across scenarios (default 0.05)",
  },
} as const satisfies Record<string, Flag>;

export const COMPARE_HELP = `--compare OLD: OLD is \`pulumi stack output versions --json\` saved before the deploy, or a
previous smoke --json report. Each scenario runs on the new and the old version (same inputs, both
pinned); the result per scenario and expectation is regression, fixed, still failing or
unchanged, with the transcript diff, duration and latency deltas and procedure differences. An
agent with no old version runs as plain smoke and says so. --fail-on failure (default) exits 1 on
any scenario failing on the new version; --fail-on regression only on a regression. With two or
more calls of a scenario on each side, a regression is a pass rate significantly lower on the new
version (one-sided Fisher exact test, Holm-corrected across the run's scenarios at --alpha); a
verdict that flipped without that evidence is "not significant". Response latency is tested the
same way (Mann–Whitney U on per-turn latencies) and reported as a shift in ms. Single calls
compare as flips. A regression fails the run under either --fail-on.`;

/** `--alpha A`: a level in (0, 0.5]; undefined without the flag. */
export function alphaValue(value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  const alpha = Number(value);
  if (!Number.isFinite(alpha) || alpha <= 0 || alpha > 0.5) {
    throw new CliError(`--alpha must be a significance level between 0 and 0.5 (e.g. 0.05), not "${value}"`, 2);
  }
  return alpha;
}

export function failOnValue(value: string | undefined): FailOn {
  if (value === undefined || value === "failure") return "failure";
  if (value === "regression") return "regression";
  throw new CliError(`--fail-on must be regression or failure, not "${value}"`, 2);
}

type Values = {
  compare?: string | undefined;
  "fail-on"?: string | undefined;
  alpha?: string | undefined;
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
  judge?: Judge | undefined;
};

/** Usage errors of the comparison flags, before anything is read or called. */
export function checkCompareFlags(values: Values): void {
  failOnValue(values["fail-on"]);
  alphaValue(values.alpha);
  if (values.compare === undefined) {
    throw new CliError(`${values.alpha !== undefined ? "--alpha" : "--fail-on"} needs --compare OLD`, 2);
  }
  if (values["version-id"] !== undefined)
    throw new CliError("--compare calls the stack's versions: drop --version-id", 2);
}

export async function compareSmoke(values: Values, context: Context): Promise<number> {
  checkCompareFlags(values);
  const failOn = failOnValue(values["fail-on"]);
  const old = await readOldVersions(values.compare as string);
  const { scenarios, report } = await runCompare({
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
    ...(alphaValue(values.alpha) !== undefined ? { alpha: alphaValue(values.alpha) as number } : {}),
    concurrency: context.concurrency,
    stack: values.stack,
    out: process.stdout,
    signal: context.signal,
    judge: context.judge,
  });
  const exitCode = await emitReport(report, { files: context.files, out: process.stdout });
  if (report.interrupted) {
    const calls = report.results;
    throw interrupted({ finished: finishedCalls(calls), total: calls.length, reports: Object.values(context.files) });
  }
  const results = scenarios.flatMap((s) => s.newResults);
  process.stderr.write(unknownVersionsNote(results, context.held.agents, values.stack));
  return exitCode;
}
