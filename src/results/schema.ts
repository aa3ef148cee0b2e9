// The one JSON report shape of smoke, comparison (`smoke --compare`), behaviour preview
// (`plan --behave`), and merged shard runs. Written strictly by this tool; read back tolerantly
// (`report merge`, `smoke --compare PREVIOUS.json`, `smoke --replay`, the HTML report): unknown
// fields are kept, missing optional ones default. Nothing secret is ever in a report: stream
// addresses are stored without their token.
import { z } from "zod";
import { TRANSPORTS } from "../contract/index.ts";
import { driftSchema } from "./drift.ts";
import { trafficSchema } from "./traffic.ts";
import { variantsSchema } from "./variants.ts";

export const REPORT_FORMAT = "agent-iac-report";
/**
 * 4: every call carries its typed `outcome` (kind, stage, HTTP status, code); `not_run` calls are
 * written; the summary counts `calls_not_run` and `calls_interrupted` apart from `calls_errors`.
 * 3: `summary` counts scenarios (calls under `calls_*`); `fail_on`, `interrupted`. Versions 2 and
 * 3 are read too (their summary is recounted, each call's outcome derived from its status).
 */
export const REPORT_VERSION = 4;

/** Every kind of run a report can hold (the plan has its own value: plan.ts). */
const RUN_KINDS = ["smoke", "compare", "behave", "merged", "replay", "drift"] as const;
const TRAFFIC_KINDS = ["watch", "audit"] as const;
/** Config variants of one agent played beside its config (agent-iac try; see variants.ts). */
const VARIANT_KINDS = ["try"] as const;

const ms = z.number().nonnegative();

/**
 * A judged expectation's outcome (`expect.judge`): the majority verdict of `votes_total` requests to
 * the judge model, its agreement (`2/3`), a reason, the transcript lines (1-based) it cites, and the
 * rubric's last measured agreement with human labels (`judge check`), if any.
 */
const judgementSchema = z.looseObject({
  rubric: z.string(),
  model: z.string(),
  /** The model id(s) the judge's endpoint said answered; null when it named none (or an older report). */
  answered_model: z.string().nullable().default(null),
  /** `inconclusive`: adaptive votes not settled by their cap. */
  verdict: z.enum(["pass", "fail", "error", "inconclusive"]),
  agreement: z.string(),
  votes_for: z.int().min(0),
  votes_total: z.int().min(0),
  uncertain: z.boolean().default(false),
  /** Adaptive votes (`votes: auto`): settled at 95 % before the cap; null for a fixed number of votes. */
  settled: z.boolean().nullable().default(null),
  reason: z.string().default(""),
  lines: z.array(z.int()).default([]),
  votes: z
    .array(z.looseObject({ verdict: z.enum(["pass", "fail"]), reason: z.string(), lines: z.array(z.int()) }))
    .default([]),
  cached_votes: z.int().min(0).default(0),
  error: z.string().nullable().default(null),
  calibration: z
    .looseObject({
      agreement: z.number(),
      kappa: z.number().nullable(),
      /** Kappa's 95 % interval (`judge check`); absent from calibrations measured before it was kept. */
      kappa_low: z.number().nullable().optional(),
      kappa_high: z.number().nullable().optional(),
      items: z.int(),
      consistency: z.number().nullable().default(null),
      checked_at: z.string(),
    })
    .nullable()
    .default(null),
});

/**
 * What an expectation checks, apart from its words (`kind` and `key`, see the smoke's
 * `ExpectationIdentity`); reports written before it was recorded lack it.
 */
const identity = { kind: z.string().optional(), key: z.string().optional() };

/** The identity comparisons join an expectation on: its kind and key, or (in an older report) its words. */
export function expectationId(expectation: { kind?: string; key?: string; description: string }): string {
  const { kind, key, description } = expectation;
  return kind === undefined || key === undefined ? `description ${description}` : `${kind} ${key}`;
}

