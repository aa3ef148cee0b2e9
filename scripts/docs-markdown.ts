// Markdown helpers of the generated references (scripts/docs.ts) and of the docs link check
// (test/readme/links.ts): plain text made safe to show as Markdown, and GitHub's heading anchors.

/** `text` as a code span, with a fence longer than any run of backticks inside it. */
export function code(text: string): string {
  const longest = Math.max(0, ...(text.match(/`+/g) ?? []).map((run) => run.length));
  const fence = "`".repeat(longest + 1);
  return longest > 0 ? `${fence} ${text} ${fence}` : `${fence}${text}${fence}`;
}

/**
 * Plain text (a help paragraph, a schema description) as Markdown that shows exactly that text:
 * outside its `code spans`, the characters Markdown would read as markup are escaped, and a line
 * that would start a block (a heading, a list item, a quote) starts as text.
 */
export function prose(text: string): string {
  const escaped = text
    .split(/(`[^`\n]*`)/)
    .map((part, i) =>
      i % 2 === 1
        ? part
        : part
            .replaceAll("\\", "\\\\")
            .replaceAll("*", "\\*")
            .replaceAll("<", "&lt;")
            // `_` may open or close emphasis only at a word's edge (snake_case stays as it is).
            .replace(/(^|[^\p{L}\p{N}\\])_|_(?=[^\p{L}\p{N}]|$)/gu, (match) => match.replace("_", "\\_")),
    )
    .join("");
  return escaped.replace(/^(\s*)([#>]|[-+](?=\s)|\d+[.)](?=\s))/gm, "$1\\$2");
}

/** Text for a table cell: one line, its pipes escaped (inside code spans too, as GFM reads them). */
export function cell(text: string): string {
  return prose(text.replace(/\s*\n\s*/g, " ")).replaceAll("|", "\\|");
}

/**
 * The anchor GitHub gives a heading: lowercase, punctuation and symbols dropped (letters, digits,
 * `_`, `-` and spaces kept), spaces turned into dashes. Inline code keeps its text; a repeated
 * heading gets -1, -2 … (see `anchors`).
 */
export function slug(heading: string): string {
  return heading
    .replace(/!?\[([^\]]*)\]\([^)]*\)/g, "$1") // a link's text
    .replace(/<[^>]+>/g, "") // inline HTML
    .toLowerCase()
    .replace(/[^\p{L}\p{M}\p{N}\p{Pc} -]/gu, "")
    .replaceAll(" ", "-");
}

/** Every anchor a Markdown page offers: its headings' (outside code fences) and explicit `id`s. */
export function anchors(markdown: string): Set<string> {
  const found = new Set<string>();
  const seen = new Map<string, number>();
  let fence: string | undefined;
  for (const line of markdown.split("\n")) {
    const marker = /^\s*(`{3,}|~{3,})/.exec(line)?.[1];
    if (marker && (!fence || (marker[0] === fence[0] && marker.length >= fence.length))) {
      fence = fence ? undefined : marker;
      continue;
    }
    if (fence) continue;
    for (const id of line.matchAll(/<a\s+(?:id|name)="([^"]+)"/g)) found.add(id[1] ?? "");
    const heading = /^ {0,3}#{1,6}\s+(.*?)\s*#*\s*$/.exec(line)?.[1];
    if (heading === undefined) continue;
    const base = slug(heading);
    const count = seen.get(base) ?? 0;
    seen.set(base, count + 1);
    found.add(count === 0 ? base : `${base}-${count}`);
  }
  return found;
}
