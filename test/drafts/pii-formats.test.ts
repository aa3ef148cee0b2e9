// The scrubber over the ways people write personal data (property-based, fast-check): a card number
// (Luhn-valid), an international phone number, an IBAN and an e-mail address, each written with any
// separators (spaces, non-breaking and thin spaces, dots, dashes, " - ", slashes), in full-width
// digits, in any case, with invisible characters between, inside text: the text comes back with the
// value replaced by its one placeholder and nothing else changed, so nothing of it survives; two
// spellings of one value get one label. Then the cases found by hand: a name slugged after scrubbing,
// a date beside a number, ids that are not numbers.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import type { AgentDefinition } from "../../src/definitions/index.ts";
import { Scrubber } from "../../src/drafts/pii.ts";
import { vet } from "../../src/drafts/vet.ts";
import { personalData } from "../../src/policy/index.ts";

const digit = fc.integer({ min: 0, max: 9 }).map(String);
const digits = (min: number, max: number) => fc.array(digit, { minLength: min, maxLength: max }).map((d) => d.join(""));

/** A digit doubled, its digits summed (Luhn's step for every second digit from the right). */
const DOUBLED = [0, 2, 4, 6, 8, 1, 3, 5, 7, 9];

/** Luhn's check digit for `body`. */
function luhnDigit(body: string): string {
  const sum = [...body]
    .reverse()
    .reduce((acc, d, i) => acc + (i % 2 === 0 ? (DOUBLED[Number(d)] as number) : Number(d)), 0);
  return String((10 - (sum % 10)) % 10);
}

/** The IBAN of `country` and `bban`, with its check digits. */
function iban(country: string, bban: string): string {
  const moved = `${bban}${country}00`;
  let rest = 0;
  for (const char of moved) {
    const value = Number.parseInt(char, 36);
    rest = (value > 9 ? rest * 100 + value : rest * 10 + value) % 97;
  }
  return `${country}${String(98 - rest).padStart(2, "0")}${bban}`;
}

/** What people put between the groups of a number. */
const SEPARATORS = [" ", "", "-", ".", " - ", "\u00a0", "\u202f", "\u2009", "/", "\u2011", "\u2013", "  ", "_"];
const separator = fc.constantFrom(...SEPARATORS);

/** `value` cut in groups of 2 to 5 characters, each gap a separator of its own. */
const grouped = (value: string) =>
  fc
    .tuple(
      fc.array(fc.integer({ min: 2, max: 5 }), { minLength: value.length, maxLength: value.length }),
      fc.array(separator, { minLength: value.length, maxLength: value.length }),
    )
    .map(([sizes, gaps]) => {
      const groups: string[] = [];
      for (let at = 0, i = 0; at < value.length; at += sizes[i] as number, i++) {
        groups.push(value.slice(at, at + (sizes[i] as number)));
      }
      return groups.map((g, i) => (i === 0 ? g : `${gaps[i]}${g}`)).join("");
    });

/** ASCII letters and digits as full-width forms (what NFKC folds back). */
const fullWidth = (text: string) => text.replace(/[!-~]/g, (c) => String.fromCharCode(c.charCodeAt(0) - 0x21 + 0xff01));
/** Invisible characters people paste along: zero-width space, soft hyphen, word joiner. */
const invisible = (text: string, every: number) =>
  [...text].map((c, i) => (i > 0 && i % every === 0 ? `\u200b${c}` : i % every === 1 ? `${c}\u00ad` : c)).join("");

/** A spelling of `value`: as it is, full-width, or with invisible characters between. */
const spelled = (value: string) =>
  fc.oneof(
    fc.constant(value),
    fc.constant(fullWidth(value)),
    fc.integer({ min: 2, max: 6 }).map((every) => invisible(value, every)),
  );

