// One smoke call: place a conversation against a pinned version, follow its event stream until it
// ends, wait for the expected procedures to reach their expected status, and evaluate. The
// scenario's timeout is one deadline over every request the call makes (the create, the stream, the
// procedure polls); a call never decides that a status is final, since the interface names no set.
import { setTimeout as sleep } from "node:timers/promises";
import type { Client, CreateConversationResponse, EventEnvelope, Procedure } from "../api/index.ts";
import { displayUrl, STREAMS } from "../api/index.ts";
import {
  CALLER_OWN_FAILURES,
  Caller,
  type CallerFailure,
  type CallerLine,
  type CallerShape,
  callerShape,
  scriptedTurns,
  type TurnSource,
} from "../caller/index.ts";
import { deepMerge } from "../contract/index.ts";
import { callerCheckRubric, requiredPasses, type SmokeScenario } from "../definitions/index.ts";
import type { Judge } from "../judge/index.ts";
import type { CallLatency, CallStage } from "../results/index.ts";
import { defaultMargin } from "../stats/index.ts";
import {
  type Assertion,
  type ExpectationIdentity,
  evaluate,
  evaluateJudged,
  judgedAssertion,
  type Observation,
  type ObservedProcedure,
  type ProcedureMatch,
} from "./expectations.ts";
import type { Gate } from "./gates.ts";
import { textMatcher } from "./matchers.ts";
import { observeEvents } from "./observe.ts";
import { CALLER_FAILURE_CODES, failureOutcome, OUTCOME_CODES, StreamClosedError } from "./outcome.ts";
import type { ScenarioResult } from "./reports.ts";
import { displayLines, observedEntries } from "./transcript.ts";

export type Scenario = SmokeScenario;

/** How the procedures of one linked procedural agent are recognised in the conversation's list. */
export type ProceduralTarget = { id?: string; name: string; matchBy: ProcedureMatch };

export type PlannedCall = {
  agent: string;
  scenario: Scenario;
  iteration: number;
  versionId: string;
  /** Procedural agent key → how its procedures are found (procedure expectations). */
  procedural: Record<string, ProceduralTarget>;
  /** Whether a live call may be placed (`--live`). */
  live: boolean;
  /** Sent as `override_config` under the scenario's own (plan --behave: the proposed config sections). */
  overrideConfig?: Record<string, unknown>;
};

/** `by`: whether a user line of a call with a caller is the caller's. */
export type CallListener = (call: PlannedCall, envelope: EventEnvelope, by?: "caller" | "not_caller") => void;

/** A waiting call: what it waits for, the last thing it saw, and the time it has left. */
export type Progress = { call: PlannedCall; waitingFor: string; lastSeen: string; remainingMs: number };

export type CallHooks = {
  onEvent?: CallListener;
  /** Called about once a second while the call runs. */
  onProgress?: (progress: Progress) => void;
  /** Stops the call (the whole run is interrupted); the scenario's own timeout applies anyway. */
  signal?: AbortSignal;
  /** Keep the envelopes on the result (for `--record`). */
  keepEnvelopes?: boolean;
  /** Judges the scenario's `expect.judge` rubrics (required when it has any). */
  judge?: Judge | undefined;
  /** How long a procedure status other than the expected one may stay unchanged (default PROCEDURE_STALL_MS). */
  procedureStallMs?: number;
  /** How a caller's lines are sent (the job resolves it from the settings); default: the simulator's shapes. */
  callerShape?: CallerShape | undefined;
  /** The lines of a persona caller (`caller.persona`); scripted turns need none. */
  persona?: ((call: PlannedCall) => TurnSource) | undefined;
  /** The lines of scripted turns with `caller.variations`: the call's rephrasing of each. */
  variations?: ((call: PlannedCall) => TurnSource) | undefined;
  /**
   * On the local simulator: how long its default turns wait for a model-written caller's first line
   * (`context.simulation.caller_wait_ms`, docs/simulator.md); a model may take seconds to answer.
   */
  modelCallerWaitMs?: number | undefined;
};

const POLL_MS = { first: 250, max: 2000 };
const PROGRESS_MS = 1000;
/** More procedures than one conversation should ever have: the poll reads no further. */
const MAX_PROCEDURES = 1000;

