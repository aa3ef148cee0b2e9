// Reading one YAML file safely (size cap, UTF-8 only, nesting and alias limits) and mapping value
// paths back to line:column in it. Nothing here throws: every problem becomes a Diagnostic.

import { AsyncLocalStorage } from "node:async_hooks";
import { isUtf8 } from "node:buffer";
import { readFile, stat } from "node:fs/promises";
import path from "node:path";
import {
  type Document,
  isAlias,
  isMap,
  isPair,
  isScalar,
  isSeq,
  Lexer,
  LineCounter,
  type Node,
  type ParsedNode,
  parseDocument,
  type YAMLError,
} from "yaml";
import type { Diagnostic } from "./diagnostic.ts";

export const MAX_YAML_BYTES = 1024 * 1024;
export const MAX_PROMPT_BYTES = 256 * 1024;
export const MAX_DEPTH = 64;
const MAX_ALIAS_COUNT = 100;

export type PathSegment = string | number;

export type Source = {
  /** Path as shown in diagnostics (relative to the directory the load shows paths from). */
  file: string;
  absolute: string;
  doc: Document.Parsed;
  lineCounter: LineCounter;
};

export type Loaded = { source?: Source; value?: unknown; errors: Diagnostic[] };

// The directory paths are shown from while one load runs (loadAgents' `from`, the run's project):
// never the process's working directory, which an in-process run (a program run inline, a test
// beside another) does not share.
const shownFrom = new AsyncLocalStorage<string>();

/** Runs `load` with paths shown relative to `dir` (absolute: the directory the user works in, the run's project). */
export function showingPathsFrom<T>(dir: string, load: () => Promise<T>): Promise<T> {
  return shownFrom.run(dir, load);
}

/**
 * Path as shown to the user: relative to the directory the load shows paths from when that is
 * shorter; the absolute path outside any load that names one.
 */
export function displayPath(absolute: string): string {
  const from = shownFrom.getStore();
  if (from === undefined) return absolute;
  const relative = path.relative(from, absolute);
  return relative && !relative.startsWith(`..${path.sep}..`) ? relative : absolute;
}

function fileError(file: string, field: string, message: string, line = 1, column = 1): Diagnostic {
  return { file, line, column, field, message };
}

const size = (bytes: number) => (bytes >= 1024 * 1024 ? `${bytes / (1024 * 1024)} MiB` : `${bytes / 1024} KiB`);

/** Reads a text file with a size cap; rejects non-UTF-8 content. Returns the text or a reason. */
export async function readText(absolute: string, maxBytes: number): Promise<{ text: string } | { error: string }> {
  let bytes: Buffer;
  try {
    const info = await stat(absolute);
    if (!info.isFile()) return { error: "is not a regular file" };
    if (info.size > maxBytes) return { error: `is too large (${info.size} bytes; the limit is ${size(maxBytes)})` };
    bytes = await readFile(absolute);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    return { error: code === "ENOENT" ? "does not exist" : `cannot be read (${code ?? (error as Error).message})` };
  }
  // The file may have grown between stat and read.
  if (bytes.length > maxBytes) return { error: `is too large (more than ${size(maxBytes)})` };
  if ((bytes[0] === 0xff && bytes[1] === 0xfe) || (bytes[0] === 0xfe && bytes[1] === 0xff)) {
    return { error: "is UTF-16 encoded: save it as UTF-8" };
  }
  if (!isUtf8(bytes)) {
    const decoded = bytes.toString("utf8");
    const bad = decoded.indexOf("\uFFFD");
    const line = bad < 0 ? 1 : decoded.slice(0, bad).split("\n").length;
    return { error: `is not valid UTF-8 (first undecodable byte near line ${line}): save it as UTF-8` };
  }
  let text = bytes.toString("utf8");
  if (text.charCodeAt(0) === 0xfeff) text = text.slice(1);
  if (text.includes("\0")) return { error: "contains NUL characters: is it a text file?" };
  return { text };
}

/** Reads and parses one YAML file into a value, collecting every syntax and limit error. */
export async function loadYaml(absolute: string): Promise<Loaded> {
  const file = displayPath(absolute);
  const read = await readText(absolute, MAX_YAML_BYTES);
  if ("error" in read) return { errors: [fileError(file, "(file)", `the file ${read.error}`)] };
  try {
    return parseYaml(file, absolute, read.text);
  } catch (error) {
    // Defensive: the yaml library or a limit check failed in an unexpected way.
    return { errors: [fileError(file, "(file)", `cannot parse the file: ${(error as Error).message}`)] };
  }
}

