// What `agent-prompt-forbidden-patterns` looks for: phone numbers, e-mail addresses and card-like
// numbers by default, plus the org's own named regular expressions. Matches are shown masked (the
// first and last two characters): enough to find them, never a whole card number in a log.
import { z } from "zod";

function compiles(source: string): boolean {
  try {
    new RegExp(source);
    return true;
  } catch {
    return false;
  }
}

export const forbiddenSettings = z.object({
  patterns: z
    .array(
      z.strictObject({
        name: z.string().min(1),
        regex: z
          .string()
          .min(1)
          .refine((source) => compiles(source), "is not a valid regular expression"),
        flags: z
          .string()
          .regex(/^[imsu]*$/, "only the flags i, m, s and u")
          .optional(),
      }),
    )
    .default([]),
  replaceDefaults: z.boolean().default(false),
});
export type ForbiddenSettings = z.infer<typeof forbiddenSettings>;

export type ForbiddenMatch = { what: string; masked: string; offset: number };

type Detector = { what: string; find(text: string): { offset: number; text: string }[] };

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
    find: (text) =>
      matchesOf(/(?<![\d])\d(?:[ -]?\d){12,18}(?![\d])/, text, (m) => {
        const n = digits(m);
        return n.length >= 13 && n.length <= 19 && luhn(n);
      }),
  },
  {
    what: "a phone number",
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
    find: (text) => matchesOf(/[A-Za-z0-9._%+-]+@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,}/, text),
  },
];

export function mask(text: string): string {
  const chars = [...text];
  if (chars.length <= 6) return `"${"•".repeat(chars.length)}"`;
  return `"${chars.slice(0, 2).join("")}${"•".repeat(chars.length - 4)}${chars.slice(-2).join("")}"`;
}

/** Every forbidden match in `text`, first ones first; a span matched once is not reported again. */
export function forbiddenMatches(text: string, settings: ForbiddenSettings): ForbiddenMatch[] {
  const custom: Detector[] = settings.patterns.map((pattern) => ({
    what: `text matching the forbidden pattern "${pattern.name}"`,
    find: (input) => matchesOf(new RegExp(pattern.regex, pattern.flags ?? ""), input),
  }));
  const detectors = settings.replaceDefaults ? custom : [...DEFAULTS, ...custom];
  const taken: [number, number][] = [];
  const found: ForbiddenMatch[] = [];
  for (const detector of detectors) {
    for (const match of detector.find(text)) {
      const end = match.offset + match.text.length;
      if (taken.some(([from, to]) => match.offset < to && end > from)) continue;
      taken.push([match.offset, end]);
      found.push({ what: detector.what, masked: mask(match.text), offset: match.offset });
    }
  }
  return found.sort((a, b) => a.offset - b.offset);
}