type WaitState = {
  /** The step under way (the stage a failure is reported at). */
  stage: CallStage;
  waitingFor: string;
  lastSeen: string;
  ended: boolean;
  firstAgentAt?: number;
  /** The call's caller, when the scenario has one. */
  caller?: Caller;
  /** A persona's model, asked and answering. */
  callerModel?: TurnSource["model"];
  /** Why the caller failed (a turn not delivered, a cue never said): the call fails with it. */
  callerFailure?: CallerFailure;
};

const INTERRUPTED = "interrupted: the smoke run was stopped before this call finished";

export async function placeCall(client: Client, call: PlannedCall, hooks: CallHooks = {}): Promise<ScenarioResult> {
  const { scenario } = call;
  const started = performance.now();
  const timeout = AbortSignal.timeout(scenario.timeout * 1000);
  const signal = hooks.signal ? AbortSignal.any([timeout, hooks.signal]) : timeout;
  const state: WaitState = {
    stage: "create",
    waitingFor: "the conversation to be created",
    lastSeen: "nothing yet",
    ended: false,
  };
  const remainingMs = () => Math.max(0, started + scenario.timeout * 1000 - performance.now());
  const tick = () =>
    hooks.onProgress?.({ call, waitingFor: state.waitingFor, lastSeen: state.lastSeen, remainingMs: remainingMs() });
  const ticker = setInterval(tick, PROGRESS_MS);
  ticker.unref();
  const result: ScenarioResult = {
    agent: call.agent,
    scenario: scenario.name,
    iteration: call.iteration,
    versionId: call.versionId,
    transport: scenario.transport,
    status: "error",
    outcome: { kind: "error" },
    assertions: [],
    timings: { durationMs: 0 },
    gate: gateOf(scenario),
    startedAt: new Date().toISOString(),
    livemode: scenario.livemode && call.live,
  };
  const envelopes: EventEnvelope[] = [];
  if (hooks.keepEnvelopes) result.envelopes = envelopes;
  const seconds = () => (performance.now() - started) / 1000;
  try {
    const conversation = await client.conversations.create(
      {
        agent_id: call.versionId,
        channel: { type: "phone", ...scenario.channel },
        livemode: result.livemode ?? false,
        ...contextOf(call, hooks.modelCallerWaitMs),
        ...overrideConfigOf(call),
      },
      { signal },
    );
    result.conversationId = conversation.id;
    result.eventsUrl = displayUrl(conversation.channel.events_url);
    await follow(client, call, conversation, { signal, envelopes, state, hooks });
    if (state.callerFailure) {
      callerFailed(result, scenario, state.callerFailure, envelopes, seconds(), state.caller?.lines);
      return finish(result, started, state, ticker);
    }
    const stallMs = hooks.procedureStallMs ?? PROCEDURE_STALL_MS;
    const procedures = await waitForProcedures(client, call, conversation.id, { signal, state, stallMs });
    if (hooks.signal?.aborted) throw hooks.signal.reason;
    ({ observation: result.observation, latency: result.latency } = observeCall(
      envelopes,
      seconds(),
      procedures,
      state.caller?.lines,
    ));
    state.stage = "judge";
    state.waitingFor = "the judge";
    await judgeResult(result, scenario, hooks.judge, hooks.signal);
    callerHeard(result, state.caller?.lines);
    await checkCaller(result, scenario, hooks.judge, hooks.signal);
    // A judgement the stop cut short is the stop's, not the judge's.
    if (result.outcome.kind === "error" && hooks.signal?.aborted) {
      result.outcome = { kind: "interrupted", stage: "judge" };
      result.error = INTERRUPTED;
    }
  } catch (error) {
    const interrupted = hooks.signal?.aborted ?? false;
    result.status = "error";
    result.outcome = failureOutcome(error, { stage: state.stage, interrupted, timedOut: timeout.aborted });
    result.error = interrupted
      ? INTERRUPTED
      : timeout.aborted
        ? `timed out after ${scenario.timeout} s waiting for ${state.waitingFor}`
        : error instanceof Error
          ? error.message
          : String(error);
    ({ observation: result.observation, latency: result.latency } = observeCall(
      envelopes,
      seconds(),
      [],
      state.caller?.lines,
    ));
  } finally {
    clearInterval(ticker);
  }
  return finish(result, started, state, ticker);
}

