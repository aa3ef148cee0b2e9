// The simulated conversation's pure parts (the documented simulator convention, see README.md):
// the effective config, the greeting, the replies to user turns, message chunks, and procedure
// outputs shaped by an output schema.
import type { ConversationalAgentConfig } from "../contract/index.ts";

const DEFAULT_USER_TURNS = ["Hi, I'd like some help with my account.", "That's all, thank you."];
export const GOODBYE = "Thank you for calling. Goodbye!";

type Json = Record<string, unknown>;
const isObject = (value: unknown): value is Json =>
  typeof value === "object" && value !== null && !Array.isArray(value);

export function greeting(config: ConversationalAgentConfig): string {
  const name = config.personas?.[0]?.name || "the agent";
  return `Hello, this is ${name}. How can I help you today?`;
}

/** Whether the text names the tool (case-insensitive; `_` may be written as a space). */
function names(lower: string, tool: string): boolean {
  const name = tool.toLowerCase();
  return name !== "" && (lower.includes(name) || lower.includes(name.replaceAll("_", " ")));
}

/**
 * Whether the agent's prompt forbids the tool: a sentence of it says "never use", "do not use" or
 * "don't use" and names the tool. The only thing the simulated agent reads in its prompt.
 */
function forbidden(config: ConversationalAgentConfig, tool: string): boolean {
  const prompt = config.runtime?.prompt?.text ?? "";
  return prompt
    .toLowerCase()
    .split(/[.!?\n]+/)
    .some((sentence) => /\b(never|do not|don['’]t) use\b/.test(sentence) && names(sentence, tool));
}

/** The first of the agent's tools named in the text that its prompt does not forbid. */
export function toolNamed(config: ConversationalAgentConfig, text: string): string | undefined {
  const lower = text.toLowerCase();
  return (config.tool?.tools ?? []).find((tool) => names(lower, tool.name) && !forbidden(config, tool.name))?.name;
}

/** A caller's line that takes leave ("bye", "goodbye", "that's all"): the agent answers it, says goodbye and ends. */
export function isFarewell(text: string): boolean {
  return /\b(good)?bye\b|\bthat(['’]s| is) all\b/i.test(text);
}

/** Word chunks whose concatenation is the text. */
export function chunks(text: string): string[] {
  return text.match(/\S+\s*|\s+/g) ?? [text];
}

export type Simulation = {
  userTurns: string[];
  /** Whether `user_turns` was given (else the default turns, which a caller over the session replaces). */
  scripted: boolean;
  failed: boolean;
  waitForUser: boolean;
  proceduresFail: boolean;
  /** Reported as the conversation's `duration_sec` instead of the time it took. */
  durationSec?: number;
  /** Reported as the conversation's `sentiment` (the profile's shape) when it ends. */
  sentiment?: string;
  /** Milliseconds before each agent response (the greeting, each reply to a user turn). */
  responseDelayMs: number;
  /** With a session attached, how long the default turns wait for its caller's first line (a model may take seconds). */
  callerWaitMs?: number;
  /** Share of this scenario's conversations that fail, chosen by a counter (see README.md). */
  failureRate: number;
  /** Pinned version id → its own failure rate (old and new versions of one scenario fail apart). */
  failureRateByVersion: Record<string, number>;
};

const MAX_RESPONSE_DELAY_MS = 60_000;
/** The longest a session's caller may take for its first line: the conversation's own idle limit. */
const MAX_CALLER_WAIT_MS = 60_000;

function boundedNumber(value: unknown, min: number, max: number): number {
  return typeof value === "number" && Number.isFinite(value) ? Math.min(max, Math.max(min, value)) : min;
}

/** `context.simulation` read leniently: anything not understood falls back to the default. */
export function simulation(context: Record<string, unknown>): Simulation {
  const raw = isObject(context.simulation) ? context.simulation : {};
  const turns = Array.isArray(raw.user_turns) ? raw.user_turns.filter((t): t is string => typeof t === "string") : [];
  return {
    userTurns: Array.isArray(raw.user_turns) ? turns : DEFAULT_USER_TURNS,
    scripted: Array.isArray(raw.user_turns),
    failed: raw.outcome === "failed",
    waitForUser: raw.wait_for_user === true,
    proceduresFail: raw.procedure_outcome === "failed",
    ...(typeof raw.duration_sec === "number" && raw.duration_sec >= 0 ? { durationSec: raw.duration_sec } : {}),
    ...(typeof raw.sentiment === "string" && raw.sentiment ? { sentiment: raw.sentiment } : {}),
    responseDelayMs: boundedNumber(raw.response_delay_ms, 0, MAX_RESPONSE_DELAY_MS),
    ...(typeof raw.caller_wait_ms === "number"
      ? { callerWaitMs: boundedNumber(raw.caller_wait_ms, 0, MAX_CALLER_WAIT_MS) }
      : {}),
    failureRate: boundedNumber(raw.failure_rate, 0, 1),
    failureRateByVersion: isObject(raw.failure_rate_by_version)
      ? Object.fromEntries(Object.entries(raw.failure_rate_by_version).map(([v, r]) => [v, boundedNumber(r, 0, 1)]))
      : {},
  };
}

/**
 * Whether the n-th conversation (from 1) of a series fails at `rate`: exactly when
 * floor(n·rate) > floor((n−1)·rate), the faults' counter rule (0.2: the 5th, 10th, … of every series).
 */
export function failsAt(n: number, rate: number): boolean {
  return rate > 0 && Math.floor(n * rate + 1e-9) > Math.floor((n - 1) * rate + 1e-9);
}

/** A value fitting a simple JSON Schema (type/properties/items/enum/const); undefined if not simple. */
function shapedValue(schema: unknown, name: string, summary: string): unknown {
  if (!isObject(schema)) return undefined;
  if ("const" in schema) return schema.const;
  if (Array.isArray(schema.enum) && schema.enum.length > 0) return schema.enum[0];
  const type = Array.isArray(schema.type) ? schema.type.find((t) => t !== "null") : schema.type;
  switch (type) {
    case "object": {
      const properties = isObject(schema.properties) ? schema.properties : {};
      const out: Json = {};
      for (const [key, sub] of Object.entries(properties)) {
        const value = shapedValue(sub, key, summary);
        if (value !== undefined) out[key] = value;
      }
      return out;
    }
    case "array": {
      const item = shapedValue(schema.items, name, summary);
      return item === undefined ? [] : [item];
    }
    case "string":
      return /summary|description|text|notes?$/i.test(name) ? summary : `simulated ${name}`;
    case "boolean":
      return false;
    case "integer":
    case "number":
      return typeof schema.minimum === "number" ? schema.minimum : 0;
    case "null":
      return null;
    default:
      return undefined;
  }
}

/** A procedure's output: shaped by `output_schema` when it is a simple object schema, else `{summary}`. */
export function procedureOutput(outputSchema: unknown, summary: string): unknown {
  if (isObject(outputSchema) && outputSchema.type === "object") {
    const value = shapedValue(outputSchema, "output", summary);
    if (value !== undefined) return value;
  }
  return { summary };
}