/** One expectation's outcome in one call; `context` holds the nearest transcript lines of a failure. */
const assertionSchema = z.looseObject({
  ...identity,
  description: z.string(),
  passed: z.boolean(),
  detail: z.string().nullable().default(null),
  context: z.array(z.string()).default([]),
  judgement: judgementSchema.optional(),
});

/**
 * When a caller's line was said, written after it in the transcript lines: `caller: … (at 1.23 s)`;
 * with a second time (the other side of a comparison), `(at 1.23 s → 1.52 s)`.
 */
export function callerTime(atMs: number, otherMs?: number): string {
  const seconds = (ms: number) => `${(ms / 1000).toFixed(2)} s`;
  return `(at ${seconds(atMs)}${otherMs === undefined || otherMs === atMs ? "" : ` → ${seconds(otherMs)}`})`;
}

/** How a user line a call's caller did not send is labelled on every surface (the service's own turns, say). */
export const NOT_THE_CALLER = "user (not the caller)";

/** Who a user entry is, for a reader: `caller`, `user (not the caller)`, or (a call without a caller) `user`. */
export function userLabel(by: "caller" | "not_caller" | undefined): string {
  return by === "caller" ? "caller" : by === "not_caller" ? NOT_THE_CALLER : "user";
}

/** A transcript entry as data, for a chat-like rendering; `at_ms` is from the call's start (event `created_at`). */
const entrySchema = z.discriminatedUnion("kind", [
  z.looseObject({
    kind: z.literal("agent"),
    text: z.string(),
    complete: z.boolean().default(true),
    at_ms: ms.nullable().default(null),
  }),
  // `by: "caller"`: the scenario's caller said it (`caller:` in the transcript lines); `by:
  // "not_caller"`: a call with a caller heard a user line it did not send (the service's own turn).
  z.looseObject({
    kind: z.literal("user"),
    text: z.string(),
    at_ms: ms.nullable().default(null),
    by: z.enum(["caller", "not_caller"]).optional(),
  }),
  z.looseObject({
    kind: z.literal("tool"),
    name: z.string(),
    call_id: z.string().nullable().default(null),
    arguments: z.unknown(),
    result: z.unknown().optional(),
    at_ms: ms.nullable().default(null),
    returned_at_ms: ms.nullable().default(null),
  }),
  z.looseObject({ kind: z.literal("error"), error: z.unknown(), at_ms: ms.nullable().default(null) }),
]);

/**
 * Latency of one call, from the event stream's own timestamps: conversation.started → first
 * agent.message.delta; each user.message.received → the next agent delta; each tool call's
 * created → returned. Null/empty when the call did not show it.
 */
const callLatencySchema = z.looseObject({
  first_response_ms: ms.nullable().default(null),
  response_ms: z.array(ms).default([]),
  tool_ms: z.array(ms).default([]),
});

/** A call's status for a reader (`interrupted` calls are an "error" here; `outcome.kind` tells them apart). */
export const callStatus = z.enum(["passed", "failed", "error", "not_run", "inconclusive"]);

/**
 * How a call ended: `passed` / `failed` its expectations were evaluated; `error` it could not
 * complete (the service, the network, its timeout, the judge); `interrupted` the run was stopped
 * while it was in flight; `not_run` it was planned but never placed; `inconclusive` its caller
 * (a persona) left its persona or goal, judged so: it tested nothing, neither a pass nor a failure.
 */
const CALL_OUTCOME_KINDS = ["passed", "failed", "error", "not_run", "interrupted", "inconclusive"] as const;
const callOutcomeKind = z.enum(CALL_OUTCOME_KINDS);

/** The step of a call that failed: creating the conversation, its event stream, the procedures poll, the judge. */
const CALL_STAGES = ["create", "stream", "procedures", "judge"] as const;
const callStage = z.enum(CALL_STAGES);

