// zod issues → diagnostics at the YAML node they concern, with "did you mean" for unknown keys.
import type { z } from "zod";
import { didYouMean } from "../errors/index.ts";
import { type Diagnostic, moreErrors } from "./diagnostic.ts";
import { clip, fieldName, locate, type PathSegment, type Source } from "./source.ts";

/**
 * Where `p` is written: in the overlay when it defines that value (or reaches deeper than the
 * base), else in the base file.
 */
export function position(sources: readonly Source[], p: readonly PathSegment[], keyOf = false) {
  const [base, overlay] = sources as [Source, Source | undefined];
  const inBase = { source: base, ...locate(base, p, keyOf) };
  if (!overlay) return inBase;
  const inOverlay = { source: overlay, ...locate(overlay, p, keyOf) };
  if (inOverlay.complete || inOverlay.depth > inBase.depth) return inOverlay;
  if (inBase.complete) return inBase;
  return inOverlay.depth > 0 && inOverlay.depth === inBase.depth ? inOverlay : inBase;
}

export function diagnosticAt(
  sources: readonly Source[],
  p: readonly PathSegment[],
  message: string,
  options: { keyOf?: boolean; field?: string } = {},
): Diagnostic {
  const where = position(sources, p, options.keyOf);
  return {
    file: where.source.file,
    line: where.line,
    column: where.column,
    field: options.field ?? (fieldName(p) || "(document)"),
    message,
  };
}

type Schema = z.core.$ZodType;

/** Beyond this many problems in one file the rest are counted, not located (locating is not free). */
export const MAX_ERRORS_PER_FILE = 50;

export function issuesToDiagnostics(
  sources: readonly Source[],
  schema: Schema,
  issues: readonly z.core.$ZodIssue[],
): Diagnostic[] {
  const flat = flatIssues(issues);
  const shown = flat.slice(0, MAX_ERRORS_PER_FILE).map((item) => {
    const { path, message, keyOf } = described(schema, item);
    return diagnosticAt(sources, path, message, { keyOf });
  });
  if (flat.length > shown.length) shown.push(moreErrors(shown.at(-1) as Diagnostic, flat.length - shown.length));
  return shown;
}

/** A problem of a value that has no file (a program's resource inputs): its field and an agent file's wording. */
export type FieldProblem = { field: string; message: string; path: PathSegment[] };

/** The same problems, in the same words, as an agent file's, where there is no file to point into. */
export function fieldProblems(schema: Schema, issues: readonly z.core.$ZodIssue[]): FieldProblem[] {
  return flatIssues(issues).map((item) => {
    const { path, message } = described(schema, item);
    return { field: fieldName(path) || "(document)", message, path };
  });
}

/** Every issue, union branches resolved and each unknown key an item of its own. */
function flatIssues(issues: readonly z.core.$ZodIssue[]): (FlatIssue & { key?: string })[] {
  return flatten(issues, []).flatMap((item): (FlatIssue & { key?: string })[] =>
    item.issue.code === "unrecognized_keys" ? item.issue.keys.map((key) => ({ ...item, key })) : [item],
  );
}

type FlatIssue = { issue: z.core.$ZodIssue; path: PathSegment[] };

/** Unions: keep the branch that got furthest (its issues are about the value the user meant). */
function flatten(issues: readonly z.core.$ZodIssue[], prefix: PathSegment[]): FlatIssue[] {
  const out: FlatIssue[] = [];
  for (const issue of issues) {
    const path = [...prefix, ...(issue.path as PathSegment[])];
    if (issue.code === "invalid_union" && issue.errors.length > 0) {
      const ranked = issue.errors
        .map((branch) => ({ branch, reach: Math.max(...branch.map((i) => i.path.length)) }))
        .sort((a, b) => b.reach - a.reach || a.branch.length - b.branch.length);
      const best = ranked[0];
      if (best && best.reach > 0) {
        out.push(...flatten(best.branch, path));
        continue;
      }
      const expected = issue.errors.flatMap((branch) =>
        branch.flatMap((i) => (i.code === "invalid_type" ? [i.expected] : [])),
      );
      if (expected.length === issue.errors.length) {
        out.push({ issue: { ...issue, message: `expected ${[...new Set(expected)].join(" or ")}` }, path });
        continue;
      }
    }
    out.push({ issue, path });
  }
  return out;
}

/** Where an issue is and what it says: an unknown key at the key itself, with "did you mean". */
function described(
  schema: Schema,
  { issue, path, key }: FlatIssue & { key?: string },
): { path: PathSegment[]; message: string; keyOf: boolean } {
  if (key !== undefined) {
    return { path: [...path, key], message: unknownKeyMessage(key, knownKeys(schema, path), path), keyOf: true };
  }
  return { path, message: messageOf(issue), keyOf: false };
}

function messageOf(issue: z.core.$ZodIssue): string {
  return issue.message.replace(/^Invalid input: /, "");
}

/**
 * The parse options of every agent and scenario file: a missing field is "required", told by the
 * issue's input (zod's error map sees it), not by the wording of zod's message.
 */
export const FILE_PARSE: z.core.ParseContext<z.core.$ZodIssue> = {
  error: (issue) =>
    issue.code === "invalid_type" && issue.input === undefined ? `required (expected ${issue.expected})` : undefined,
};

const CONVERSATIONAL_ONLY = new Set(["postprocess_agents", "smoke"]);

function unknownKeyMessage(key: string, known: string[], path: PathSegment[]): string {
  if (path.length === 0 && CONVERSATIONAL_ONLY.has(key)) return `only conversational agents have ${key}`;
  const suggestion = didYouMean(key, known);
  const shown = JSON.stringify(clip(key));
  if (suggestion) return `unknown key ${shown} (did you mean "${suggestion}"?)`;
  return known.length > 0 ? `unknown key ${shown} (expected one of: ${known.join(", ")})` : `unknown key ${shown}`;
}

type Def = {
  type: string;
  innerType?: Schema;
  in?: Schema;
  shape?: Record<string, Schema>;
  element?: Schema;
  valueType?: Schema;
  options?: Schema[];
};

const defOf = (schema: Schema) => schema._zod.def as unknown as Def;

function unwrap(schema: Schema): Schema {
  let current = schema;
  for (let guard = 0; guard < 20; guard++) {
    const def = defOf(current);
    if (def.innerType) current = def.innerType;
    else if (def.type === "pipe" && def.in) current = def.in;
    else break;
  }
  return current;
}

/** The keys an object schema at `path` accepts (for "did you mean"). */
function knownKeys(root: Schema, path: readonly PathSegment[]): string[] {
  let schemas: Schema[] = [root];
  for (const segment of path) {
    const next: Schema[] = [];
    for (const schema of schemas.flatMap(expandUnion)) {
      const def = defOf(schema);
      if (def.type === "object" && typeof segment === "string" && def.shape?.[segment]) next.push(def.shape[segment]);
      else if (def.type === "array" && typeof segment === "number" && def.element) next.push(def.element);
      else if (def.type === "record" && def.valueType) next.push(def.valueType);
    }
    schemas = next;
  }
  const keys = schemas.flatMap(expandUnion).flatMap((schema) => {
    const def = defOf(schema);
    return def.type === "object" && def.shape ? Object.keys(def.shape) : [];
  });
  return [...new Set(keys)];
}

function expandUnion(schema: Schema): Schema[] {
  const inner = unwrap(schema);
  const def = defOf(inner);
  return def.type === "union" && def.options ? def.options.flatMap(expandUnion) : [inner];
}
