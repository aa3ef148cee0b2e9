// Evaluates a scenario's `expect` block against what one call showed. The literal expectations are
// pure (no I/O); the judged ones (`expect.judge`) ask the configured judge, after them.
import { type Expectations, judgeRubrics } from "../definitions/index.ts";
import type { Judge, Judgement } from "../judge/index.ts";
import { answeredBy } from "../results/index.ts";
import { argumentMatches, MatchTimeout, textMatcher } from "./matchers.ts";
import type { EntryTime } from "./observe.ts";
import { displayLines, type ObservedEntry, type ObservedToolCall, renderEntry } from "./transcript.ts";

export type { Expectations } from "../definitions/index.ts";

/** How a procedure was found: by the linked agent's id, or by its name (a version the stack no longer holds). */
export type ProcedureMatch = "agent_id" | "name";

export type ObservedProcedure = {
  key: string;
  /** The procedural agent looked for: its id (when known) and its name. */
  agentId: string;
  name?: string;
  matchedBy?: ProcedureMatch;
  status?: string;
  output?: unknown;
  error?: unknown;
  /** The wait ended at the scenario's deadline, not at the expected status. */
  timedOut?: boolean;
  /** The statuses the procedure went through while the call waited, in order. */
  statuses?: string[];
  /** The wait ended early: the status stayed another word than the expected one this long (ms). */
  stalledMs?: number;
};

export type Observation = {
  agentMessages: { text: string; complete: boolean }[];
  toolCalls: ObservedToolCall[];
  /** The `error` of every server.error event. */
  errors: unknown[];
  ended: boolean;
  durationSec: number;
  procedures: ObservedProcedure[];
  /** Agent and user messages, tool calls and errors in arrival order, as data. */
  entries: ObservedEntry[];
  /** When each entry happened (parallel to `entries`), from the events' `created_at`. */
  entryTimes?: EntryTime[];
  /**
   * The call had a caller: the user entries (by index) that are its lines, shown as `caller: … (at N s)`;
   * any other user entry is not the caller's (the service's own turns) and is labelled so.
   */
  callerEntries?: readonly number[];
};

/** The fields of `expect` checked from the call alone, in the order their assertions are listed. */
type LiteralField = "says" | "never_says" | "tool_calls" | "no_errors" | "ends" | "max_duration_sec" | "procedures";

/**
 * What an assertion checks, apart from its words: `kind` (a literal field, a judged rubric, the
 * scenario's caller, a merged shard's loss) and `key` (which one of that kind; the field's name for
 * a field of one). Reports keep it and old-vs-new joins on it, so an assertion worded anew (the
 * caller's "3 lines were heard" → "turn 2 is heard") stays one expectation.
 */
export type ExpectationIdentity = { kind: LiteralField | "judge" | "caller" | "shard"; key: string };

export type Assertion = ExpectationIdentity & {
  description: string;
  passed: boolean;
  detail?: string;
  context?: string[];
  /** A judged expectation's verdict, votes, reason and cited lines. */
  judgement?: Judgement;
};

/** What checking one expectation found. */
type Check = Omit<Assertion, keyof ExpectationIdentity | "description">;

const CONTEXT_LINES = 6;

/** One item of each literal field: a phrase, a tool call, a procedure's key and status, a bound. */
type Item = {
  says: string;
  never_says: string;
  tool_calls: { name: string; arguments?: Record<string, unknown> | undefined };
  no_errors: true;
  ends: true;
  max_duration_sec: number;
  procedures: readonly [key: string, status: string];
};

/** A kind of literal expectation: the items its schema field holds, each one's key and words, and its check. */
type Kind<F extends LiteralField> = {
  items: (value: Expectations[F]) => readonly Item[F][];
  key: (item: Item[F]) => string;
  describe: (item: Item[F]) => string;
  evaluate: (item: Item[F], observed: Observation) => Check;
};