/**
 * A call's typed outcome. Where there is one: the stage that failed, the request it made
 * (`POST /conversations`), the HTTP status the service answered, and a code: a network code
 * (`ECONNREFUSED`), `timeout` (the scenario's deadline), `request_timeout` (the client's), the
 * service's own error code from its body, or one of this tool's (`stream_closed`, `run_stopped`).
 */
export const callOutcomeSchema = z.looseObject({
  kind: callOutcomeKind,
  stage: callStage.nullable().default(null),
  request: z.string().nullable().default(null),
  http_status: z.int().nullable().default(null),
  code: z.string().nullable().default(null),
});

/**
 * The outcome of a call written before version 4 (no `outcome` field), from its status alone:
 * those versions wrote "interrupted" and "not run" only into the message, which is never read, so
 * such a call reads as an error (its report's `interrupted` flag still says the run was stopped).
 */
export function legacyOutcome(call: { status: z.output<typeof callStatus> }): z.output<typeof callOutcomeSchema> {
  return { kind: call.status, stage: null, request: null, http_status: null, code: null };
}

/** Which call of an old/new pair was placed first (the order of each pair is drawn at random). */
const pairOrder = z.enum(["old_first", "new_first"]);
/**
 * Who caused a call's failure or error: the agent (an expectation it did not meet), the caller (a
 * persona that played nothing, left its persona or goal), the judge (it could not judge), or the
 * service (a line not heard, the stream, HTTP, a timeout). Null for a call that passed or did not end.
 */
const FAULTS = ["agent", "caller", "judge", "service"] as const;
export type Fault = (typeof FAULTS)[number];

/** One planned call (a scenario's iteration on one version), placed or not. */
const callFields = z.looseObject({
  agent: z.string(),
  scenario: z.string(),
  iteration: z.int().min(1),
  /** In a comparison: which side the call ran on. */
  side: z.enum(["new", "old"]).default("new"),
  /** In a comparison: the order of the old/new pair this call belongs to (the pair is its iteration on both sides). */
  pair_order: pairOrder.optional(),
  status: callStatus,
  version_id: z.string(),
  conversation_id: z.string().nullable().default(null),
  /** The stream's address, without the token. */
  events_url: z.string().nullable().default(null),
  transport: z.enum(TRANSPORTS).default("sse"),
  livemode: z.boolean().default(false),
  error: z.string().nullable().default(null),
  assertions: z.array(assertionSchema).default([]),
  /** Display lines ("agent: …", "tool name({…}) → …"). */
  transcript: z.array(z.string()).default([]),
  entries: z.array(entrySchema).default([]),
  tool_calls: z.array(z.unknown()).default([]),
  procedures: z.array(z.unknown()).default([]),
  latency: callLatencySchema.default({ first_response_ms: null, response_ms: [], tool_ms: [] }),
  timings: z.looseObject({
    time_to_first_agent_message_ms: ms.nullable().default(null),
    duration_ms: ms,
  }),
  /** ISO time the call started. */
  started_at: z.string().nullable().default(null),
  /** A persona call's model: the one asked and the one its endpoint said answered (null: it named none). */
  caller_model: z.looseObject({ asked: z.string(), answered: z.string().nullable() }).optional(),
  /** How the call ended (version 4; derived from `status` when an older report has none). */
  outcome: callOutcomeSchema.optional(),
  /** Whose fault a failed or errored call is (null when it passed, or in a report written before it was kept). */
  fault: z.enum(FAULTS).nullable().default(null),
});

export const callResultSchema = callFields.transform((call) => ({
  ...call,
  outcome: call.outcome ?? legacyOutcome(call),
}));

/** Measured latency over all turns of all iterations of a scenario; bounds from `expect.latency`. */
const latencySummarySchema = z.looseObject({
  first_response_ms: ms.nullable().default(null),
  response_p50_ms: ms.nullable().default(null),
  response_p95_ms: ms.nullable().default(null),
  tool_ms: ms.nullable().default(null),
  bounds: z.record(z.string(), ms).default({}),
  /** The bounds exceeded, by name (e.g. "response_p95_ms"). */
  exceeded: z.array(z.string()).default([]),
});