/** Parses YAML text held in memory (e.g. a proposed scenario) with the same limits and positions as a file. */
export function parseYamlText(file: string, text: string): Loaded {
  if (Buffer.byteLength(text) > MAX_YAML_BYTES) {
    return { errors: [fileError(file, "(file)", `the text is too large (the limit is ${size(MAX_YAML_BYTES)})`)] };
  }
  return parseYaml(file, file, text);
}

function parseYaml(file: string, absolute: string, text: string): Loaded {
  // Flow collections nest recursively in the parser: count their depth on the token stream first.
  const tooDeep = flowDepthExceeded(text);
  if (tooDeep !== undefined) {
    const lineCounter = new LineCounter();
    for (let i = text.indexOf("\n"); i >= 0 && i < tooDeep; i = text.indexOf("\n", i + 1))
      lineCounter.addNewLine(i + 1);
    const pos = lineCounter.linePos(tooDeep);
    return { errors: [fileError(file, "(document)", `nesting is deeper than ${MAX_DEPTH} levels`, pos.line, pos.col)] };
  }
  const lineCounter = new LineCounter();
  // uniqueKeys is checked below in linear time (the library's own check is quadratic in the keys).
  const doc = parseDocument(text, { lineCounter, prettyErrors: false, stringKeys: true, uniqueKeys: false });
  const source: Source = { file, absolute, doc, lineCounter };
  const errors: Diagnostic[] = [];
  for (const problem of [...doc.errors, ...doc.warnings]) errors.push(yamlProblem(source, problem));
  if (errors.length > 0) return { source, errors };

  errors.push(...structureProblems(source));
  if (errors.length > 0) return { source, errors };
  let value: unknown;
  try {
    value = doc.toJS({ maxAliasCount: MAX_ALIAS_COUNT });
  } catch (error) {
    const firstAlias = findAlias(doc);
    // yaml throws a ReferenceError only for an alias it will not expand (the count bound, or unresolved).
    const message =
      error instanceof ReferenceError
        ? `an alias cannot be expanded (${error.message}); more than ${MAX_ALIAS_COUNT} expansions look like an alias bomb`
        : `cannot read the document: ${(error as Error).message}`;
    errors.push(
      firstAlias ? at(source, firstAlias.node, firstAlias.path, message) : fileError(file, "(document)", message),
    );
    return { source, errors };
  }
  return { source, value, errors };
}

function yamlProblem(source: Source, problem: YAMLError): Diagnostic {
  const offset = problem.pos[0];
  const pos = source.lineCounter.linePos(offset);
  const message = problem.message.split("\n")[0]?.replace(/ at line \d+, column \d+:?$/, "") ?? problem.code;
  const field = fieldName(pathAtOffset(source.doc, offset)) || "(document)";
  return { file: source.file, line: pos.line, column: pos.col, field, message: `YAML: ${message}` };
}

/** Index of the first flow-collection opener nested deeper than MAX_DEPTH, if any. */
function flowDepthExceeded(text: string): number | undefined {
  let depth = 0;
  let offset = 0;
  for (const token of new Lexer().lex(text)) {
    if (token === "[" || token === "{") {
      depth++;
      if (depth > MAX_DEPTH) return offset;
    } else if (token === "]" || token === "}") {
      depth = Math.max(0, depth - 1);
    }
    // Control tokens mark structure and are not part of the source text.
    if (token !== "\u0002" && token !== "\u0018" && token !== "\u001f") offset += token.length;
  }
  return undefined;
}

type Located = { node: Node; path: PathSegment[] };

/**
 * Duplicate keys in any mapping, and the first node nested deeper than MAX_DEPTH. An iterative
 * walk: no recursion and linear time on hostile input.
 */
function structureProblems(source: Source): Diagnostic[] {
  const problems: Diagnostic[] = [];
  const stack: { node: unknown; depth: number; path: PathSegment[] }[] = [
    { node: source.doc.contents, depth: 0, path: [] },
  ];
  while (stack.length > 0 && problems.length < 50) {
    const { node, depth, path: p } = stack.pop() as { node: unknown; depth: number; path: PathSegment[] };
    if (depth > MAX_DEPTH && (isMap(node) || isSeq(node))) {
      problems.push(at(source, node, p, `nesting is deeper than ${MAX_DEPTH} levels`));
      break;
    }
    if (isMap(node)) {
      const seen = new Map<string, Node>();
      for (const pair of node.items) {
        const key = isScalar(pair.key) ? String(pair.key.value) : "?";
        const first = seen.get(key);
        if (first && isScalar(pair.key)) {
          const line = source.lineCounter.linePos(first.range?.[0] ?? 0).line;
          problems.push(
            at(
              source,
              pair.key,
              [...p, key],
              `duplicate key ${JSON.stringify(clip(key))} (first at line ${line}); keys must be unique`,
            ),
          );
        } else if (isScalar(pair.key)) {
          seen.set(key, pair.key);
        }
        stack.push({ node: pair.value, depth: depth + 1, path: [...p, key] });
      }
    } else if (isSeq(node)) {
      node.items.forEach((item, i) => {
        stack.push({ node: item, depth: depth + 1, path: [...p, i] });
      });
    }
  }
  return problems;
}

