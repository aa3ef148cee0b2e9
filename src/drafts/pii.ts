// Personal data out of what a model is sent and what is printed: phone numbers, e-mail addresses,
// card numbers and account numbers, and the channel's numbers become labelled placeholders
// (`<phone 1>`, `<email 1>`, `<card 1>`, `<account 1>`, `<callee_no>`, `<caller_no>`), the same value
// always the same label, so the model still reads who gave which number. Numbers the agent file
// itself holds (its scenarios' channels, its transfers) are the team's, not a caller's, and stay.
//
// People write a number in many ways, so the text is normalised before anything is matched: NFKC
// (full-width digits and `＠`, non-breaking spaces), invisible format characters dropped. A number is
// then a run of digits with any of the separators people put between them (spaces, dots, dashes,
// slashes, `" - "`, brackets): the run is classified as a whole, so no group of it is left behind.
// E-mail addresses may hold any letter (`jürgen@exämple.de`), IBANs any case. These find all the
// org rules' detectors (src/policy) find, in more formats, in time linear in the text (the card
// check is the org rule's, on a run's digits): a text is scrubbed whole before it is cut.
import { type PersonalKind, personalData } from "../policy/index.ts";

type PiiKind = PersonalKind | "account";
type Found = { kind: PiiKind; offset: number; text: string };

/** Between two digits of one number: up to three spaces, dots, slashes, dashes or underscores (`4111 - 1111`, `030/1234`), or a bracket (`(415) 555`, `+49 (0)30`). */
const GAP = String.raw`(?:[\s./_\-\u2010-\u2015\u2212]{0,3}|\s?[()]\s?)`;
/** A number as written: an optional `+`, or `(` that an area code closes, then digits with gaps; it never starts inside another. */
const NUMBER = new RegExp(String.raw`(?<!\d)(?:\+\s?|\(\s?(?=\d{1,5}\s?\)))?\d(?:${GAP}\d)*`, "g");
/** A date at the start of a number (`2024-05-01`, `12.05.2024`, `5/1/24`), checked below: a date is no one's number. */
const DATE = /^(?:(\d{4})-(\d{1,2})-(\d{1,2})|(\d{1,2})([./-])(\d{1,2})\5(\d{4}|\d{2}))(?=\s|$)/;
/**
 * An e-mail address in any script: a local part (at most 64 characters, as RFC 5321 allows), `@`,
 * labels of at most 63 and a top-level domain (`.` or the ideographic `。`). Bounded, so a long run
 * of letters with no `@` costs a bounded look at each character, never a scan to its end.
 */
const EMAIL =
  /[\p{L}\p{M}\p{N}._%+-]{1,64}@[\p{L}\p{M}\p{N}-]{1,63}(?:[.\u3002][\p{L}\p{M}\p{N}-]{1,63}){0,10}[.\u3002](?:\p{L}[\p{L}\p{M}]{1,62}|xn--[a-z0-9-]{1,59})/giu;
/** What may be an IBAN: a country, two check digits, 10 to 30 letters or digits, grouped as people write them. */
const IBAN_CANDIDATE = /(?<![A-Za-z0-9])[A-Za-z]{2}\d{2}(?:[\s.-]?[A-Za-z0-9]){10,30}/g;
const IBAN_SEPARATOR = /[\s.-]/;
/** Letters or an underscore right against a number: it is part of a word or an id (`ca_12345`), not a number of its own. */
const WORD_CHAR = /[\p{L}_]/u;
/** A run glued to a word is taken for personal data only from this many digits. */
const GLUED_MIN_DIGITS = 8;

const digitsOf = (text: string) => text.replace(/\D/g, "");

/** The text as it is matched, sent and printed: compatibility forms folded, invisible format characters dropped. */
function normalise(text: string): string {
  return text.normalize("NFKC").replace(/\p{Cf}/gu, "");
}