/** `inconclusive`: a sequential test reached its cap undecided (exit 1, like failed). */
const verdict = z.enum(["passed", "failed", "flaky", "error", "not_run", "inconclusive"]);
/**
 * `not_enough_evidence`: the new version fails where the old passed, but the fixed test found its
 * pass rate not significantly lower (read from reports that wrote `not_significant`). The sequential
 * comparison's: `regression` (new worse, with evidence), `no_worse` (new not worse than old by more
 * than the margin, with evidence), `inconclusive` (neither by the cap on pairs). `interrupted`: the
 * run's stop cut a side's calls short before the scenario's verdict was known (nothing compared).
 */
const comparisonOutcome = z.preprocess(
  (value) => (value === "not_significant" ? "not_enough_evidence" : value),
  z.enum([
    "regression",
    "fixed",
    "still_failing",
    "unchanged",
    "not_enough_evidence",
    "no_worse",
    "inconclusive",
    "interrupted",
  ]),
);

/** Old versus new for one scenario (smoke --compare). */
const scenarioComparisonSchema = z.looseObject({
  old_version_id: z.string(),
  new_version_id: z.string(),
  old_verdict: verdict,
  new_verdict: verdict,
  outcome: comparisonOutcome,
  /** Per expectation (joined on its identity, worded as the new side words it): its outcome old → new. */
  expectations: z
    .array(
      z.looseObject({
        ...identity,
        description: z.string(),
        old: z.boolean().nullable(),
        new: z.boolean().nullable(),
        outcome: comparisonOutcome,
      }),
    )
    .default([]),
  /** Unified-diff style lines of the first iterations' transcripts ("  same", "- old", "+ new"). */
  transcript_diff: z.array(z.string()).default([]),
  duration_delta_ms: z.number().nullable().default(null),
  response_latency_delta_ms: z.array(z.number()).default([]),
  procedure_differences: z.array(z.string()).default([]),
  /** The pairs placed interleaved (old and new together), in iteration order: which of each went first. */
  pairs: z.array(pairOrder).optional(),
  /**
   * The sequential comparison (`compare: sequential`): its rule, the pairs it took, and its tests'
   * wealth (each reaches 1/α to decide; see src/stats/paired.ts).
   */
  sequential: z
    .looseObject({
      alpha: z.number(),
      margin: z.number(),
      max_pairs: z.int().min(1),
      pairs: z.int().min(0),
      regressed_wealth: z.number(),
      no_worse_wealth: z.number(),
      /** The bet against "new is not slower", on the sign of each pair's mean response latency. */
      slower_wealth: z.number().nullable().default(null),
      slower: z.boolean().default(false),
    })
    .optional(),
  /**
   * The evidence behind the outcome: with ≥ 2 completed calls on both sides ("exact"), a one-sided
   * Fisher test of the pass rates and a Mann–Whitney test of per-turn latencies, each Holm-adjusted
   * across the run's scenarios; with single calls ("flip"), none.
   */
  evidence: z
    .looseObject({
      method: z.enum(["exact", "flip"]).or(z.string()),
      alpha: z.number(),
      old_rate: z.looseObject({ passes: z.int(), calls: z.int(), value: z.number().nullable() }),
      new_rate: z.looseObject({ passes: z.int(), calls: z.int(), value: z.number().nullable() }),
      /** new − old pass rate with Newcombe's 95 % interval. */
      difference: z.looseObject({ value: z.number(), low: z.number(), high: z.number() }).nullable(),
      p_value: z.number().nullable(),
      adjusted_p_value: z.number().nullable(),
      significant: z.boolean(),
      latency: z
        .looseObject({
          /** Hodges–Lehmann shift, new − old (ms). */
          shift_ms: z.number().nullable(),
          p_value: z.number(),
          adjusted_p_value: z.number(),
          significant: z.boolean(),
          old_turns: z.int(),
          new_turns: z.int(),
        })
        .nullable(),
    })
    .optional(),
});