const card = fc
  .tuple(fc.constantFrom("4", "51", "37", "6011", "35"), fc.integer({ min: 13, max: 19 }))
  .chain(([prefix, length]) => digits(length - prefix.length - 1, length - prefix.length - 1).map((d) => prefix + d))
  .map((body) => body + luhnDigit(body));

/** `+country`, an area code (plain, in brackets, or after a "(0)"), then the rest grouped: 8 to 15 digits. */
const phone = fc
  .tuple(
    digits(1, 3).filter((country) => !country.startsWith("0")),
    digits(2, 4),
    digits(5, 7),
    fc.constantFrom("plain", "bracketed", "zero"),
    fc.constantFrom(" ", ""),
    separator,
  )
  .chain(([country, area, rest, style, afterPlus, gap]) =>
    grouped(rest).map((written) => {
      if (style === "bracketed") return `+${country}${afterPlus}(${area}) ${written}`;
      if (style === "zero") return `+${country} (0)${area}${gap}${written}`;
      return `+${country}${afterPlus}${area}${gap}${written}`;
    }),
  );

const alnum = fc.constantFrom(..."ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789");
const ibanValue = fc
  .constantFrom(["DE", 18, false], ["GB", 18, true], ["FR", 23, false], ["NL", 14, true], ["ES", 20, false])
  .chain(([country, length, letters]) =>
    fc
      .array(letters ? alnum : digit, { minLength: length as number, maxLength: length as number })
      .map((bban) => iban(country as string, bban.join(""))),
  );
/** How an IBAN is grouped and cased: in fours with one separator, or not at all; upper, lower, or mixed. */
const ibanWritten = (value: string) =>
  fc
    .tuple(fc.constantFrom(" ", "", "-", ".", "\u00a0"), fc.constantFrom("upper", "lower", "mixed"))
    .map(([gap, casing]) => {
      const text = value.match(/.{1,4}/g)?.join(gap) ?? value;
      if (casing === "upper") return text;
      if (casing === "lower") return text.toLowerCase();
      return [...text].map((c, i) => (i % 2 ? c.toLowerCase() : c)).join("");
    });

const letters = "abcdefghijklmnopqrstuvwxyzäöüéèçñøåжшλπ".split("");
const word = (min: number, max: number) =>
  fc.array(fc.constantFrom(...letters), { minLength: min, maxLength: max }).map((l) => l.join(""));
const email = fc
  .tuple(word(2, 8), fc.option(fc.tuple(fc.constantFrom(".", "_", "+", "-"), word(1, 6))), word(2, 10), word(2, 6))
  .map(([local, more, domain, tld]) => `${local}${more ? more.join("") : ""}@${domain}.${tld}`);
const emailWritten = (value: string) =>
  fc.constantFrom("as is", "upper", "mixed").map((casing) => {
    if (casing === "upper") return value.toUpperCase();
    if (casing === "mixed") return [...value].map((c, i) => (i % 3 ? c : c.toUpperCase())).join("");
    return value;
  });

/** Text around the value: no digit, no "@", and NFKC leaves it as it is. */
const before = fc.constantFrom("", "my number is ", "Number: ", "call me on ", "it's ", "write to ", "(see ");
const after = fc.constantFrom("", ".", ", thanks", ")", " please", "!", " — ok?");

/** Each spelling, inside any text, comes back as that text with the value as `label` and nothing else changed. */
function assertReplacedExactly(written: fc.Arbitrary<string>, label: RegExp): void {
  fc.assert(
    fc.property(written, before, after, (value, head, tail) => {
      const out = new Scrubber().text(`${head}${value}${tail}`);
      expect(out.startsWith(head) && out.endsWith(tail), out).toBe(true);
      expect(out.slice(head.length, out.length - tail.length)).toMatch(label);
    }),
    { numRuns: 1000 },
  );
}