/** Each country's IBAN length (the SWIFT IBAN registry): a known country's IBAN is that long, no more. */
const IBAN_LENGTHS: Record<string, number> = Object.fromEntries(
  (
    "AD24 AE23 AL28 AT20 AZ28 BA20 BE16 BG22 BH22 BR29 BY28 CH21 CR22 CY28 CZ24 DE22 DK18 DO28 EE20 EG29 ES24 " +
    "FI18 FO18 FR27 GB22 GE22 GI23 GL18 GR27 GT28 HR21 HU28 IE22 IL23 IQ23 IS26 IT27 JO30 KW30 KZ20 LB28 LC32 " +
    "LI21 LT20 LU20 LV21 MC27 MD24 ME22 MK19 MR27 MT31 MU30 NL18 NO15 PK24 PL28 PS29 PT25 QA29 RO24 RS22 SA24 " +
    "SC31 SE24 SI19 SK24 SM27 ST25 SV28 TL23 TN24 TR26 UA29 VA22 VG24 XK20"
  )
    .split(" ")
    .map((entry) => [entry.slice(0, 2), Number(entry.slice(2))]),
);

/** Whether the digits at a number's start are a calendar date (a year 1900–2099, a month, a day; day and month either way round). */
function isDate(match: RegExpExecArray): boolean {
  const [, year, month, day, first, , second, last] = match;
  const n = (text: string | undefined) => Number(text);
  if (year !== undefined)
    return n(year) >= 1900 && n(year) <= 2099 && n(month) >= 1 && n(month) <= 12 && n(day) >= 1 && n(day) <= 31;
  const [a, b] = [n(first), n(second)];
  const yearOk = last?.length === 2 || (n(last) >= 1900 && n(last) <= 2099);
  return yearOk && a >= 1 && b >= 1 && Math.min(a, b) <= 12 && Math.max(a, b) <= 31;
}

/** ISO 13616's check: the IBAN moved by four, read as a number, is 1 modulo 97 (and a known country's is its length). */
function ibanValid(compact: string): boolean {
  const length = IBAN_LENGTHS[compact.slice(0, 2)];
  if (length === undefined ? compact.length < 15 || compact.length > 34 : compact.length !== length) return false;
  let rest = 0;
  for (const char of compact.slice(4) + compact.slice(0, 4)) {
    const value = Number.parseInt(char, 36);
    rest = (value > 9 ? rest * 100 + value : rest * 10 + value) % 97;
  }
  return rest === 1;
}

/** Every IBAN: the longest part of each candidate that ends where a group ends and passes the check. */
function ibans(text: string): Found[] {
  const found: Found[] = [];
  const re = new RegExp(IBAN_CANDIDATE.source, "g");
  for (let m = re.exec(text); m !== null; m = re.exec(text)) {
    const candidate = m[0];
    let match: string | undefined;
    for (let end = candidate.length; end >= 14 && match === undefined; end--) {
      const after = end === candidate.length ? (text[m.index + end] ?? " ") : (candidate[end] as string);
      if (/[A-Za-z0-9]/.test(after) || IBAN_SEPARATOR.test(candidate[end - 1] as string)) continue;
      const part = candidate.slice(0, end);
      if (ibanValid(part.replace(/[\s.-]/g, "").toUpperCase())) match = part;
    }
    if (match === undefined) re.lastIndex = m.index + 1;
    else found.push({ kind: "account", offset: m.index, text: match });
  }
  return found;
}

/** What a run of digits is: a card (the org rule's Luhn check), a phone, an account, or nothing to replace. */
function numberKind(run: string, glued: boolean): PiiKind | undefined {
  const digits = digitsOf(run);
  if (digits.length < 6 || (glued && digits.length < GLUED_MIN_DIGITS)) return undefined;
  if (run.startsWith("+")) return digits.length <= 15 ? "phone" : "account";
  const cardLength = digits.length >= 13 && digits.length <= 19;
  if (cardLength && personalData(digits).some((f) => f.kind === "card" && f.text === digits)) return "card";
  const groups = (run.match(/\d+/g) ?? []).map((g) => g.length).join(" ");
  const national = /^0/.test(digits) && groups.includes(" ") && digits.length >= 8 && digits.length <= 15;
  return groups === "3 3 4" || groups === "1 3 3 4" || national ? "phone" : "account";
}

