// Where a field of a valid agent is written, for findings about values rather than syntax (the
// policy rules in `validate --policy`): the overlay or base file's line, or — for a place inside a
// prompt's text — the line of the prompt file, or of the YAML block that holds the text.
import { isScalar, Scalar } from "yaml";
import { position } from "./issues.ts";
import { fieldName, type PathSegment, type Source } from "./source.ts";

export type FieldLocation = { file: string; line: number; column: number; field: string };

/** The line and column of `offset` in `text` (1-based). */
function lineOf(text: string, offset: number): { line: number; column: number } {
  const before = text.slice(0, Math.max(0, offset));
  const lines = before.split("\n");
  return { line: lines.length, column: (lines.at(-1)?.length ?? 0) + 1 };
}

export function fieldLocation(
  sources: readonly Source[],
  promptFiles: ReadonlyMap<string, string>,
  p: readonly PathSegment[],
  value: unknown,
  offset?: number,
): FieldLocation {
  const field = fieldName(p);
  // A prompt read from a file: its text is the file's, so the offset is a place in that file.
  const owner = p.at(-1) === "text" && p.at(-2) === "prompt" ? JSON.stringify(p.slice(0, -3)) : undefined;
  const promptFile = owner === undefined ? undefined : promptFiles.get(owner);
  if (promptFile !== undefined) {
    const at = typeof value === "string" && offset !== undefined ? lineOf(value, offset) : { line: 1, column: 1 };
    return { file: promptFile, ...at, field };
  }
  if (sources.length === 0) return { file: "(unknown)", line: 1, column: 1, field };
  const where = position(sources, p);
  const base = { file: where.source.file, line: where.line, column: where.column, field };
  if (typeof value !== "string" || offset === undefined || !where.complete) return base;
  const node = where.source.doc.getIn(p as PathSegment[], true);
  // A `|` or `>` block starts its text on the line after the indicator.
  if (isScalar(node) && (node.type === Scalar.BLOCK_LITERAL || node.type === Scalar.BLOCK_FOLDED)) {
    return { ...base, line: where.line + lineOf(value, offset).line, column: where.column };
  }
  return base;
}
