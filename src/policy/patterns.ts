// What `agent-prompt-forbidden-patterns` looks for: phone numbers, e-mail addresses and card-like
// numbers by default, plus the org's own named regular expressions. Matches are shown masked (the
// first and last two characters): enough to find them, never a whole card number in a log.
// The org's expressions are bounded like smoke's `says` patterns: refused when the config is read
// (offline and in the pack) when they repeat a group that itself repeats, at most MAX_PATTERNS of
// at most MAX_REGEX_CHARS each, and run with a per-text time bound; one that does not finish is a
// finding naming it, never a hang and never a pass.
import vm from "node:vm";
import { z } from "zod";
import { nestedQuantifier } from "../definitions/patterns.ts";

/** The most named patterns, and the longest one, a policy config may hold. */
const MAX_PATTERNS = 100;
const MAX_REGEX_CHARS = 1000;
/** The longest one expression may take on one prompt. */
const MATCH_TIMEOUT_MS = 1000;

/** Why a named pattern cannot be used (smoke's wording), or undefined. */
function regexProblem(source: string, flags: string): string | undefined {
  try {
    new RegExp(source, flags);
  } catch (error) {
    return (error as Error).message.replace(
      /^Invalid regular expression: \/.*\/[a-z]*: /s,
      "is not a valid regular expression: ",
    );
  }
  const nested = nestedQuantifier(source);
  if (nested !== undefined) {
    const shown = nested.length > 40 ? `${nested.slice(0, 39)}…` : nested;
    return `the regular expression repeats a group that itself repeats (${JSON.stringify(shown)}), which can take exponential time on a non-matching text: rewrite it without the nested repetition`;
  }
  return undefined;
}

export const forbiddenSettings = z.object({
  patterns: z
    .array(
      z
        .strictObject({
          name: z.string().min(1).max(100),
          regex: z.string().min(1).max(MAX_REGEX_CHARS),
          flags: z
            .string()
            .regex(/^[imsu]*$/, "only the flags i, m, s and u")
            .optional(),
        })
        .superRefine((pattern, ctx) => {
          const problem = regexProblem(pattern.regex, pattern.flags ?? "");
          if (problem) ctx.addIssue({ code: "custom", path: ["regex"], message: problem });
        }),
    )
    .max(MAX_PATTERNS)
    .default([]),
  replaceDefaults: z.boolean().default(false),
});
export type ForbiddenSettings = z.infer<typeof forbiddenSettings>;

export type ForbiddenMatch = {
  what: string;
  masked: string;
  offset: number;
  /** The whole problem, when it is not "the prompt contains <what>" (a pattern that did not finish). */
  problem?: string;
};

/** What a default detector finds: the kinds of personal data (`scenario derive` replaces them too). */
export type PersonalKind = "card" | "phone" | "email";

type Detector = { what: string; kind?: PersonalKind; find(text: string): { offset: number; text: string }[] };

/** An expression did not finish within MATCH_TIMEOUT_MS. */
class MatchTimeout extends Error {}

const matchScript = new vm.Script("Array.from(text.matchAll(re), (m) => [m.index, m[0]])");

/** Every match of an org's expression, run with a time bound (MatchTimeout past it). */
function boundedMatches(regex: RegExp, text: string): { offset: number; text: string }[] {
  const re = new RegExp(regex.source, regex.flags.includes("g") ? regex.flags : `${regex.flags}g`);
  try {
    const found = matchScript.runInContext(vm.createContext({ re, text }), { timeout: MATCH_TIMEOUT_MS }) as [
      number,
      string,
    ][];
    return found.filter(([, match]) => match !== "").map(([offset, match]) => ({ offset, text: match }));
  } catch (error) {
    if ((error as { code?: string }).code !== "ERR_SCRIPT_EXECUTION_TIMEOUT") throw error;
    throw new MatchTimeout();
  }
}

function matchesOf(regex: RegExp, text: string, accept: (match: string) => boolean = () => true) {
  const global = new RegExp(regex.source, regex.flags.includes("g") ? regex.flags : `${regex.flags}g`);
  return [...text.matchAll(global)]
    .filter((m) => m[0] !== "" && accept(m[0]))
    .map((m) => ({ offset: m.index ?? 0, text: m[0] }));
}

