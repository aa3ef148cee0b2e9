// The default forbidden patterns of `agent-prompt-forbidden-patterns`: what they must catch in a
// prompt, what they must leave alone (numbers a prompt may well hold), and the org's own patterns.
import { describe, expect, it } from "vitest";
import { forbiddenMatches, mask } from "../../src/policy/index.ts";

const DEFAULTS = { patterns: [], replaceDefaults: false };

/** What the defaults find in `value`, set inside a sentence as a prompt would hold it. */
const found = (value: string) => forbiddenMatches(`Say this: ${value}. Then stop.`, DEFAULTS).map((m) => m.what);

describe("the default forbidden patterns", () => {
  it.each([
    "+1 415 555 0100",
    "+1-415-555-0100",
    "+1.415.555.0100",
    "+14155550100",
    "+1 (415) 555-0100",
    "+44 20 7946 0958",
    "+49 (30) 123456",
    "(415) 555-0100",
    "(415) 555 0100",
    "415-555-0100",
    "415.555.0100",
    "415 555 0100",
  ])("flags the phone number %s", (phone) => {
    expect(found(phone)).toEqual(["a phone number"]);
  });

  it.each(["ops@example.com", "first.last+tag@sub.example.co.uk", "Billing_Team@northwind-internet.example"])(
    "flags the e-mail address %s",
    (address) => {
      expect(found(address)).toEqual(["an e-mail address"]);
    },
  );

  it.each([
    "4111 1111 1111 1111",
    "4111-1111-1111-1111",
    "4111111111111111",
    "5500 0000 0000 0004",
    "378282246310005",
    "6011 0009 9013 9424",
  ])("flags the card-like number %s (Luhn-valid)", (card) => {
    expect(found(card)).toEqual(["a card-like number"]);
  });

  it.each([
    ["a version", "version 1.2.3"],
    ["a version with a v", "v10.4.12"],
    ["a Node version", "node 24.21.0"],
    ["an ISO date", "2024-05-01"],
    ["a date and time", "2024-05-01 10:30"],
    ["a US date", "12/31/2024"],
    ["a dotted date", "31.12.2024"],
    ["a price", "$1,299.99"],
    ["a price with spaces", "€ 1 299,00"],
    ["a big price", "USD 12,500,000.00"],
    ["a time range", "10:30-11:45"],
    ["an IP address", "10.0.0.1"],
    ["a card-length number failing Luhn", "4111 1111 1111 1112"],
    ["a 13-digit order number failing Luhn", "order 1234567890123"],
    ["an ISBN", "ISBN 978-3-16-148410-0"],
    ["an extension", "extension 4415"],
    ["a lone plus one", "+1"],
    ["a count with a plus", "+ 5 items"],
    ["a phone number in words", "1-800-FLOWERS"],
    ["a ten-digit id without separators", "id 4155550100"],
    ["an address without a domain", "user@localhost"],
    ["a handle", "@northwind"],
  ])("leaves %s alone: %s", (_what, text) => {
    expect(found(text)).toEqual([]);
  });

  it("finds every match in order with its offset, each span once, and shows it masked", () => {
    const text = "Call +1 415 555 0100 or write to ops@example.com; card 4111 1111 1111 1111.";
    const matches = forbiddenMatches(text, DEFAULTS);
    expect(matches).toEqual([
      { what: "a phone number", masked: '"+1•••••••••••00"', offset: text.indexOf("+1") },
      { what: "an e-mail address", masked: '"op•••••••••••om"', offset: text.indexOf("ops@") },
      { what: "a card-like number", masked: '"41•••••••••••••••11"', offset: text.indexOf("4111") },
    ]);
    // A card number is not also reported as a phone number.
    expect(forbiddenMatches("4111-1111-1111-1111", DEFAULTS)).toHaveLength(1);
  });

  it("finds matches at the very start and end of the text, and across lines", () => {
    expect(forbiddenMatches("+1 415 555 0100", DEFAULTS).map((m) => m.offset)).toEqual([0]);
    expect(forbiddenMatches("Escalate:\n(415) 555-0100\nor ops@example.com", DEFAULTS).map((m) => m.what)).toEqual([
      "a phone number",
      "an e-mail address",
    ]);
  });
});

describe("the org's own forbidden patterns", () => {
  const ticket = { name: "ticket id", regex: "TCK-\\d{4}", flags: "i" };

  it("adds named patterns to the defaults, with their flags", () => {
    const matches = forbiddenMatches("See tck-1234 or ops@example.com", { patterns: [ticket], replaceDefaults: false });
    expect(matches.map((m) => m.what)).toEqual([
      'text matching the forbidden pattern "ticket id"',
      "an e-mail address",
    ]);
  });

  it("replaces the defaults with replaceDefaults: true", () => {
    const matches = forbiddenMatches("See TCK-1234 or ops@example.com", { patterns: [ticket], replaceDefaults: true });
    expect(matches.map((m) => m.what)).toEqual(['text matching the forbidden pattern "ticket id"']);
    expect(forbiddenMatches("ops@example.com", { patterns: [], replaceDefaults: true })).toEqual([]);
  });

  it("ignores empty matches of a pattern that can match nothing", () => {
    expect(forbiddenMatches("abc", { patterns: [{ name: "maybe", regex: "x*" }], replaceDefaults: true })).toEqual([]);
  });
});

describe("mask", () => {
  it("keeps the first and last two characters of a long value and hides a short one whole", () => {
    expect(mask("ops@example.com")).toBe('"op•••••••••••om"');
    expect(mask("123456")).toBe('"••••••"');
    expect(mask("1234567")).toBe('"12•••67"');
  });
});
