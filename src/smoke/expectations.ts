// Evaluates a scenario's `expect` block against what one call showed. The literal expectations are
// pure (no I/O); the judged ones (`expect.judge`) ask the configured judge, after them.
import { type Expectations, judgeRubrics } from "../definitions/index.ts";
import type { Judge, Judgement } from "../judge/index.ts";
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
  /** The scenario's caller said the user lines (they are shown as `caller: … (at N s)`). */
  byCaller?: boolean;
};

export type Assertion = {
  description: string;
  passed: boolean;
  detail?: string;
  context?: string[];
  /** A judged expectation's verdict, votes, reason and cited lines. */
  judgement?: Judgement;
};

const CONTEXT_LINES = 6;

/** Every assertion of the scenario, in the order they are written; an empty list means nothing was checked. */
export function evaluate(expect: Expectations, observed: Observation): Assertion[] {
  const assertions: Assertion[] = [];
  const check = (description: string, run: () => Omit<Assertion, "description">) => {
    try {
      assertions.push({ description, ...run() });
    } catch (error) {
      if (!(error instanceof MatchTimeout)) throw error;
      assertions.push({ description, passed: false, detail: error.message });
    }
  };
  const completed = observed.agentMessages.filter((m) => m.complete).map((m) => m.text);

  for (const phrase of expect.says ?? []) {
    const matcher = textMatcher(phrase);
    check(`says ${matcher.describe}`, () => {
      const passed = completed.some((text) => matcher.test(text));
      return passed
        ? { passed }
        : {
            passed,
            detail: `no completed agent message matched ${matcher.describe}`,
            context: lines(observed, "agent"),
          };
    });
  }

  for (const phrase of expect.never_says ?? []) {
    const matcher = textMatcher(phrase);
    check(`never says ${matcher.describe}`, () => {
      const offending = observed.agentMessages.find((m) => matcher.test(m.text));
      return offending
        ? {
            passed: false,
            detail: `the agent said: ${JSON.stringify(offending.text)}`,
            context: lines(observed, "agent"),
          }
        : { passed: true };
    });
  }

  for (const expected of expect.tool_calls ?? []) {
    const { name, arguments: args } =
      typeof expected === "string" ? { name: expected, arguments: undefined } : expected;
    check(`calls tool ${name}${args ? ` with ${JSON.stringify(args)}` : ""}`, () => toolCall(observed, name, args));
  }

  const tail = lines(observed);
  if (expect.no_errors ?? true) {
    const passed = observed.errors.length === 0;
    assertions.push({
      description: "no server.error events",
      passed,
      ...(passed
        ? {}
        : {
            detail: `${observed.errors.length} error(s): ${observed.errors.map((e) => JSON.stringify(e)).join("; ")}`,
            context: tail,
          }),
    });
  }

  if (expect.ends ?? true) {
    assertions.push({
      description: "the conversation ends",
      passed: observed.ended,
      ...(observed.ended ? {} : { detail: "no conversation.ended event within the timeout", context: tail }),
    });
  }

  if (expect.max_duration_sec !== undefined) {
    const passed = observed.durationSec <= expect.max_duration_sec;
    assertions.push({
      description: `lasts at most ${expect.max_duration_sec} s`,
      passed,
      ...(passed ? {} : { detail: `it lasted ${observed.durationSec.toFixed(1)} s` }),
    });
  }

  for (const [key, status] of Object.entries(expect.procedures ?? {})) {
    assertions.push(
      procedureAssertion(
        key,
        status,
        observed.procedures.find((p) => p.key === key),
      ),
    );
  }
  return assertions;
}

function toolCall(
  observed: Observation,
  name: string,
  args: Record<string, unknown> | undefined,
): Omit<Assertion, "description"> {
  const candidates = observed.toolCalls.filter((call) => call.name === name);
  if (candidates.some((call) => argumentsMatch(args, call.arguments))) return { passed: true };
  const detail =
    candidates.length > 0
      ? `${name} was called, but never with matching arguments (${candidates.map((c) => JSON.stringify(c.arguments)).join("; ")})`
      : `${name} was never called (called: ${observed.toolCalls.map((c) => c.name).join(", ") || "none"})`;
  return { passed: false, detail, context: lines(observed, "tool") };
}

function procedureAssertion(key: string, status: string, procedure: ObservedProcedure | undefined): Assertion {
  const description = `procedure ${key} ends ${status}`;
  const how = procedure ? matchedByText(procedure) : "";
  if (procedure?.status === status) return { description, passed: true, ...(how ? { detail: how } : {}) };
  if (procedure?.status === undefined) {
    return {
      description,
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
    description,
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
function judgedAssertion(judgement: Judgement, transcript: readonly string[]): Assertion {
  const description = judgedDescription(judgement.rubric);
  if (judgement.verdict === "error") {
    return { description, passed: false, detail: `not judged: ${judgement.error}`, judgement };
  }
  const cited = judgement.lines.length > 0 ? ` (lines ${judgement.lines.join(", ")})` : "";
  const split = judgement.uncertain ? ", uncertain: the votes split" : "";
  return {
    description,
    passed: judgement.verdict === "pass",
    detail: `${judgement.verdict} ${judgement.agreement}${split}: ${judgement.reason}${cited}`,
    context: judgement.lines.map((n) => transcript[n - 1] ?? ""),
    judgement,
  };
}