const digits = (text: string) => text.replace(/\D/g, "");

/** Luhn's checksum: what makes a run of 13–19 digits card-like rather than any number. */
function luhn(number: string): boolean {
  let sum = 0;
  for (let i = 0; i < number.length; i++) {
    let digit = Number(number[number.length - 1 - i]);
    if (i % 2 === 1) {
      digit *= 2;
      if (digit > 9) digit -= 9;
    }
    sum += digit;
  }
  return sum % 10 === 0;
}

const DEFAULTS: Detector[] = [
  {
    what: "a card-like number",
    kind: "card",
    find: (text) =>
      matchesOf(/(?<![\d])\d(?:[ -]?\d){12,18}(?![\d])/, text, (m) => {
        const n = digits(m);
        return n.length >= 13 && n.length <= 19 && luhn(n);
      }),
  },
  {
    what: "a phone number",
    kind: "phone",
    find: (text) => [
      // International: a "+" and 8 to 15 digits, spaces, dots, dashes or brackets between them.
      ...matchesOf(/(?<![\w+])\+\d[\d ().-]{6,}\d(?![\w])/, text, (m) => {
        const n = digits(m).length;
        return n >= 8 && n <= 15;
      }),
      // North American without the "+": 415-555-0100, (415) 555 0100, 415.555.0100.
      ...matchesOf(/(?<![\w+(])(?:\(\d{3}\)|\d{3})[ .-]\d{3}[ .-]\d{4}(?![\w])/, text),
    ],
  },
  {
    what: "an e-mail address",
    kind: "email",
    find: (text) => matchesOf(/[A-Za-z0-9._%+-]+@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,}/, text),
  },
];

export function mask(text: string): string {
  const chars = [...text];
  if (chars.length <= 6) return `"${"•".repeat(chars.length)}"`;
  return `"${chars.slice(0, 2).join("")}${"•".repeat(chars.length - 4)}${chars.slice(-2).join("")}"`;
}

/** Each detector's matches in turn; a span matched once is not matched again. */
function spans(detectors: readonly Detector[], text: string) {
  const taken: [number, number][] = [];
  const found: { detector: Detector; offset: number; text: string }[] = [];
  for (const detector of detectors) {
    for (const match of detector.find(text)) {
      const end = match.offset + match.text.length;
      if (taken.some(([from, to]) => match.offset < to && end > from)) continue;
      taken.push([match.offset, end]);
      found.push({ detector, ...match });
    }
  }
  return found;
}

/** The personal data the default detectors find in `text` (phone numbers, e-mail addresses, card-like numbers), unmasked. */
export function personalData(text: string): { kind: PersonalKind; offset: number; text: string }[] {
  return spans(DEFAULTS, text).map(({ detector, offset, text: match }) => ({
    kind: detector.kind as PersonalKind,
    offset,
    text: match,
  }));
}

/** Every forbidden match in `text`, first ones first; a span matched once is not reported again. */
export function forbiddenMatches(text: string, settings: ForbiddenSettings): ForbiddenMatch[] {
  const custom: Detector[] = settings.patterns.map((pattern) => ({
    what: `text matching the forbidden pattern "${pattern.name}"`,
    find: (input) => {
      try {
        return boundedMatches(new RegExp(pattern.regex, pattern.flags ?? ""), input);
      } catch (error) {
        if (!(error instanceof MatchTimeout)) throw error;
        slow.push(
          `the forbidden pattern "${pattern.name}" did not finish within ${MATCH_TIMEOUT_MS} ms on a ${input.length}-character text (catastrophic backtracking): simplify the expression`,
        );
        return [];
      }
    },
  }));
  const slow: string[] = [];
  const detectors = settings.replaceDefaults ? custom : [...DEFAULTS, ...custom];
  const found: ForbiddenMatch[] = spans(detectors, text).map(({ detector, offset, text: match }) => ({
    what: detector.what,
    masked: mask(match),
    offset,
  }));
  // A pattern that could not be checked is a finding of its own: the prompt was not shown clean.
  for (const problem of slow) found.push({ what: problem, masked: "(not checked)", offset: 0, problem });
  return found.sort((a, b) => a.offset - b.offset);
}