function finish(result: ScenarioResult, started: number, state: WaitState, ticker: NodeJS.Timeout): ScenarioResult {
  clearInterval(ticker);
  result.timings = {
    durationMs: Math.round(performance.now() - started),
    ...(state.firstAgentAt === undefined
      ? {}
      : { timeToFirstAgentMessageMs: Math.round(state.firstAgentAt - started) }),
  };
  if (state.caller) result.callerLines = state.caller.lines.map((line) => ({ ...line }));
  if (state.callerModel) result.callerModel = { ...state.callerModel };
  return result;
}

/** A caller not heard is not a pass: the call fails with the caller's assertion first, then the literal expectations. */
function callerFailed(
  result: ScenarioResult,
  scenario: Scenario,
  failure: CallerFailure,
  envelopes: EventEnvelope[],
  durationSec: number,
  callerLines: readonly CallerLine[] | undefined,
): void {
  ({ observation: result.observation, latency: result.latency } = observeCall(envelopes, durationSec, [], callerLines));
  applyCallerFailure(result, scenario, failure);
}

/**
 * Fails an observed call with its caller's failure (live, or replayed from the recording). A call
 * the caller ended itself is not checked for conversation.ended: agent-iac, not the agent, ended it.
 * A caller that failed on its own (a persona's model) played nothing worth judging: the call is an
 * error, its expectations not evaluated, never a pass and never the agent's failure.
 */
export function applyCallerFailure(result: ScenarioResult, scenario: Scenario, failure: CallerFailure): void {
  const own = CALLER_OWN_FAILURES.includes(failure.kind);
  const expect = failure.endedCall ? { ...scenario.expect, ends: false } : scenario.expect;
  const what = failure.kind === "not_delivered" ? "is heard" : "is said";
  result.assertions = [
    { ...CALLER, description: `the caller's turn ${failure.turn} ${what}`, passed: false, detail: failure.message },
    ...(own ? [] : evaluate(expect, result.observation as Observation)),
  ];
  result.status = own ? "error" : "failed";
  result.outcome = { kind: result.status, stage: "stream", code: CALLER_FAILURE_CODES[failure.kind] };
  result.error = failure.message;
  result.callerFailure = failure;
}

/** Whether the caller was heard is one expectation, however its assertion words the turn that failed. */
const CALLER: ExpectationIdentity = { kind: "caller", key: "caller" };

/** A judged call whose caller was heard (live or replayed) says so first: "the caller's N lines were heard". */
export function callerHeard(result: ScenarioResult, lines: readonly CallerLine[] | undefined): void {
  if (!lines || result.outcome.kind === "error") return;
  const n = lines.length;
  result.assertions.unshift({
    ...CALLER,
    description: `the caller's ${n} line${n === 1 ? " was" : "s were"} heard`,
    passed: true,
  });
}

/**
 * After an evaluated persona call, when a judge is configured (and `caller.check` is not false): did
 * the caller stay in its persona and pursue its goal? One that did not tested nothing: the call is
 * inconclusive, the caller's fault (never a pass, never the agent's failure). A judge that could
 * not decide leaves the call an error, as for any rubric.
 */
export async function checkCaller(
  result: ScenarioResult,
  scenario: Scenario,
  judge: Judge | undefined,
  signal?: AbortSignal,
): Promise<void> {
  const rubric = callerCheckRubric(scenario);
  if (!rubric || !judge || (result.outcome.kind !== "passed" && result.outcome.kind !== "failed")) return;
  const observation = result.observation as Observation;
  // Who said each line is what the check is about; times would only defeat the cache.
  const judgement = await judge.judge(rubric, displayLines(observation, { times: false }), signal);
  const assertion: Assertion = {
    ...judgedAssertion(judgement, displayLines(observation)),
    ...CALLER_CHECK,
    description: "the caller stays in its persona and pursues its goal",
  };
  result.assertions.unshift(assertion);
  if (judgement.verdict === "error") {
    result.status = "error";
    result.outcome = { kind: "error", stage: "judge", code: OUTCOME_CODES.judgeError };
    result.error = `judge could not decide whether the caller stayed in its persona: ${judgement.error}`;
  } else if (judgement.verdict === "inconclusive") {
    judgeUnsettled(result, `whether the caller stayed in its persona (${judgement.reason})`);
  } else if (!assertion.passed) {
    result.status = "inconclusive";
    result.outcome = { kind: "inconclusive", stage: "judge", code: OUTCOME_CODES.callerStrayed };
    result.error = `inconclusive: the caller left its persona or goal (${judgement.reason}); the call tested nothing (placed again while the scenario's budget allows)`;
  }
}

