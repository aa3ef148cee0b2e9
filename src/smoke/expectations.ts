// Evaluates a scenario's `expect` block against what one call showed. Pure: no I/O.
import type { TranscriptToolCall } from "../api/index.ts";
import { argumentMatches, textMatcher } from "./matchers.ts";

export type ToolCallExpectation = string | { name: string; arguments?: Record<string, unknown> };

export type Expectations = {
  says?: string[];
  never_says?: string[];
  tool_calls?: ToolCallExpectation[];
  no_errors?: boolean;
  ends?: boolean;
  max_duration_sec?: number;
  procedures?: Record<string, string>;
};

export type ObservedToolCall = TranscriptToolCall;
export type ObservedProcedure = { key: string; agentId: string; status?: string; output?: unknown; error?: unknown };

export type Observation = {
  agentMessages: { text: string; complete: boolean }[];
  toolCalls: ObservedToolCall[];
  /** The `error` of every server.error event. */
  errors: unknown[];
  ended: boolean;
  durationSec: number;
  procedures: ObservedProcedure[];
  /** The transcript as printable lines ("agent: …", "user: …", "tool …"). */
  transcript: string[];
};

export type Assertion = { description: string; passed: boolean; detail?: string; context?: string[] };

const CONTEXT_LINES = 6;

/** Every assertion of the scenario, in the order they are written; an empty list means nothing was checked. */
export function evaluate(expect: Expectations, observed: Observation): Assertion[] {
  const assertions: Assertion[] = [];
  const tail = observed.transcript.slice(-CONTEXT_LINES);
  const completed = observed.agentMessages.filter((m) => m.complete).map((m) => m.text);

  for (const phrase of expect.says ?? []) {
    const matcher = textMatcher(phrase);
    const passed = completed.some((text) => matcher.test(text));
    assertions.push({
      description: `says ${matcher.describe}`,
      passed,
      detail: passed ? undefined : `no completed agent message matched ${matcher.describe}`,
      context: passed ? undefined : agentLines(observed),
    });
  }

  for (const phrase of expect.never_says ?? []) {
    const matcher = textMatcher(phrase);
    const offending = observed.agentMessages.find((m) => matcher.test(m.text));
    assertions.push({
      description: `never says ${matcher.describe}`,
      passed: !offending,
      detail: offending ? `the agent said: ${JSON.stringify(offending.text)}` : undefined,
      context: offending ? agentLines(observed) : undefined,
    });
  }

  for (const expected of expect.tool_calls ?? []) {
    const { name, arguments: args } =
      typeof expected === "string" ? { name: expected, arguments: undefined } : expected;
    const candidates = observed.toolCalls.filter((call) => call.name === name);
    const passed = candidates.some((call) => argumentsMatch(args, call.arguments));
    const argsText = args ? ` with ${JSON.stringify(args)}` : "";
    assertions.push({
      description: `calls tool ${name}${argsText}`,
      passed,
      detail: passed
        ? undefined
        : candidates.length > 0
          ? `${name} was called, but never with matching arguments (${candidates.map((c) => JSON.stringify(c.arguments)).join("; ")})`
          : `${name} was never called (called: ${observed.toolCalls.map((c) => c.name).join(", ") || "none"})`,
      context: passed ? undefined : observed.transcript.filter((line) => line.startsWith("tool")).slice(-CONTEXT_LINES),
    });
  }

  if (expect.no_errors ?? true) {
    const passed = observed.errors.length === 0;
    assertions.push({
      description: "no server.error events",
      passed,
      detail: passed
        ? undefined
        : `${observed.errors.length} error(s): ${observed.errors.map((e) => JSON.stringify(e)).join("; ")}`,
      context: passed ? undefined : tail,
    });
  }

  if (expect.ends ?? true) {
    assertions.push({
      description: "the conversation ends",
      passed: observed.ended,
      detail: observed.ended ? undefined : "no conversation.ended event within the timeout",
      context: observed.ended ? undefined : tail,
    });
  }

  if (expect.max_duration_sec !== undefined) {
    const passed = observed.durationSec <= expect.max_duration_sec;
    assertions.push({
      description: `lasts at most ${expect.max_duration_sec} s`,
      passed,
      detail: passed ? undefined : `it lasted ${observed.durationSec.toFixed(1)} s`,
    });
  }

  for (const [key, status] of Object.entries(expect.procedures ?? {})) {
    const procedure = observed.procedures.find((p) => p.key === key);
    const passed = procedure?.status === status;
    assertions.push({
      description: `procedure ${key} ends ${status}`,
      passed,
      detail: passed
        ? undefined
        : procedure?.status
          ? `procedure ${key} is ${procedure.status}${procedure.error ? ` (error: ${JSON.stringify(procedure.error)})` : ""}`
          : `no procedure of ${key} (${procedure?.agentId ?? "unknown agent"}) appeared for this conversation`,
    });
  }

  return assertions;
}

function argumentsMatch(expected: Record<string, unknown> | undefined, actual: unknown): boolean {
  if (!expected) return true;
  const record = actual && typeof actual === "object" ? (actual as Record<string, unknown>) : {};
  return Object.entries(expected).every(([key, value]) => argumentMatches(value, record[key]));
}

function agentLines(observed: Observation): string[] {
  return observed.transcript.filter((line) => line.startsWith("agent")).slice(-CONTEXT_LINES);
}
