// `agent-iac drift --stack S`: is each blessed scenario still as good as its baseline? Flags → one
// typed request → the drift use case (the smoke job on the baseline's pinned versions) → emitReport.
import { emitReport, type ReportFiles, writeReportFiles } from "../report/index.ts";
import type { Report } from "../results/index.ts";
import { runDrift } from "../usecases/index.ts";
import { concurrencyFlag, parseCommand, positiveNumber, STACK_FLAG, wholeNumber } from "./args.ts";
import { JUDGE_FLAGS, JUDGE_HELP, judgeCache, RUN_REPORT_FLAGS, reportFiles } from "./flags.ts";
import { type CommandIO, interrupted } from "./lifecycle.ts";

const SPEC = {
  name: "drift",
  about: `Places the calls of the scenarios in baselines/<stack>.json (\`baseline bless\`) on the baseline's
pinned versions, and decides each scenario against the baseline's counts with an anytime-valid test:
drifted (its pass rate dropped by more than --margin, wrong at most --alpha of the time), holding (no
drop beyond the margin, with evidence) or inconclusive at --max-calls; a scenario whose responses
exceed the baseline's p95 more often than chance allows has drifted too. Each scenario stops once
decided. What moved besides the agent is named: the judge's or the caller's model as answered (the
verdict is then inconclusive, the fault theirs, until re-blessed), the scenario's text, this tool's
version. Refuses (exit 2) a stack whose versions are not the baseline's.`,
  flags: {
    stack: STACK_FLAG,
    baseline: { type: "string", arg: "FILE", help: "the baseline file (default: baselines/<stack>.json)" },
    alpha: {
      type: "string",
      arg: "A",
      value: positiveNumber("a significance level between 0 and 0.5 (e.g. 0.05)", 0.5),
      help: "the false-drifted rate per scenario, at every look (default 0.05)",
    },
    margin: {
      type: "string",
      arg: "M",
      value: positiveNumber("a pass-rate drop between 0 and 0.5 (e.g. 0.1)", 0.5),
      help: "the pass-rate drop that is drift (default 0.1)",
    },
    "max-calls": {
      type: "string",
      arg: "N",
      value: wholeNumber(1),
      help: "the cap on calls per scenario; undecided there is inconclusive (default 40)",
    },
    concurrency: concurrencyFlag(", and a scenario's round between looks"),
    ...RUN_REPORT_FLAGS,
    "dry-run": {
      type: "boolean",
      default: false,
      help: "print the calls that could be placed (each scenario up to its cap) and their worst-case call minutes; place none",
    },
    "max-call-minutes": {
      type: "string",
      arg: "M",
      value: positiveNumber("a positive number of minutes"),
      help: "refuse (exit 2, before any call) a run whose worst case (every scenario to its cap) exceeds M minutes",
    },
    ...JUDGE_FLAGS,
  },
  footer: `${JUDGE_HELP}

exit codes: 0 every blessed scenario holding, 1 a scenario drifted or is inconclusive (the judge or the
caller moved, the cap), 2 usage or configuration error (no baseline, the stack's versions are not the
baseline's: after a deploy, re-bless, or compare old with new with \`smoke --compare\`), 3 a call could
not complete, 130 interrupted (the reports are still written).`,
} as const;

export async function run(argv: string[], io: CommandIO): Promise<number> {
  const parsed = parseCommand(SPEC, argv, io.stdout);
  if (!parsed) return 0;
  const { values, typed } = parsed;
  const files = reportFiles(RUN_REPORT_FLAGS, values);
  const stop = io.interruption();
  const { result, report } = await runDrift(
    {
      stack: values.stack,
      project: io.project,
      baselineFile: values.baseline,
      rule: {
        ...(typed.alpha !== undefined ? { alpha: typed.alpha } : {}),
        ...(typed.margin !== undefined ? { margin: typed.margin } : {}),
        ...(typed["max-calls"] !== undefined ? { maxCalls: typed["max-calls"] } : {}),
      },
      concurrency: typed.concurrency,
      maxCallMinutes: typed["max-call-minutes"],
      dryRun: values["dry-run"],
      judgeCache: judgeCache(values),
    },
    {
      out: io.stdout,
      signal: stop.signal,
      onRetry: io.printRetry,
      warn: (text) => io.stderr.write(text),
      onReport: (partial) => writeProgress(partial, files, io.project.dir),
      useConnection: (connection) => io.useConnection(connection),
    },
  ).finally(stop.release);
  if (result.kind === "dry-run" || !report) return 0;
  const code = await emitReport(report, { env: io.env, within: io.project.dir, files, out: io.stdout });
  if (report.interrupted) throw interrupted({ cwd: io.cwd, calls: report.results, reports: Object.values(files) });
  return code;
}

/** The run's report so far, after every finished call: a run killed part-way leaves what it had. */
function writeProgress(report: Report, files: ReportFiles, within: string): Promise<unknown> {
  // A partial report is the smoke run's (its drift verdicts come at the end): only its JSON is kept.
  return files.json ? writeReportFiles(report, { json: files.json }, within).catch(() => undefined) : Promise.resolve();
}
