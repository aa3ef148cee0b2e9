// Phrase and argument matchers of smoke expectations: "/regex/flags" is a regular expression,
// anything else a case-insensitive substring.
import { isDeepStrictEqual } from "node:util";

const REGEX_FORM = /^\/(.+)\/([dgimsuvy]*)$/s;

export type TextMatcher = { describe: string; test(text: string): boolean };

export function textMatcher(pattern: string): TextMatcher {
  const regex = REGEX_FORM.exec(pattern);
  if (regex) {
    const [, source = "", flags = ""] = regex;
    // Stateful flags would make test() depend on earlier calls.
    const re = new RegExp(source, flags.replace(/[gy]/g, ""));
    return { describe: pattern, test: (text) => re.test(text) };
  }
  const needle = pattern.toLowerCase();
  return { describe: JSON.stringify(pattern), test: (text) => text.toLowerCase().includes(needle) };
}

/** An argument matcher: a "/regex/" string tests the argument's text, anything else must be equal. */
export function argumentMatches(expected: unknown, actual: unknown): boolean {
  if (typeof expected === "string" && REGEX_FORM.test(expected)) {
    const text = typeof actual === "string" ? actual : JSON.stringify(actual);
    return text !== undefined && textMatcher(expected).test(text);
  }
  return isDeepStrictEqual(expected, actual);
}
