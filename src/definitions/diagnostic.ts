// One problem in an agent file, at a position a person (or an editor) can jump to.
export type Diagnostic = { file: string; line: number; column: number; field: string; message: string };

/** `agents/support.yaml:12:7: config.runtime.model: <reason>` */
export function formatDiagnostic(d: Diagnostic): string {
  return `${d.file}:${d.line}:${d.column}: ${d.field}: ${d.message}`;
}

export function compareDiagnostics(a: Diagnostic, b: Diagnostic): number {
  return (
    (a.file < b.file ? -1 : a.file > b.file ? 1 : 0) ||
    a.line - b.line ||
    a.column - b.column ||
    (a.field < b.field ? -1 : a.field > b.field ? 1 : 0) ||
    (a.message < b.message ? -1 : a.message > b.message ? 1 : 0)
  );
}

/** Stands for the problems of a file beyond the shown ones, at the last shown one's position. */
export function moreErrors(last: Diagnostic, count: number): Diagnostic {
  return { ...last, field: "(file)", message: `${count} more errors in this file are not shown` };
}
