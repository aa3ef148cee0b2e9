// Phrase and argument matchers of smoke expectations: "/regex/flags" is a regular expression (the
// form the agent files use, parsed by src/definitions), anything else a case-insensitive substring.
// A regular expression runs with a time bound: the loader refuses nested quantifiers, but other
// slow patterns exist, and an agent's reply must not hang a smoke run.
import { isDeepStrictEqual } from "node:util";
import vm from "node:vm";
import { regexParts } from "../definitions/index.ts";

/** The longest one regular expression may take on one text. */
const MATCH_TIMEOUT_MS = 1000;

/** A regular expression did not finish within its time bound. */
export class MatchTimeout extends Error {
  override name = "MatchTimeout";
}

export type TextMatcher = { describe: string; test(text: string): boolean };

const testScript = new vm.Script("re.test(text)");

export function textMatcher(pattern: string, timeoutMs = MATCH_TIMEOUT_MS): TextMatcher {
  const parts = regexParts(pattern);
  if (parts) {
    // Stateful flags would make test() depend on earlier calls.
    const re = new RegExp(parts.source, parts.flags.replace(/[gy]/g, ""));
    const context = vm.createContext({ re, text: "" });
    return {
      describe: pattern,
      test: (text) => {
        context.text = text;
        try {
          return testScript.runInContext(context, { timeout: timeoutMs }) === true;
        } catch (error) {
          if ((error as { code?: string }).code !== "ERR_SCRIPT_EXECUTION_TIMEOUT") throw error;
          throw new MatchTimeout(
            `${pattern} did not finish within ${timeoutMs} ms on a ${text.length}-character text (catastrophic backtracking): simplify the expression`,
          );
        }
      },
    };
  }
  const needle = pattern.toLowerCase();
  return { describe: JSON.stringify(pattern), test: (text) => text.toLowerCase().includes(needle) };
}

/** An argument matcher: a "/regex/" string tests the argument's text, anything else must be equal. */
export function argumentMatches(expected: unknown, actual: unknown): boolean {
  if (typeof expected === "string" && regexParts(expected)) {
    const text = typeof actual === "string" ? actual : JSON.stringify(actual);
    return text !== undefined && textMatcher(expected).test(text);
  }
  return isDeepStrictEqual(expected, actual);
}

/**
 * Tool-call arguments as the matchers see them: the interface leaves `arguments` untyped, and
 * services built on LLM function calling often send a JSON-encoded string. A string that holds a
 * JSON object or array is decoded; anything else is kept as it is.
 */
export function decodeArguments(raw: unknown): unknown {
  if (typeof raw !== "string") return raw;
  const text = raw.trim();
  if (!(text.startsWith("{") || text.startsWith("["))) return raw;
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return raw;
  }
}