/** One scenario over its iterations: the verdict follows its threshold (`min_pass`, default all). */
const scenarioSummarySchema = z.looseObject({
  agent: z.string(),
  scenario: z.string(),
  version_id: z.string(),
  verdict,
  /** Calls of the scenario in this report (a shard's report holds some of them). */
  iterations: z.int().min(0),
  /** Iterations the scenario plans (`iterations:` in its file); merge judges the threshold on these. */
  planned_iterations: z.int().min(0).optional(),
  passes: z.int().min(0),
  /**
   * Passes needed (fixed repeats). A sequential test is judged by `sequential`, not by this (it is its
   * rate × its cap, kept for `report merge`): no surface shows it beside such a scenario's passes.
   */
  min_pass: z.int().min(0),
  /** Pass rate with its Wilson 95 % interval. */
  pass_rate: z.looseObject({ value: z.number(), low: z.number(), high: z.number() }).nullable().default(null),
  latency: latencySummarySchema.optional(),
  comparison: scenarioComparisonSchema.optional(),
  /** Finished calls that settled the verdict, when fewer than planned ("decided after 6 of 10"). */
  decided_after: z.int().min(0).nullable().optional(),
  /** `report merge`: calls in a shard whose report is missing, counted as failed iterations; nothing is decided from them. */
  shard_missing: z.int().min(0).optional(),
  /** Planned calls not placed because the verdict was already settled (not needed; never failures). */
  calls_saved: z.int().min(0).optional(),
  /** pass^k for k = 1 … calls (τ-bench's unbiased estimator C(c,k)/C(n,k)); empty for a single call. */
  pass_k: z.array(z.looseObject({ k: z.int().min(1), value: z.number() })).optional(),
  /** A `pass_k: {k, min}` requirement and its estimate (null: fewer than k calls). */
  pass_k_required: z
    .looseObject({ k: z.int().min(1), min: z.number(), value: z.number().nullable(), met: z.boolean() })
    .optional(),
  /** The sequential test (`pass_rate` with `confidence`): its rule and where its log-likelihood ratio ended. */
  sequential: z
    .looseObject({
      pass_rate: z.number(),
      confidence: z.number(),
      margin: z.number(),
      max_iterations: z.int().min(1),
      log_likelihood_ratio: z.number(),
      pass_boundary: z.number(),
      fail_boundary: z.number(),
    })
    .optional(),
});

/**
 * The headline counts, in scenarios: `passed` met their threshold (the `flaky` ones included),
 * `failed` fail the run, `tolerated` failed but do not fail it (`--fail-on regression`: they also
 * failed on the old version), `errors` could not complete, `not_run` have no call here or none of
 * theirs was placed. Calls are the second figure, all of them those the verdicts stand on (the new
 * side of a comparison): `calls` every such call placed (not the `not_run` ones), `calls_passed`,
 * `calls_failed`, `calls_errors`, `calls_interrupted`, `calls_not_run` by outcome kind; the old
 * side's placed calls (the service made a conversation of them) are `calls_old`; `no_baseline`
 * counts the compared scenarios whose old version could not be called.
 * Counted by one rule (outcome.ts `countScenarios`). Kinds watch/audit count calls and regressed
 * agents only.
 */
