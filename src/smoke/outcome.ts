// A call's typed outcome, made where the call fails from the client's typed errors (src/api) and
// the call's own signals, never from a message: the kind (passed, failed, error, not run,
// interrupted), the stage that failed, the request, the HTTP status, and a code. The report holds
// it in snake_case (src/results: `outcome`); these are the converters both ways.
import { ApiError, ConnectionError, TimeoutError } from "../api/index.ts";
import type { CallerFailure } from "../caller/index.ts";
import {
  type CallOutcomeKind,
  type CallStage,
  type Fault,
  type CallOutcome as ReportOutcome,
  unknownVersion,
} from "../results/index.ts";

/** A call's outcome (the report's `outcome`, camelCase). */
export type CallOutcome = {
  kind: CallOutcomeKind;
  /** The step that failed (or was cut short). */
  stage?: CallStage;
  /** The request that failed: method and path, without its query (`POST /conversations`). */
  request?: string;
  /** The HTTP status the service answered with. */
  httpStatus?: number;
  /** A network code (ECONNREFUSED), one of OUTCOME_CODES, or the service's own error code. */
  code?: string;
};

/** The codes this tool gives an outcome (a network code or the service's own are passed on as they are). */
export const OUTCOME_CODES = {
  /** The caller's line was sent and the service did not show it heard (a server.error, the session closed, the deadline). */
  callerNotHeard: "caller_not_heard",
  /** A caller turn's `after:` was never said by the agent: the line was not sent, agent-iac ended the call. */
  callerCueMissing: "caller_cue_missing",
  /** The agent did not finish its turn before the conversation ended: a caller line was left unsaid. */
  callerNotSaid: "caller_not_said",
  /** The persona's model could not write the caller's next line (an error after retries, no answer by the call's end). */
  callerModelFailed: "caller_model_failed",
  /** The persona caller said no line (its model answered DONE at once, or the call ended first): it played nothing. */
  callerSilent: "caller_silent",
  /** The caller's model answered something that is not a caller's line (a JSON object, a judge's verdict, rephrasings not N plain lines per turn). */
  callerNotALine: "caller_not_a_line",
  /** The judge found that the persona caller left its persona or goal: the call is inconclusive, re-placed. */
  callerStrayed: "caller_strayed",
  /** The scenario's `timeout` passed before the call ended. */
  timeout: "timeout",
  /** The call failed and a server.error of the service was its last event: the service ended it. */
  serviceError: "service_error",
  /** The client gave up waiting for a response (its own request timeout). */
  requestTimeout: "request_timeout",
  /** The event stream ended without conversation.ended. */
  streamClosed: "stream_closed",
  /** The run was stopped before the call was placed. */
  runStopped: "run_stopped",
  /** The judge could not decide a rubric. */
  judgeError: "judge_error",
  /** The judge's adaptive votes on a rubric did not settle by their cap: the call is inconclusive, the judge's fault. */
  judgeUnsettled: "judge_unsettled",
  /** The scenario has judged expectations and no judge is configured. */
  noJudge: "no_judge",
  /** `report merge`: the call's shard has no report; it is counted as a failed iteration, never as evidence. */
  shardMissing: "shard_missing",
  /** Placing the call threw where it should have reported (a bug). */
  internal: "internal",
} as const;

/** The outcome code of a caller's failure: each names its cause, so a line never sent is not "not heard". */
export const CALLER_FAILURE_CODES: Record<CallerFailure["kind"], string> = {
  not_delivered: OUTCOME_CODES.callerNotHeard,
  cue_missing: OUTCOME_CODES.callerCueMissing,
  not_said: OUTCOME_CODES.callerNotSaid,
  source_failed: OUTCOME_CODES.callerModelFailed,
  silent: OUTCOME_CODES.callerSilent,
  not_a_line: OUTCOME_CODES.callerNotALine,
};

/** The codes of a caller's own failures: the caller (a persona's model) played nothing worth judging. */
const CALLER_OWN_CODES: readonly string[] = [
  OUTCOME_CODES.callerModelFailed,
  OUTCOME_CODES.callerSilent,
  OUTCOME_CODES.callerNotALine,
];

/**
 * Whose fault a call's failure or error is, from its outcome alone (so a replay and a merge say the
 * same): the caller's own failures → caller; a line not heard, or a server.error that ended the call
 * → service; another caller code (a cue the agent never said, a turn it never let the caller say),
 * any other unmet expectation, and a call the agent never ended (the scenario's timeout while the
 * stream was open) → agent; a judge that could not judge → judge; any other error (HTTP, the stream,
 * the service's requests) → service. An inconclusive call is the judge's when its
 * votes did not settle, else its caller strayed.
 */