function findAlias(doc: Document.Parsed): Located | undefined {
  const stack: { node: unknown; path: PathSegment[] }[] = [{ node: doc.contents, path: [] }];
  while (stack.length > 0) {
    const { node, path: p } = stack.shift() as { node: unknown; path: PathSegment[] };
    if (isAlias(node)) return { node, path: p };
    if (isMap(node)) {
      for (const pair of node.items)
        stack.push({ node: pair.value, path: [...p, isScalar(pair.key) ? String(pair.key.value) : "?"] });
    } else if (isSeq(node)) {
      node.items.forEach((item, i) => {
        stack.push({ node: item, path: [...p, i] });
      });
    }
  }
  return undefined;
}

/** The path of the innermost node containing `offset` (for syntax errors). */
function pathAtOffset(doc: Document.Parsed, offset: number): PathSegment[] {
  const result: PathSegment[] = [];
  let node: unknown = doc.contents;
  for (let guard = 0; guard <= MAX_DEPTH * 2; guard++) {
    let next: { node: unknown; segment: PathSegment } | undefined;
    if (isMap(node)) {
      for (const pair of node.items) {
        const start = (pair.key as ParsedNode | null)?.range?.[0] ?? Number.POSITIVE_INFINITY;
        const end = (pair.value as ParsedNode | null)?.range?.[2] ?? (pair.key as ParsedNode | null)?.range?.[2] ?? -1;
        if (offset >= start && offset <= end && isScalar(pair.key)) {
          next = { node: pair.value, segment: String(pair.key.value) };
        }
      }
    } else if (isSeq(node)) {
      node.items.forEach((item, i) => {
        const range = (item as ParsedNode | null)?.range;
        if (range && offset >= range[0] && offset <= range[2]) next = { node: item, segment: i };
      });
    }
    if (!next) break;
    result.push(next.segment);
    node = next.node;
  }
  return result;
}

/** `config.runtime.model`, `smoke[0].expect.says[1]`; bounded, since hostile keys can be huge. */
export function fieldName(p: readonly PathSegment[]): string {
  let out = "";
  for (const segment of p) {
    if (typeof segment === "number") out += `[${segment}]`;
    else out += out ? `.${clip(segment, 60)}` : clip(segment, 60);
  }
  return out.length > 200 ? `${out.slice(0, 80)}…${out.slice(-100)}` : out;
}

/** Text from a file, shortened for a message. */
export function clip(text: string, max = 80): string {
  return text.length > max ? `${text.slice(0, max - 1)}…` : text;
}

export type Position = { line: number; column: number; depth: number; complete: boolean };

/**
 * The position of the node at `p`, or of its nearest existing parent. With `keyOf`, the position
 * of the mapping key itself (for unknown keys). `depth` is how many segments were found.
 */
export function locate(source: Source, p: readonly PathSegment[], keyOf = false): Position {
  let node: unknown = source.doc.contents;
  let best: Node | undefined = isNodeWithRange(node) ? node : undefined;
  let depth = 0;
  for (const [index, segment] of p.entries()) {
    if (isAlias(node)) node = node.resolve(source.doc);
    let next: unknown;
    let keyNode: unknown;
    if (isMap(node)) {
      const pair = node.items.find(
        (item) => isPair(item) && isScalar(item.key) && String(item.key.value) === String(segment),
      );
      if (pair) {
        next = pair.value;
        keyNode = pair.key;
      }
    } else if (isSeq(node) && typeof segment === "number") {
      next = node.items[segment];
    }
    if (next === undefined && keyNode === undefined) break;
    depth++;
    const last = index === p.length - 1;
    const target = last && keyOf ? keyNode : (next ?? keyNode);
    if (isNodeWithRange(target)) best = target;
    else if (isNodeWithRange(keyNode)) best = keyNode;
    node = next;
  }
  const offset = best?.range?.[0] ?? 0;
  const pos = source.lineCounter.linePos(offset);
  return { line: pos.line, column: pos.col, depth, complete: depth === p.length };
}

function isNodeWithRange(value: unknown): value is Node {
  return (isScalar(value) || isMap(value) || isSeq(value) || isAlias(value)) && Array.isArray(value.range);
}

function at(source: Source, node: Node, p: PathSegment[], message: string): Diagnostic {
  const pos = source.lineCounter.linePos(node.range?.[0] ?? 0);
  return { file: source.file, line: pos.line, column: pos.col, field: fieldName(p) || "(document)", message };
}