const summarySchema = z.looseObject({
  scenarios: z.int().min(0).default(0),
  passed: z.int().min(0).default(0),
  failed: z.int().min(0).default(0),
  flaky: z.int().min(0).default(0),
  errors: z.int().min(0).default(0),
  not_run: z.int().min(0).default(0),
  /** Scenarios the run's stop cut short (their calls interrupted or left unplaced): not `errors`. */
  interrupted: z.int().min(0).optional(),
  tolerated: z.int().min(0).default(0),
  regressions: z.int().min(0).default(0),
  calls: z.int().min(0).default(0),
  /** Calls placed on the old versions of a comparison (not in `calls`). */
  calls_old: z.int().min(0).default(0),
  calls_passed: z.int().min(0).default(0),
  calls_failed: z.int().min(0).default(0),
  calls_errors: z.int().min(0).default(0),
  /** Judged calls planned but never placed (outcome `not_run`), and those the run's stop cut short. */
  calls_not_run: z.int().min(0).default(0),
  calls_interrupted: z.int().min(0).default(0),
  /** Scenarios of a comparison whose old version's calls could not run (e.g. the service does not know it): not compared. */
  no_baseline: z.int().min(0).optional(),
  /** Scenarios a sequential test left undecided at its cap. */
  inconclusive: z.int().min(0).optional(),
  /** Planned calls not placed: their scenario's verdict was settled without them. */
  calls_saved: z.int().min(0).optional(),
  /** Minutes of calls placed (sum of call durations). */
  call_minutes: z.number().nonnegative().default(0),
  duration_ms: ms.default(0),
});

export const reportSchema = z.looseObject({
  format: z.literal(REPORT_FORMAT).default(REPORT_FORMAT),
  version: z.int().default(REPORT_VERSION),
  kind: z.enum([...RUN_KINDS, ...TRAFFIC_KINDS, ...VARIANT_KINDS]).default("smoke"),
  created_at: z.string().nullable().default(null),
  stack: z.string().nullable().default(null),
  /** Agent key → the version id its scenarios were pinned to (the new side in a comparison). */
  versions: z.record(z.string(), z.string()).default({}),
  /** In a comparison: agent key → old version id. */
  old_versions: z.record(z.string(), z.string()).default({}),
  shard: z
    .looseObject({ index: z.int().min(1), count: z.int().min(1) })
    .nullable()
    .default(null),
  summary: summarySchema.prefault({}),
  /** Verdicts by scenario, in planned order. */
  scenarios: z.array(scenarioSummarySchema).default([]),
  /** Every call, in planned order. */
  results: z.array(callResultSchema).default([]),
  /** Notes for a reader ("first deploy: no old versions, plain smoke"). */
  notes: z.array(z.string()).default([]),
  /**
   * What fails the run (see outcome.ts): compare "failure" (default) or "regression"; audit
   * "unknown" (--fail-on-unknown).
   */
  fail_on: z.string().nullable().default(null),
  /** A comparison in which a scenario without a baseline (`summary.no_baseline`) fails the run, exit 3 (--require-baseline). */
  require_baseline: z.boolean().default(false),
  /** A comparison whose sequential test ended inconclusive does not fail the run (--allow-inconclusive). */
  allow_inconclusive: z.boolean().default(false),
  /** The run was stopped (SIGINT/SIGTERM): unfinished calls are marked, the exit code is 130. */
  interrupted: z.boolean().default(false),
  /** Live traffic per version (kinds "watch" and "audit"; see traffic.ts). */
  traffic: trafficSchema.optional(),
  /** Config variants against the base (kind "try"; see variants.ts). */
  variants: variantsSchema.optional(),
  /** A blessed baseline against now, per scenario (kind "drift"; see drift-schema.ts). */
  drift: driftSchema.optional(),
});

export type ReportAssertion = z.output<typeof assertionSchema>;
export type ReportEntry = z.output<typeof entrySchema>;
export type CallLatency = z.output<typeof callLatencySchema>;
export type CallResult = z.output<typeof callResultSchema>;
export type CallOutcome = z.output<typeof callOutcomeSchema>;
export type CallOutcomeKind = z.output<typeof callOutcomeKind>;
export type CallStage = z.output<typeof callStage>;
export type LatencySummary = z.output<typeof latencySummarySchema>;
export type Verdict = z.output<typeof verdict>;
export type ComparisonOutcome = z.output<typeof comparisonOutcome>;
export type ScenarioComparison = z.output<typeof scenarioComparisonSchema>;
export type ScenarioSummary = z.output<typeof scenarioSummarySchema>;
export type ReportSummary = z.output<typeof summarySchema>;
export type Report = z.output<typeof reportSchema>;