const CALLER_CHECK: ExpectationIdentity = { kind: "caller", key: "fidelity" };

/**
 * Evaluates a completed call: the literal expectations, then the judged ones. A judgement that could
 * not be made leaves the call an error (exit 3), whatever the other expectations say.
 */
export async function judgeResult(
  result: ScenarioResult,
  scenario: Scenario,
  judge: Judge | undefined,
  signal?: AbortSignal,
): Promise<void> {
  const observation = result.observation as Observation;
  result.assertions = evaluate(scenario.expect, observation);
  const judged = await evaluateJudged(scenario.expect, observation, judge, signal);
  result.assertions.push(...judged.assertions);
  if (judged.error) {
    result.status = "error";
    result.outcome = { kind: "error", stage: "judge", code: judge ? OUTCOME_CODES.judgeError : OUTCOME_CODES.noJudge };
    result.error = judged.error;
    return;
  }
  result.status = result.assertions.length > 0 && result.assertions.every((a) => a.passed) ? "passed" : "failed";
  // A failed call that the service's own server.error ended is the service's failure, not the agent's.
  const ended = result.status === "failed" && observation.ended && observation.entries.at(-1)?.kind === "error";
  result.outcome = ended ? { kind: "failed", code: OUTCOME_CODES.serviceError } : { kind: result.status };
  // Unmet only where the judge did not settle: the call decided nothing, neither a pass nor the agent's failure.
  const unsettled = result.assertions.flatMap((a) => (a.judgement?.verdict === "inconclusive" ? [a.judgement] : []));
  if (unsettled.length > 0 && result.assertions.every((a) => a.passed || a.judgement?.verdict === "inconclusive")) {
    judgeUnsettled(result, unsettled.map((j) => `${JSON.stringify(j.rubric)} (${j.reason})`).join("; "));
  }
}

/** A call the judge's votes left undecided: inconclusive, the judge's fault (not placed again: the judge is in doubt, not the call). */
function judgeUnsettled(result: ScenarioResult, what: string): void {
  result.status = "inconclusive";
  result.outcome = { kind: "inconclusive", stage: "judge", code: OUTCOME_CODES.judgeUnsettled };
  result.error = `inconclusive: the judge did not settle ${what}; the call decided nothing (a judge that splits on a rubric needs the rubric reworded, or more votes)`;
}

/**
 * The scenario's context; for a caller whose lines a model writes (a persona, `caller.variations`)
 * on the local simulator, with the simulator told to wait that long for its first line (unless the
 * scenario says otherwise), so that a model slower than the simulator's default wait still plays it.
 */
function contextOf(call: PlannedCall, waitMs: number | undefined): { context?: Record<string, unknown> } {
  const { context, caller } = call.scenario;
  const modelWritten = caller?.persona !== undefined || caller?.variations !== undefined;
  const simulation = context?.simulation ?? {};
  const open =
    typeof simulation === "object" &&
    simulation !== null &&
    !Array.isArray(simulation) &&
    !("user_turns" in simulation) &&
    !("caller_wait_ms" in simulation);
  if (waitMs === undefined || !modelWritten || !open) return context ? { context } : {};
  return { context: { ...context, simulation: { ...simulation, caller_wait_ms: waitMs } } };
}

/** The call's own override sections with the scenario's override_config merged over them. */
function overrideConfigOf(call: PlannedCall): { override_config?: Record<string, unknown> } {
  const { overrideConfig } = call;
  const own = call.scenario.override_config;
  if (!overrideConfig) return own ? { override_config: own } : {};
  return { override_config: deepMerge(overrideConfig, own) };
}