/** The literal expectation kinds, in the order their assertions are listed. */
const KINDS: { [F in LiteralField]: Kind<F> } = {
  says: {
    items: (phrases) => phrases ?? [],
    key: (phrase) => phrase,
    describe: (phrase) => `says ${textMatcher(phrase).describe}`,
    evaluate: (phrase, observed) => {
      const matcher = textMatcher(phrase);
      const completed = observed.agentMessages.filter((m) => m.complete).map((m) => m.text);
      return completed.some((text) => matcher.test(text))
        ? { passed: true }
        : {
            passed: false,
            detail: `no completed agent message matched ${matcher.describe}`,
            context: lines(observed, "agent"),
          };
    },
  },
  never_says: {
    items: (phrases) => phrases ?? [],
    key: (phrase) => phrase,
    describe: (phrase) => `never says ${textMatcher(phrase).describe}`,
    evaluate: (phrase, observed) => {
      const matcher = textMatcher(phrase);
      const offending = observed.agentMessages.find((m) => matcher.test(m.text));
      return offending
        ? {
            passed: false,
            detail: `the agent said: ${JSON.stringify(offending.text)}`,
            context: lines(observed, "agent"),
          }
        : { passed: true };
    },
  },
  tool_calls: {
    items: (calls) => (calls ?? []).map((call) => (typeof call === "string" ? { name: call } : call)),
    key: ({ name, arguments: args }) => (args ? `${name} ${JSON.stringify(args)}` : name),
    describe: ({ name, arguments: args }) => `calls tool ${name}${args ? ` with ${JSON.stringify(args)}` : ""}`,
    evaluate: ({ name, arguments: args }, observed) => toolCall(observed, name, args),
  },
  no_errors: {
    items: (on) => ((on ?? true) ? [true] : []),
    key: () => "no_errors",
    describe: () => "no server.error events",
    evaluate: (_, observed) =>
      observed.errors.length === 0
        ? { passed: true }
        : {
            passed: false,
            detail: `${observed.errors.length} error(s): ${observed.errors.map((e) => JSON.stringify(e)).join("; ")}`,
            context: lines(observed),
          },
  },
  ends: {
    items: (on) => ((on ?? true) ? [true] : []),
    key: () => "ends",
    describe: () => "the conversation ends",
    evaluate: (_, observed) =>
      observed.ended
        ? { passed: true }
        : { passed: false, detail: "no conversation.ended event within the timeout", context: lines(observed) },
  },
  max_duration_sec: {
    items: (bound) => (bound === undefined ? [] : [bound]),
    key: () => "max_duration_sec",
    describe: (bound) => `lasts at most ${bound} s`,
    evaluate: (bound, observed) =>
      observed.durationSec <= bound
        ? { passed: true }
        : { passed: false, detail: `it lasted ${observed.durationSec.toFixed(1)} s` },
  },
  procedures: {
    items: (statuses) => Object.entries(statuses ?? {}),
    key: ([key]) => key,
    describe: ([key, status]) => `procedure ${key} ends ${status}`,
    evaluate: ([key, status], observed) =>
      procedureCheck(
        key,
        status,
        observed.procedures.find((p) => p.key === key),
      ),
  },
};

/** Every assertion of the scenario, in the order they are written; an empty list means nothing was checked. */
export function evaluate(expect: Expectations, observed: Observation): Assertion[] {
  return (Object.keys(KINDS) as LiteralField[]).flatMap((field) => assertionsOf(field, expect, observed));
}

function assertionsOf<F extends LiteralField>(kind: F, expect: Expectations, observed: Observation): Assertion[] {
  const spec: Kind<F> = KINDS[kind];
  return spec.items(expect[kind]).map((item) => {
    const identity = { kind, key: spec.key(item), description: spec.describe(item) };
    try {
      return { ...identity, ...spec.evaluate(item, observed) };
    } catch (error) {
      if (!(error instanceof MatchTimeout)) throw error;
      return { ...identity, passed: false, detail: error.message };
    }
  });
}

function toolCall(observed: Observation, name: string, args: Record<string, unknown> | undefined): Check {
  const candidates = observed.toolCalls.filter((call) => call.name === name);
  if (candidates.some((call) => argumentsMatch(args, call.arguments))) return { passed: true };
  const detail =
    candidates.length > 0
      ? `${name} was called, but never with matching arguments (${candidates.map((c) => JSON.stringify(c.arguments)).join("; ")})`
      : `${name} was never called (called: ${observed.toolCalls.map((c) => c.name).join(", ") || "none"})`;
  return { passed: false, detail, context: lines(observed, "tool") };
}