describe("personal data in any format people write it", () => {
  it("a card number (Luhn-valid), grouped with any separators, full-width or with invisible characters", () => {
    assertReplacedExactly(
      card.chain((value) => grouped(value).chain(spelled)),
      /^<card 1>$/,
    );
  });

  it("an international phone number, with dots, dashes, spaces, brackets, full-width or invisible characters", () => {
    assertReplacedExactly(phone.chain(spelled), /^<phone 1>$/);
  });

  it("an IBAN in any case and grouping", () => {
    assertReplacedExactly(ibanValue.chain(ibanWritten).chain(spelled), /^<account 1>$/);
  });

  it("an e-mail address in any script and case, full-width or with invisible characters", () => {
    assertReplacedExactly(email.chain(emailWritten).chain(spelled), /^<email 1>$/);
  });

  it("two spellings of one value get one label", () => {
    const twice = (value: fc.Arbitrary<[string, string]>, label: string) =>
      fc.property(value, ([a, b]) => {
        expect(new Scrubber().text(`first ${a}, then ${b}.`)).toBe(`first ${label}, then ${label}.`);
      });
    fc.assert(
      twice(
        card.chain((v) => fc.tuple(grouped(v), grouped(v).map(fullWidth))),
        "<card 1>",
      ),
    );
    fc.assert(
      twice(
        ibanValue.chain((v) => fc.tuple(ibanWritten(v), ibanWritten(v))),
        "<account 1>",
      ),
    );
    fc.assert(
      twice(
        email.chain((v) => fc.tuple(emailWritten(v), emailWritten(v).map(fullWidth))),
        "<email 1>",
      ),
    );
  });

  it("an e-mail address, a card and an IBAN straddling a cut are found: the scrubber sees the whole text", () => {
    const text = `${"x".repeat(990)} jürgen@exämple.de and 4111 1111 1111 1111`;
    const out = new Scrubber().text(text);
    expect(out).toBe(`${"x".repeat(990)} <email 1> and <card 1>`);
  });

  it("dates, times, short numbers and ids glued to words stay", () => {
    const text = "on 2024-05-01 10:30, 12.05.2024 or 5/1/24 at 9.30 for 3 people, version ca_12345, room 101";
    expect(new Scrubber().text(text)).toBe(text);
    // A date-like start that is no date is no reason to keep the rest.
    expect(new Scrubber().text("card 1234-56-78 9012 3456 7890")).toBe("card <account 1>");
  });
});

describe("a name the model wrote", () => {
  const agent = {
    key: "booking",
    kind: "conversational",
    config: { tool: { tools: [] } },
    postprocessAgents: [],
    smoke: [],
  } as unknown as AgentDefinition;
  const nameOf = (name: string) => {
    const proposal = { name, persona: "A caller", goal: "a goal", max_turns: 3, tool_calls: [], judge: [] };
    const { kept } = vet([proposal], {
      agent,
      existing: [],
      channel: { callee_no: "+15550142100" },
      scrubber: new Scrubber(),
      count: 1,
      label: "proposed scenario",
    });
    return kept[0]?.parsed.name;
  };

  it("is slugged from scrubbed text, and the slug is scrubbed again (slugging joins what was apart)", () => {
    expect(nameOf("card 4111.1111.1111.1111")).toBe("card-card-1");
    expect(nameOf("card 4111|1111|1111|1111")).toBe("card-card-1");
    expect(nameOf("jürgen@exämple.de calls")).toBe("email-1-calls");
  });
});

describe("the org rule's detectors", () => {
  it("find nothing in scrubbed text: the scrubber finds all they find", () => {
    const piece = fc.constantFrom(
      ..."0123456789",
      " ",
      "-",
      ".",
      "(",
      ")",
      "+",
      "@",
      "a",
      "b",
      "x",
      "co",
      "de",
      "\u00a0",
    );
    fc.assert(
      fc.property(fc.array(piece, { maxLength: 60 }), (pieces) => {
        const out = new Scrubber().text(pieces.join(""));
        expect(personalData(out), out).toEqual([]);
      }),
      { numRuns: 3000 },
    );
  });
});