/** What a scenario is judged against over its iterations. */
export function gateOf(scenario: Scenario): Gate {
  const { pass_rate: passRate, confidence, pass_k: passK } = scenario;
  return {
    plannedIterations: scenario.iterations,
    minPass: requiredPasses(scenario),
    bounds: scenario.expect.latency ?? {},
    ...(passRate !== undefined && confidence !== undefined
      ? {
          sequential: {
            passRate,
            confidence,
            margin: scenario.margin ?? defaultMargin(passRate),
            maxIterations: scenario.iterations,
          },
        }
      : {}),
    ...(passK ? { passK } : {}),
  };
}

type Following = {
  signal: AbortSignal;
  /** Every envelope as received, in order. */
  envelopes: EventEnvelope[];
  state: WaitState;
  hooks: CallHooks;
};

/** Reads the call's stream (SSE or WebSocket, opened with its ephemeral token) until conversation.ended. */
async function follow(
  client: Client,
  call: PlannedCall,
  conversation: CreateConversationResponse,
  { signal, envelopes, state, hooks }: Following,
): Promise<void> {
  const { scenario } = call;
  state.stage = "stream";
  state.waitingFor = "the conversation to end";
  const options = {
    token: conversation.channel.token,
    eventsUrl: conversation.channel.events_url,
    idleTimeoutMs: scenario.timeout * 1000,
    signal,
  };
  let caller: Caller | undefined;
  try {
    const stream = await STREAMS[scenario.transport](client, conversation.id, options);
    const speaker = stream.speaker;
    if (speaker && scenario.caller) {
      const source = callerSource(call, hooks);
      state.callerModel = source.model;
      caller = new Caller(
        source,
        { send: (message) => speaker.send(message), close: () => speaker.close() },
        hooks.callerShape ?? callerShape({ message: undefined, end: undefined }, "http://127.0.0.1"),
        { cue: (pattern) => textMatcher(pattern).test },
      );
      state.caller = caller;
      state.waitingFor = "the conversation to end (the caller speaking)";
      caller.start();
    }
    for await (const envelope of stream.events) {
      envelopes.push(envelope);
      const by = caller?.observe(envelope);
      const type = envelope.payload.type;
      state.lastSeen = `event ${type.slice(0, 60)}`;
      if (state.firstAgentAt === undefined && type.startsWith("agent.message")) state.firstAgentAt = performance.now();
      hooks.onEvent?.(call, envelope, by);
      if (type === "conversation.ended") {
        state.ended = true;
        break;
      }
    }
  } catch (error) {
    // A caller not heard is the call's failure, whatever the stream did after it.
    if (caller) {
      const failure = caller.settle(hooks.signal?.aborted ? "closed" : signal.aborted ? "deadline" : "closed");
      if (failure && !hooks.signal?.aborted) {
        state.callerFailure = failure;
        return;
      }
    }
    // A scenario that does not expect the call to end stops at its timeout, which is not a failure.
    if (!(signal.aborted && scenario.expect.ends === false)) throw error;
  } finally {
    caller?.stop();
  }
  if (caller) {
    const failure = caller.settle(state.ended ? "ended" : "closed");
    if (failure) {
      state.callerFailure = failure;
      return;
    }
  }
  if (!state.ended && scenario.expect.ends !== false && !signal.aborted) {
    throw new StreamClosedError();
  }
}

/** Where the call's caller gets its lines: the scenario's turns (or their rephrasings), or the persona's model. */
function callerSource(call: PlannedCall, hooks: CallHooks): TurnSource {
  const spec = call.scenario.caller;
  if (spec?.turns && spec.variations !== undefined) {
    if (!hooks.variations) throw new Error("rephrased turns need the caller's model (the smoke job sets it up)");
    return hooks.variations(call);
  }
  if (spec?.turns) return scriptedTurns(spec.turns);
  if (!hooks.persona) throw new Error("a persona caller needs its model (the smoke job sets it up)");
  return hooks.persona(call);
}

/**
 * How long a procedure's status may stay the same word, other than the expected one, before the
 * expectation fails without waiting out the scenario's timeout (issue 42). The interface names no
 * final status, so the tool cannot know that `completed` will never become `succeeded`; but a status
 * unchanged this long is taken as the service's last word. Documented in docs/smoke.md.
 */
const PROCEDURE_STALL_MS = 20_000;