export function faultOf(outcome: CallOutcome): Fault | null {
  const { kind, code, stage } = outcome;
  if (kind === "inconclusive") return code === OUTCOME_CODES.judgeUnsettled ? "judge" : "caller";
  if (kind !== "failed" && kind !== "error") return null;
  if (code !== undefined && CALLER_OWN_CODES.includes(code)) return "caller";
  if ([OUTCOME_CODES.callerNotHeard, OUTCOME_CODES.shardMissing, OUTCOME_CODES.serviceError].includes(code as never)) {
    return "service";
  }
  if (kind === "failed") return "agent";
  if (code === OUTCOME_CODES.timeout && stage === "stream") return "agent";
  return stage === "judge" ? "judge" : "service";
}

/** The event stream ended without conversation.ended (a scenario that expects the call to end). */
export class StreamClosedError extends Error {
  override name = "StreamClosedError";
  constructor() {
    super("the event stream closed before conversation.ended");
  }
}

/**
 * The outcome of a call that threw at `stage`: interrupted when the run's signal stopped it, else
 * an error with what the client's typed error says (its request, status, network or service code).
 */
export function failureOutcome(
  error: unknown,
  at: { stage: CallStage; interrupted: boolean; timedOut: boolean },
): CallOutcome {
  const request = error instanceof ApiError ? { request: `${error.method} ${error.path}` } : {};
  if (at.interrupted) return { kind: "interrupted", stage: at.stage, ...request };
  if (at.timedOut) return { kind: "error", stage: at.stage, ...request, code: OUTCOME_CODES.timeout };
  if (error instanceof StreamClosedError) return { kind: "error", stage: at.stage, code: OUTCOME_CODES.streamClosed };
  if (!(error instanceof ApiError)) return { kind: "error", stage: at.stage };
  // A stream that gave up reconnecting wraps its last failure: the facts are that failure's.
  let last: ApiError = error;
  while (last.cause instanceof ApiError) last = last.cause;
  const code =
    last instanceof ConnectionError
      ? last.networkCode
      : last instanceof TimeoutError
        ? OUTCOME_CODES.requestTimeout
        : serviceCode(last.body);
  return {
    kind: "error",
    stage: at.stage,
    ...request,
    ...(last.status === undefined ? {} : { httpStatus: last.status }),
    ...(code ? { code } : {}),
  };
}

/** The service's error code in an error body, where it gives one: `error.code`, `code`, `error.type`, `type`. */
function serviceCode(body: unknown): string | undefined {
  if (!body || typeof body !== "object") return undefined;
  const record = body as Record<string, unknown>;
  const nested = record.error && typeof record.error === "object" ? (record.error as Record<string, unknown>) : {};
  const code = [nested.code, record.code, nested.type, record.type].find((v) => typeof v === "string" && v !== "");
  return typeof code === "string" ? code.slice(0, 100) : undefined;
}

/** The report's shape of an outcome (snake_case, nulls for what there is not). */
export function reportOutcome(outcome: CallOutcome): ReportOutcome {
  return {
    kind: outcome.kind,
    stage: outcome.stage ?? null,
    request: outcome.request ?? null,
    http_status: outcome.httpStatus ?? null,
    code: outcome.code ?? null,
  };
}

/** An outcome from the report's shape (a recording's footer). */
export function outcomeFromReport(outcome: ReportOutcome): CallOutcome {
  return {
    kind: outcome.kind,
    ...(outcome.stage === null ? {} : { stage: outcome.stage }),
    ...(outcome.request === null ? {} : { request: outcome.request }),
    ...(outcome.http_status === null ? {} : { httpStatus: outcome.http_status }),
    ...(outcome.code === null ? {} : { code: outcome.code }),
  };
}

type WithOutcome = { outcome: CallOutcome } | { outcome: ReportOutcome };

/**
 * The calls whose pinned version the service did not know: creating the conversation was answered
 * 404. Results of a run (`ScenarioResult`) or of a report (`CallResult`) alike.
 */
export function unknownVersionCalls<T extends WithOutcome>(results: readonly T[]): T[] {
  return results.filter((result) => {
    const outcome: {
      kind: CallOutcomeKind;
      stage?: CallStage | null;
      httpStatus?: number;
      http_status?: number | null;
    } = result.outcome;
    const { kind, stage = null } = outcome;
    return unknownVersion({ outcome: { kind, stage, http_status: outcome.httpStatus ?? outcome.http_status ?? null } });
  });
}