function procedureCheck(key: string, status: string, procedure: ObservedProcedure | undefined): Check {
  const how = procedure ? matchedByText(procedure) : "";
  if (procedure?.status === status) return { passed: true, ...(how ? { detail: how } : {}) };
  if (procedure?.status === undefined) {
    return {
      passed: false,
      detail: `no procedure of ${key} (${procedure?.agentId || procedure?.name || "unknown agent"}) appeared for this conversation${how ? `; ${how}` : ""}`,
    };
  }
  const error = procedure.error ? ` (error: ${JSON.stringify(procedure.error)})` : "";
  const used = procedure.statuses?.length ? `; the statuses it went through: ${procedure.statuses.join(" → ")}` : "";
  const when = procedure.stalledMs
    ? `unchanged for ${Number((procedure.stalledMs / 1000).toFixed(1))} s, so taken as the service's last word${used}; expect one of the words this service uses`
    : procedure.timedOut
      ? `the last status seen before the scenario's timeout${used}`
      : "the last status seen";
  return {
    passed: false,
    detail: `procedure ${key} is ${procedure.status}${error} (${[when, how].filter(Boolean).join("; ")})`,
  };
}

function matchedByText(procedure: ObservedProcedure): string {
  if (procedure.matchedBy === "agent_id") return `matched by agent id ${procedure.agentId}`;
  if (procedure.matchedBy === "name") {
    return `matched by name ${JSON.stringify(procedure.name)}: the called version is not the stack's current one, so it may link an older ${procedure.key}`;
  }
  return "";
}

function argumentsMatch(expected: Record<string, unknown> | undefined, actual: unknown): boolean {
  if (!expected) return true;
  const record = actual && typeof actual === "object" ? (actual as Record<string, unknown>) : {};
  return Object.entries(expected).every(([key, value]) => argumentMatches(value, record[key]));
}

/** The last entries (of one kind, when given) as display lines. */
function lines(observed: Observation, kind?: ObservedEntry["kind"]): string[] {
  const display = displayLines(observed);
  return display.filter((_, i) => kind === undefined || observed.entries[i]?.kind === kind).slice(-CONTEXT_LINES);
}

/** A judged expectation's description: `judge: <rubric>`. */
const judgedDescription = (rubric: string) => `judge: ${rubric}`;

/**
 * The judged expectations of a scenario, in the order written, after the literal ones. `error` says
 * why the call cannot be judged (a judgement that is an error): the call is then an error, never a pass.
 */
export async function evaluateJudged(
  expect: Expectations,
  observed: Observation,
  judge: Judge | undefined,
  signal?: AbortSignal,
): Promise<{ assertions: Assertion[]; error?: string }> {
  const rubrics = judgeRubrics(expect);
  if (rubrics.length === 0) return { assertions: [] };
  if (!judge) return { assertions: [], error: "the scenario has judged expectations but no judge is configured" };
  const transcript = observed.entries.map(renderEntry);
  const assertions: Assertion[] = [];
  const errors: string[] = [];
  for (const rubric of rubrics) {
    const judgement = await judge.judge(rubric, transcript, signal);
    if (judgement.error !== null)
      errors.push(`judge could not decide ${JSON.stringify(rubric.rubric)}: ${judgement.error}`);
    assertions.push(judgedAssertion(judgement, displayLines(observed)));
  }
  return { assertions, ...(errors.length > 0 ? { error: errors.join("; ") } : {}) };
}

/** A judgement as an assertion; its cited lines (numbered in the judge's transcript) as the reports show them. */
export function judgedAssertion(judgement: Judgement, transcript: readonly string[]): Assertion {
  const identity = { kind: "judge", key: judgement.rubric, description: judgedDescription(judgement.rubric) } as const;
  if (judgement.verdict === "error") {
    return { ...identity, passed: false, detail: `not judged: ${judgement.error}`, judgement };
  }
  if (judgement.verdict === "inconclusive") {
    return {
      ...identity,
      passed: false,
      detail: `inconclusive ${judgement.agreement}${answeredBy(judgement)}: ${judgement.reason} by the cap`,
      judgement,
    };
  }
  const cited = judgement.lines.length > 0 ? ` (lines ${judgement.lines.join(", ")})` : "";
  const split =
    judgement.settled === false
      ? ", uncertain: not settled at 95 % by the cap"
      : judgement.uncertain
        ? ", uncertain: the votes split"
        : "";
  return {
    ...identity,
    passed: judgement.verdict === "pass",
    detail: `${judgement.verdict} ${judgement.agreement}${split}${answeredBy(judgement)}: ${judgement.reason}${cited}`,
    context: judgement.lines.map((n) => transcript[n - 1] ?? ""),
    judgement,
  };
}
