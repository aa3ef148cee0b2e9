// The "/source/flags" form of smoke expectations (`says`, `never_says`, argument matchers): parsed
// here once, checked when the file is loaded (syntax, and nested quantifiers, the usual cause of
// catastrophic backtracking), and compiled by smoke's matchers from the same parse.

const REGEX_FORM = /^\/(.+)\/([dgimsuvy]*)$/s;

export type PatternParts = { source: string; flags: string };

/** The source and flags of a "/regex/flags" string; undefined for a plain phrase. */
export function regexParts(pattern: string): PatternParts | undefined {
  const match = REGEX_FORM.exec(pattern);
  return match ? { source: match[1] ?? "", flags: match[2] ?? "" } : undefined;
}

/** Why a "/regex/flags" string cannot be used (undefined when it can, or when it is a phrase). */
export function regexProblem(pattern: string): string | undefined {
  const parts = regexParts(pattern);
  if (!parts) return undefined;
  try {
    new RegExp(parts.source, parts.flags);
  } catch (error) {
    return (error as Error).message.replace(/^Invalid regular expression/, "invalid regular expression");
  }
  const nested = nestedQuantifier(parts.source);
  if (nested !== undefined) {
    return `the regular expression repeats a group that itself repeats (${JSON.stringify(nested)}), which can take exponential time on a non-matching text: rewrite it without the nested repetition`;
  }
  return undefined;
}

type Group = { start: number; variable: boolean };

/**
 * The first group that is repeated (`*`, `+`, `{n,}`, `{n,m}` with m > 1) while it contains a
 * variable-count quantifier, e.g. `(a+)+` or `(\w*x?)*`. Returns that group with its quantifier.
 */
export function nestedQuantifier(source: string): string | undefined {
  const stack: Group[] = [{ start: 0, variable: false }];
  let i = 0;
  while (i < source.length) {
    const c = source[i];
    if (c === "\\") {
      i = afterAtom(source, i + 2, stack);
    } else if (c === "[") {
      i = afterAtom(source, classEnd(source, i), stack);
    } else if (c === "(") {
      stack.push({ start: i, variable: false });
      i++;
    } else if (c === ")" && stack.length > 1) {
      const group = stack.pop() as Group;
      const quantifier = quantifierAt(source, i + 1);
      if (quantifier && quantifier.max > 1 && group.variable) return source.slice(group.start, quantifier.end);
      // The enclosing group contains whatever this one contained, and this repetition too.
      const parent = stack.at(-1) as Group;
      parent.variable ||= group.variable || Boolean(quantifier && quantifier.max > quantifier.min);
      i = quantifier ? quantifier.end : i + 1;
    } else {
      i = afterAtom(source, i + 1, stack);
    }
  }
  return undefined;
}

/** Past the quantifier following an atom that ends before `end`, noting a variable count. */
function afterAtom(source: string, end: number, stack: Group[]): number {
  const quantifier = quantifierAt(source, end);
  if (!quantifier) return end;
  if (quantifier.max > quantifier.min) (stack.at(-1) as Group).variable = true;
  return quantifier.end;
}

function classEnd(source: string, start: number): number {
  let i = start + 1;
  if (source[i] === "^") i++;
  if (source[i] === "]") i++;
  while (i < source.length && source[i] !== "]") i += source[i] === "\\" ? 2 : 1;
  return i + 1;
}

function quantifierAt(source: string, at: number): { min: number; max: number; end: number } | undefined {
  const c = source[at];
  const lazy = (end: number) => (source[end] === "?" || source[end] === "+" ? end + 1 : end);
  if (c === "*") return { min: 0, max: Number.POSITIVE_INFINITY, end: lazy(at + 1) };
  if (c === "+") return { min: 1, max: Number.POSITIVE_INFINITY, end: lazy(at + 1) };
  if (c === "?") return { min: 0, max: 1, end: lazy(at + 1) };
  const braces = /^\{(\d+)(,(\d*))?\}/.exec(source.slice(at, at + 24));
  if (!braces) return undefined;
  const min = Number(braces[1]);
  const max = braces[2] === undefined ? min : braces[3] ? Number(braces[3]) : Number.POSITIVE_INFINITY;
  return { min, max, end: lazy(at + braces[0].length) };
}
