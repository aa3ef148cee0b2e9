// The "/regex/flags" form: nested quantifiers (catastrophic backtracking) are found when a file is
// loaded, ordinary expressions are not flagged.
import { describe, expect, it } from "vitest";
import { nestedQuantifier, regexParts, regexProblem } from "../../src/definitions/patterns.ts";
import { MatchTimeout, textMatcher } from "../../src/smoke/matchers.ts";

describe("nestedQuantifier", () => {
  it.each([
    ["(a+)+", "(a+)+"],
    ["^(a*)*$", "(a*)*"],
    ["(\\w*\\s?)*!", "(\\w*\\s?)*"],
    ["(?:x|y+){2,}", "(?:x|y+){2,}"],
    ["((ab)+c)*", "((ab)+c)*"],
    ["(a{1,3})+", "(a{1,3})+"],
  ])("finds %s", (source, group) => {
    expect(nestedQuantifier(source)).toBe(group);
  });

  it.each([
    "this is \\w+\\.",
    "tuesday at 10am",
    "(\\d{3})+",
    "(ab)+",
    "(a|b)*c",
    "[(a+)]+",
    "\\(a+\\)+",
    "(a+)?",
    "(?<name>\\w+) said",
  ])("leaves %s alone", (source) => {
    expect(nestedQuantifier(source)).toBeUndefined();
  });
});

describe("regexProblem", () => {
  it("explains a nested repetition, a syntax error, and accepts phrases", () => {
    expect(regexProblem("/^(a+)+$/")).toMatch(/repeats a group that itself repeats \("\(a\+\)\+"\)/);
    expect(regexProblem("/(unclosed/")).toMatch(/^invalid regular expression/);
    expect(regexProblem("(a+)+ is just a phrase")).toBeUndefined();
    expect(regexParts("/x/gi")).toEqual({ source: "x", flags: "gi" });
  });

  it("the refused pattern really backtracks catastrophically: 41 characters outlast any bound", () => {
    // 2^40 ways to split the a's: the bounded matcher gives up (a loaded machine only gets less far).
    expect(() => textMatcher("/^(a+)+$/", 200).test(`${"a".repeat(40)}!`)).toThrow(MatchTimeout);
    // Without the nesting, the same text is answered.
    expect(textMatcher("/^a+$/", 200).test(`${"a".repeat(40)}!`)).toBe(false);
  });
});