/**
 * Polls the conversation's procedures until each expected one shows its expected status, or has
 * kept another status for `stallMs` (PROCEDURE_STALL_MS), or the deadline passes;
 * returns what was seen last, with the statuses each procedure went through.
 */
async function waitForProcedures(
  client: Client,
  call: PlannedCall,
  conversationId: string,
  { signal, state, stallMs }: { signal: AbortSignal; state: WaitState; stallMs: number },
): Promise<ObservedProcedure[]> {
  const expected = Object.entries(call.scenario.expect.procedures ?? {});
  if (expected.length === 0) return [];
  state.stage = "procedures";
  state.waitingFor = `procedures ${expected.map(([key, status]) => `${key} → ${status}`).join(", ")}`;
  let observed = expected.map(([key]) => observeProcedure(call, key, []));
  /** Per key: the statuses seen in order (each once in a row), and when the last one was first seen. */
  const history = new Map<string, { statuses: string[]; since: number }>();
  const settled = (key: string, status: string) => {
    const seen = observed.find((p) => p.key === key);
    if (seen?.status === status) return true;
    const since = history.get(key)?.since;
    return seen?.status !== undefined && since !== undefined && performance.now() - since >= stallMs;
  };
  for (let delay = POLL_MS.first; !signal.aborted; delay = Math.min(delay * 2, POLL_MS.max)) {
    try {
      const page = await client.conversations.procedures(conversationId, {}, { signal }).toArray(MAX_PROCEDURES);
      observed = expected.map(([key]) => observeProcedure(call, key, page));
    } catch (error) {
      if (signal.aborted) break;
      throw error;
    }
    for (const p of observed) {
      if (p.status === undefined) continue;
      const seen = history.get(p.key);
      if (!seen) history.set(p.key, { statuses: [p.status], since: performance.now() });
      else if (seen.statuses.at(-1) !== p.status) {
        seen.statuses.push(p.status);
        seen.since = performance.now();
      }
    }
    state.lastSeen = observed.map((p) => `${p.key} ${p.status?.slice(0, 40) ?? "(none yet)"}`).join(", ");
    if (expected.every(([key, status]) => settled(key, status))) {
      return observed.map((p) => {
        const statuses = history.get(p.key)?.statuses;
        const wanted = call.scenario.expect.procedures?.[p.key];
        const stalled = p.status !== undefined && p.status !== wanted;
        return { ...p, ...(statuses ? { statuses } : {}), ...(stalled ? { stalledMs: stallMs } : {}) };
      });
    }
    await sleep(delay, undefined, { signal }).catch(() => {});
  }
  return observed.map((p) => {
    const statuses = history.get(p.key)?.statuses;
    return { ...p, ...(statuses ? { statuses } : {}), timedOut: true };
  });
}

function observeProcedure(call: PlannedCall, key: string, page: Procedure[]): ObservedProcedure {
  const target = call.procedural[key];
  const match = target
    ? page.find((p) => (target.matchBy === "agent_id" ? p.agent_id === target.id : p.name === target.name))
    : undefined;
  return {
    key,
    agentId: match?.agent_id ?? target?.id ?? "",
    ...(target ? { name: target.name, matchedBy: target.matchBy } : {}),
    ...(match ? { status: match.status, output: match.output, error: match.error } : {}),
  };
}

/**
 * What a call's events show, in the terms the expectations use, and its latency. Live calls and
 * replayed recordings both come here, so they reach the same verdicts.
 */
export function observeCall(
  envelopes: readonly EventEnvelope[],
  durationSec: number,
  procedures: ObservedProcedure[],
  callerLines?: readonly CallerLine[],
): { observation: Observation; latency: CallLatency } {
  const { transcript, entryTimes, callerEntries, latency } = observeEvents(envelopes, callerLines);
  const { entries, toolCalls } = observedEntries(transcript);
  const observation: Observation = {
    agentMessages: transcript.messages.map((m) => ({ text: m.text, complete: m.complete })),
    toolCalls,
    errors: [...transcript.errors],
    ended: transcript.ended,
    durationSec,
    procedures,
    entries,
    entryTimes,
    ...(callerLines ? { callerEntries } : {}),
  };
  return { observation, latency };
}