/** Every number that is personal data; a date at a number's start stays, and what follows it is judged alone. */
function numbers(text: string): Found[] {
  const found: Found[] = [];
  for (const m of text.matchAll(NUMBER)) {
    let offset = m.index;
    let run = m[0];
    const date = DATE.exec(run.replace(/^\(/, ""));
    if (date && isDate(date)) {
      const skip = (run.startsWith("(") ? 1 : 0) + date[0].length;
      const rest = run.slice(skip).replace(/^[\s()]+/, "");
      offset += run.length - rest.length;
      run = rest;
      if (run === "" || !/^[+(]?\d/.test(run)) continue;
    }
    const end = offset + run.length;
    const glued = WORD_CHAR.test(text[offset - 1] ?? "") || WORD_CHAR.test(text[end] ?? "");
    const kind = numberKind(run, glued);
    if (kind) found.push({ kind, offset, text: run });
  }
  return found;
}

/** Each kind's matches, in this order; a span matched once is not matched again. */
function personalSpans(text: string): Found[] {
  const emails = [...text.matchAll(EMAIL)].map((m) => ({ kind: "email" as const, offset: m.index, text: m[0] }));
  const taken: Found[] = [];
  for (const found of [...emails, ...ibans(text), ...numbers(text)]) {
    const end = found.offset + found.text.length;
    if (taken.some((t) => found.offset < t.offset + t.text.length && end > t.offset)) continue;
    taken.push(found);
  }
  return taken.sort((a, b) => a.offset - b.offset);
}

export class Scrubber {
  /** Every value replaced, by its normalized form, with its label. */
  readonly #labels = new Map<string, string>();
  readonly #counts = new Map<PiiKind, number>();
  /** Numbers (their digits) that are the team's own. */
  readonly #own: Set<string>;
  readonly #keep: boolean;

  /** `own`: numbers the agent file holds; `keep`: replace nothing (`--keep-pii`). */
  constructor(options: { own?: readonly string[]; keep?: boolean } = {}) {
    this.#own = new Set((options.own ?? []).map((n) => digitsOf(normalise(n))).filter((d) => d.length > 0));
    this.#keep = options.keep ?? false;
  }

  /** The channel's numbers get their own labels (unless the agent file holds them). */
  channel(channel: { callee_no?: string | undefined; caller_no?: string | null | undefined }): void {
    for (const [field, value] of [
      ["callee_no", channel.callee_no],
      ["caller_no", channel.caller_no],
    ] as const) {
      if (value && !this.isOwn(value)) this.#labels.set(`n:${digitsOf(normalise(value)) || value}`, `<${field}>`);
    }
  }

  /** Whether the number is one the agent file holds. */
  isOwn(value: string): boolean {
    return this.#own.has(digitsOf(normalise(value)));
  }

  /** How many distinct values have a placeholder so far. */
  get replaced(): number {
    return this.#labels.size;
  }

  #label(kind: PiiKind, key: string): string {
    const known = this.#labels.get(key);
    if (known) return known;
    const n = (this.#counts.get(kind) ?? 0) + 1;
    this.#counts.set(kind, n);
    const label = `<${kind} ${n}>`;
    this.#labels.set(key, label);
    return label;
  }

  /** The text, normalised, with each piece of personal data replaced by its label. Cut it after this, never before. */
  text(text: string): string {
    if (this.#keep) return text;
    const normal = normalise(text);
    let out = "";
    let at = 0;
    for (const found of personalSpans(normal)) {
      out += normal.slice(at, found.offset) + this.#replace(found.kind, found.text);
      at = found.offset + found.text.length;
    }
    return out + normal.slice(at);
  }

  /** The value's placeholder; a number the agent file holds stays (or keeps the channel's label). */
  #replace(kind: PiiKind, value: string): string {
    if (kind === "email") return this.#label(kind, `e:${value.toLowerCase()}`);
    const compact = value.replace(/[^A-Za-z0-9]/g, "").toUpperCase();
    const key = `n:${/[A-Z]/.test(compact) ? compact : digitsOf(value)}`;
    if (this.#own.has(digitsOf(value))) return this.#labels.get(key) ?? value;
    return this.#label(kind, key);
  }
}
