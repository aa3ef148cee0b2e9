// `agent-iac smoke`: smoke test calls against the version ids the stack holds. Flags → one typed
// request → the smoke use case (src/usecases) → emitReport and the notes after it.
import { CliError } from "../errors/index.ts";
import { emitReport, type ReportFiles, writeReportFiles } from "../report/index.ts";
import type { Report } from "../results/index.ts";
import { type SmokeOutcome, smokeStack } from "../usecases/index.ts";
import { concurrencyFlag, oneOf, parseCommand, positiveNumber, STACK_FLAG } from "./args.ts";
import { JUDGE_FLAGS, JUDGE_HELP, judgeCache, RUN_REPORT_FLAGS, reportFiles } from "./flags.ts";
import { type CommandIO, interrupted } from "./lifecycle.ts";
import { runIO } from "./run-io.ts";

const SPEC = {
  name: "smoke",
  about: `Places a test call for each smoke scenario of the conversational agents in agents/, against the
version ids the stack holds (ca_x@vN: from its state, which after a failed or interrupted update
differs from its outputs; smoke says so), follows each call's event stream and checks what the
agent said and did. A bare report file name is written under reports/. Scenarios may repeat
(iterations with min_pass/pass_rate: passed, flaky or failed) and bound latency (expect.latency);
--dry-run and --max-call-minutes settle the cost before any call; --shard splits a large suite
across CI jobs (\`agent-iac report merge\` joins their JSON reports); --record keeps each call's
events and --replay re-evaluates the current expectations against them offline.`,
  flags: {
    stack: STACK_FLAG,
    agent: { type: "string", multiple: true, arg: "KEY", help: "only this agent" },
    scenario: { type: "string", multiple: true, arg: "NAME", help: "only this scenario" },
    "version-id": { type: "string", arg: "ID", help: "call this version instead of the stack's (with one --agent)" },
    concurrency: concurrencyFlag(),
    ...RUN_REPORT_FLAGS,
    live: {
      type: "boolean",
      default: false,
      help: "allow scenarios with livemode: true (calls are test calls otherwise)",
    },
    "allow-unpinned": { type: "boolean", default: false, help: "allow a bare agent id (the released version)" },
    "dry-run": {
      type: "boolean",
      default: false,
      help: "print the calls that would be placed (both sides with --compare) and their worst-case call minutes; place none (with --max-call-minutes: exit 2 when over)",
    },
    "max-call-minutes": {
      type: "string",
      arg: "M",
      value: positiveNumber("a positive number of minutes"),
      help: "refuse (exit 2, before any call) a run whose worst case (Σ iterations × timeout, both sides with --compare) exceeds M minutes",
    },
    shard: {
      type: "string",
      arg: "I/N",
      help: "place only shard I of N (a stable hash of agent/scenario/iteration); merge with `report merge`",
    },
    record: {
      type: "string",
      arg: "DIR",
      help: "write each call's events and scenario to DIR (JSON Lines; with --compare, the new versions' calls)",
    },
    replay: {
      type: "string",
      arg: "DIR",
      help: "place no call: evaluate the scenarios' current expectations against DIR's recordings",
    },
    ...JUDGE_FLAGS,
    compare: { type: "string", arg: "OLD", help: "also call the old versions in OLD and compare (see below)" },
    "fail-on": {
      type: "string",
      arg: "WHAT",
      value: oneOf(["regression", "failure"]),
      help: "with --compare: failure (default) or regression (see below)",
    },
    alpha: {
      type: "string",
      arg: "A",
      value: positiveNumber("a significance level between 0 and 0.5 (e.g. 0.05)", 0.5),
      help: "with --compare: the significance level of the regression tests, Holm-corrected across scenarios; a sequential comparison holds each verdict's error at it per scenario (default 0.05)",
    },
    "require-baseline": {
      type: "boolean",
      default: false,
      help: "with --compare: a scenario whose old version could not be called (e.g. the service does not know it) fails the run, exit 3",
    },
    "compare-rule": {
      type: "string",
      arg: "RULE",
      value: oneOf(["fixed", "sequential"]),
      help: "with --compare: decide every scenario by this rule (default: each scenario's compare:, else fixed; see below)",
    },
    "allow-inconclusive": {
      type: "boolean",
      default: false,
      help: "with --compare: a sequential comparison that reached its cap undecided does not fail the run (the summary says so)",
    },
  },
  footer: `connection: the stack's agents:baseUrl (else AGENT_IAC_BASE_URL); the API key from the stack's
secret agents:apiKey (else AGENT_IAC_API_KEY; on a loopback address, the local dev key).
Each retried request is said on stderr.

${JUDGE_HELP}

--compare OLD: OLD is \`pulumi stack output versions --json\` saved before the deploy, or a
previous smoke --json report. Each scenario runs on the new and the old version (same inputs, both
pinned, the same shard); the result per scenario and expectation is regression, fixed, still failing
or unchanged, with the transcript diff, duration and latency deltas and procedure differences. An
agent with no old version runs as plain smoke and says so. --fail-on failure (default) exits 1 on
any scenario failing on the new version; --fail-on regression only on a regression. With two or
more calls of a scenario on each side, a regression is a pass rate significantly lower on the new
version (one-sided Fisher exact test, Holm-corrected across the run's scenarios at --alpha); a
verdict that flipped without that evidence is "not enough evidence". Response latency is tested the
same way (Mann–Whitney U on per-turn latencies) and reported as a shift in ms. Single calls
compare as flips. Old and new calls go out in pairs, the order in each pair drawn at random and
recorded. --compare-rule sequential (or a scenario's compare: sequential) places pairs until a test
by betting decides regressed or no worse (not worse by more than compare.margin, default 0.1), each
wrong at most --alpha of the time at every look, or compare.max_pairs (default 40) leave it
inconclusive, which fails the run unless --allow-inconclusive. A regression fails the run under either --fail-on. An old version the service
does not know (404) is no baseline: its calls were never placed, the scenario is not compared and
the run says the baseline was not found; --require-baseline makes that exit 3.

exit codes: 0 every scenario passed (flaky ones too), 1 a scenario failed its expectations, threshold,
sequential test, pass^k or latency bounds (or its sequential test was inconclusive), or the agent or
scenario files are invalid, 2 usage or configuration error (unknown agent or scenario, nothing
deployed, a refused API key, a worst case over --max-call-minutes, judged scenarios and no judge
configured), 3 a call could not complete (service unreachable, stream failed after its retries,
timeout) or a judged expectation could not be judged (or, with --require-baseline, a scenario
had no baseline), 130 interrupted
(the reports still list every planned call).`,
} as const;

