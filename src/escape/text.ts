// The escaping helpers of the text formats, one set per format (HTML's is html.ts): the
// terminal's, JSON Lines', Markdown's, XML's and YAML's (a draft pasted into a file). Text from agent
// files and the service goes through them only: on a terminal it is data, never control (no cursor
// moves, titles or forged lines).
import { Document, type ScalarTag, type Tags } from "yaml";

const MAX_TEXT = 300;

// A zero-width space (as an entity: it survives every Markdown renderer) that breaks what GitHub
// would otherwise turn into a notification or a link: `@org/team` and `@user` mentions (and e-mail
// autolinks), `#12` and `owner/repo#12` references, `https://…` and `www.` autolinks.
const ZWSP = "&#8203;";

/**
 * Plain text for Markdown inside a line: one line, bounded, HTML and inline Markdown syntax
 * escaped, and inert on GitHub — no mention notifies anyone, no reference or URL becomes a link.
 */
export function markdownText(text: string, max = MAX_TEXT): string {
  const line = text.replace(/\s+/g, " ").trim();
  const clipped = line.length > max ? `${line.slice(0, max)}…` : line;
  return clipped
    .replace(/&/g, "&amp;")
    .replace(/</g, "&lt;")
    .replace(/>/g, "&gt;")
    .replace(/[\\`*_[\]|~]/g, (c) => `\\${c}`)
    .replace(/#(?=\d)/g, `#${ZWSP}`)
    .replace(/@(?=[A-Za-z0-9])/g, `@${ZWSP}`)
    .replace(/:\/\//g, `:${ZWSP}//`)
    .replace(/\bwww\./gi, (www) => `${www.slice(0, 3)}${ZWSP}.`);
}

/** Markdown (already made safe) in a table cell: one line, pipes escaped. */
export function tableCell(markdown: string): string {
  return markdown.replace(/\s*[\r\n]+\s*/g, " ").replace(/(?<!\\)\|/g, "\\|");
}

/** A one-line text as a code span: its delimiter is a backtick run that does not occur inside it (CommonMark 6.1). */
export function codeSpan(text: string): string {
  const line = text.replace(/[\r\n]+/g, " ");
  const longest = Math.max(0, ...(line.match(/`+/g) ?? []).map((run) => run.length));
  const tick = "`".repeat(longest + 1);
  const pad = line.startsWith("`") || line.endsWith("`") ? " " : "";
  return `${tick}${pad}${line}${pad}${tick}`;
}

/** A fenced code block whose fence is longer than any backtick run in the content, so no line can close it. */
export function fenced(content: string, language: string): string[] {
  const longest = Math.max(0, ...(content.match(/`+/g) ?? []).map((run) => run.length));
  const fence = "`".repeat(Math.max(3, longest + 1));
  return [`${fence}${language}`, content, fence];
}

const xmlEscapes: Record<string, string> = { "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&apos;" };

/** Text for XML content and quoted attributes: characters XML 1.0 cannot hold are dropped, the rest escaped. */
export function xml(text: string): string {
  // biome-ignore lint/suspicious/noControlCharactersInRegex: removing the control characters XML forbids
  const clean = text.replace(/[\u0000-\u0008\u000b\u000c\u000e-\u001f\ufffe\uffff]/g, "");
  return clean.replace(/[&<>"']/g, (c) => xmlEscapes[c] ?? c);
}

// C0 controls (line breaks and tabs too), DEL, C1 controls (0x9b is a CSI on its own), and the
// invisible bidirectional and line/paragraph separators that reorder or break what a terminal shows.
// biome-ignore lint/suspicious/noControlCharactersInRegex: matching control characters is the point.
const CONTROL = /[\u0000-\u001f\u007f-\u009f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]/g;
const NAMED: Record<string, string> = { "\n": "\\n", "\r": "\\r", "\t": "\\t" };

const escapeControl = (char: string): string => {
  const code = char.charCodeAt(0);
  return (
    NAMED[char] ??
    (code < 0x100 ? `\\x${code.toString(16).padStart(2, "0")}` : `\\u${code.toString(16).padStart(4, "0")}`)
  );
};

/** Text for a terminal, every control character shown escaped: always one line, never a command. */
export function terminalText(text: string): string {
  return text.replace(CONTROL, escapeControl);
}

/** The same for text of several lines of our own making (an error with its hint): line breaks stay. */
export function terminalLines(text: string): string {
  return text.split("\n").map(terminalText).join("\n");
}

// JSON.stringify escapes C0 controls but not DEL, C1 or the bidirectional marks.
const JSON_UNESCAPED = /[\u007f-\u009f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]/g;

/** One JSON value on one line (`--json` output) with no raw control character: still valid JSON. */
export function jsonLine(value: unknown): string {
  return JSON.stringify(value).replace(
    JSON_UNESCAPED,
    (char) => `\\u${char.charCodeAt(0).toString(16).padStart(4, "0")}`,
  );
}

const HAS_CONTROL = new RegExp(CONTROL.source);

/** Whether the text holds a control character (a line break, an escape, a bidirectional mark). */
export const hasControl = (text: string): boolean => HAS_CONTROL.test(text);

/** yaml's strings, but one holding a control character as a JSON string (valid YAML): yaml's own quoting writes DEL, C1 and bidi marks raw. */
const inertStrings = (tags: Tags): Tags =>
  tags.map((tag) => {
    if (typeof tag !== "object" || tag.tag !== "tag:yaml.org,2002:str") return tag;
    const string = tag as ScalarTag;
    const inert: ScalarTag = {
      ...string,
      stringify: (item, ...rest) =>
        HAS_CONTROL.test(String(item.value)) ? jsonLine(String(item.value)) : (string.stringify?.(item, ...rest) ?? ""),
    };
    return inert;
  });

/**
 * YAML for a person to paste into a file, with no raw control character anywhere: `comment` as
 * comment lines before it, each one line of terminal text, and every string holding a control
 * character written escaped. It parses back to `value`, and only to it.
 */
export function yamlText(value: unknown, comment: readonly string[] = []): string {
  const document = new Document(value, { customTags: inertStrings });
  if (comment.length > 0) document.commentBefore = comment.map((line) => ` ${terminalText(line)}`).join("\n");
  return document.toString({ lineWidth: 0 });
}
