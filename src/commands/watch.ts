// `agent-iac watch`: live-traffic figures of each conversational agent's current version against
// its previous version (src/watch), with thresholds; exit 1 on a breach, naming the figure and
// how to roll back.
import { emitReport } from "../report/index.ts";
import { DEFAULT_NEGATIVE_RATINGS, watchStack } from "../usecases/index.ts";
import { type Conversion, oneOf, parseCommand, STACK_FLAG, wholeNumber } from "./args.ts";
import { reportFiles, TRAFFIC_REPORT_FLAGS, WINDOW_FLAGS } from "./flags.ts";
import type { CommandIO } from "./lifecycle.ts";
import { runIO } from "./run-io.ts";
import { trafficInterrupted } from "./traffic.ts";

/** Percentage points (a trailing % allowed) as a fraction. */
const points: Conversion<number> = {
  expected: "percentage points between 0 and 100 (e.g. 5)",
  convert: (text) => {
    const n = Number(text.trim().replace(/%$/, ""));
    return text.trim() !== "" && Number.isFinite(n) && n >= 0 && n <= 100 ? n / 100 : undefined;
  },
};

const SPEC = {
  name: "watch",
  about: `Compares each conversational agent's current version (the stack's) with its previous version on
live traffic: calls, failure rate, median and p95 duration, negative feedback and sentiment, and
procedure errors, each with its counts. The previous version comes from --baseline, else the stack's
update history, else another version of the same agent id in the traffic; it is read over the window
of equal length just before (--baseline-window same: the same window). Test calls (livemode: false,
smoke calls) are left out. A bare report file name is written under reports/.`,
  flags: {
    stack: STACK_FLAG,
    ...WINDOW_FLAGS,
    baseline: {
      type: "string",
      arg: "FILE",
      help: "the old versions: `pulumi stack output versions --json` of the previous release, or a smoke JSON report",
    },
    "baseline-window": {
      type: "string",
      default: "previous",
      arg: "previous|same",
      value: oneOf(["previous", "same"]),
      help: "the window of the old versions: the one before (default), or the same one (side by side)",
    },
    "service-id": {
      type: "string",
      arg: "ID",
      help: "the service instance, for feedbacks (GET /feedbacks needs it; the local simulator's is found)",
    },
    "include-test-calls": { type: "boolean", default: false, help: "count test calls (livemode: false) too" },
    "max-failure-rate-increase": {
      type: "string",
      default: "5",
      arg: "POINTS",
      value: points,
      help: "fail when the failure rate rises by more (percentage points; default 5)",
    },
    "max-negative-feedback-increase": {
      type: "string",
      default: "10",
      arg: "POINTS",
      value: points,
      help: "fail when the share of negative feedback rises by more (percentage points; default 10)",
    },
    "min-calls": {
      type: "string",
      default: "20",
      arg: "N",
      value: wholeNumber(1),
      help: "fewer finished calls on a side: no verdict, a warning (default 20)",
    },
    "negative-rating": {
      type: "string",
      multiple: true,
      arg: "RATING",
      help: `a feedback rating that counts as negative (default: ${DEFAULT_NEGATIVE_RATINGS.join(", ")})`,
    },
    ...TRAFFIC_REPORT_FLAGS,
  },
  footer: `connection: the stack's agents:baseUrl and agents:apiKey, else AGENT_IAC_BASE_URL and
AGENT_IAC_API_KEY; on a loopback address (the dev stack), the local dev key. Lists are read with
their created_at filters, page by page; a page the client gave up on after its retries (429, 5xx)
is read again from its cursor, up to 3 times.

exit codes: 0 no figure got worse than allowed (also: not enough traffic, with a warning), 1 a
figure got worse than allowed (the message names it and how to roll back), 2 usage or
configuration error, 3 the service or the backend failed.`,
} as const;

export async function run(argv: string[], io: CommandIO): Promise<number> {
  const parsed = parseCommand(SPEC, argv, io.stdout);
  if (!parsed) return 0;
  const { values, typed } = parsed;
  const files = reportFiles(TRAFFIC_REPORT_FLAGS, values);
  const request = {
    project: io.project,
    stack: values.stack,
    window: { since: values.since, from: values.from, to: values.to },
    baseline: values.baseline,
    baselineWindow: typed["baseline-window"],
    includeTestCalls: values["include-test-calls"],
    serviceId: values["service-id"],
    negativeRatings: values["negative-rating"],
    thresholds: {
      maxFailureRateIncrease: typed["max-failure-rate-increase"],
      maxNegativeFeedbackIncrease: typed["max-negative-feedback-increase"],
      minCalls: typed["min-calls"],
    },
  };
  const outcome = await watchStack(request, runIO(io)).catch(trafficInterrupted(io, files));
  await emitReport(outcome.report, { env: io.env, within: io.project.dir, files, out: io.stdout });
  // The report's code says a figure got worse (1); the notes name it and how to roll back.
  for (const note of outcome.notes) io.stderr.write(note);
  return outcome.code;
}