type Parsed = NonNullable<ReturnType<typeof parseCommand<typeof SPEC.flags>>>;

/** The one typed request of a smoke run. */
function smokeRequest({ values, typed }: Parsed) {
  const comparing = values.compare !== undefined;
  const compareOnly = (["alpha", "fail-on", "require-baseline", "compare-rule", "allow-inconclusive"] as const).find(
    (flag) => values[flag] !== undefined && values[flag] !== false,
  );
  if (!comparing && compareOnly) throw new CliError(`--${compareOnly} needs --compare OLD`);
  if (comparing && values["version-id"] !== undefined) {
    throw new CliError("--compare calls the stack's versions: drop --version-id");
  }
  if (
    values.replay !== undefined &&
    (values.record !== undefined || values["dry-run"] || values.shard !== undefined || comparing)
  ) {
    throw new CliError("--replay places no call: it takes no --record, --dry-run, --shard or --compare");
  }
  return {
    stack: values.stack,
    selection: {
      agents: values.agent,
      scenarios: values.scenario,
      versionId: values["version-id"],
      allowUnpinned: values["allow-unpinned"],
      live: values.live,
    },
    shard: values.shard,
    concurrency: typed.concurrency,
    maxCallMinutes: typed["max-call-minutes"],
    dryRun: values["dry-run"],
    record: values.record,
    replay: values.replay,
    compare: comparing
      ? {
          file: values.compare as string,
          failOn: typed["fail-on"] ?? "failure",
          alpha: typed.alpha,
          requireBaseline: values["require-baseline"],
          rule: typed["compare-rule"],
          allowInconclusive: values["allow-inconclusive"],
        }
      : undefined,
    judgeCache: judgeCache(values),
    files: reportFiles(RUN_REPORT_FLAGS, values),
  };
}

export async function run(argv: string[], io: CommandIO): Promise<number> {
  const parsed = parseCommand(SPEC, argv, io.stdout);
  if (!parsed) return 0;
  const { files, ...request } = smokeRequest(parsed);
  // A plain run's reports are rewritten after every finished call: a run killed part-way leaves what it had.
  const onReport = (report: Report) => writeProgress(report, files, io.project.dir);
  const outcome = await smokeStack({ ...request, project: io.project }, { ...runIO(io), onReport });
  const { report } = outcome;
  if (!report) return outcome.code;
  await emitReport(report, { env: io.env, within: io.project.dir, files, out: io.stdout });
  if (request.replay !== undefined) return outcome.code;
  io.stdout.write(judgeUsageLine(outcome.judge, request.judgeCache));
  // The report says whether the run was stopped: a signal after it was made changes nothing.
  if (report.interrupted) throw interrupted({ cwd: io.cwd, calls: report.results, reports: Object.values(files) });
  for (const note of outcome.notes) io.stderr.write(note);
  return outcome.code;
}

/** The reports so far, rewritten after every finished call: a run killed part-way leaves what it had. */
function writeProgress(report: Report, files: ReportFiles, within: string): Promise<unknown> {
  return writeReportFiles(report, files, within).catch(() => undefined);
}

/** `judge test-model: 3 request(s), 6 vote(s) from the cache` — what judging a run cost. */
function judgeUsageLine(judge: SmokeOutcome["judge"], cache: { read: boolean }): string {
  if (!judge || judge.requests + judge.cached === 0) return "";
  const note = cache.read ? "" : " (--no-judge-cache)";
  return `judge ${judge.model}: ${judge.requests} request(s), ${judge.cached} vote(s) from the cache${note}\n`;
}
