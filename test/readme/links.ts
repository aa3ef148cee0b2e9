// The docs' link check: every relative link (and image) in the Markdown pages must lead to a file of
// the repository, and every anchor (`page.md#section`, `#section`) to a heading of that page as
// GitHub names it. Links to other sites are not followed.
import path from "node:path";
import { anchors } from "../../scripts/docs-markdown.ts";

export type Link = { line: number; target: string };
export type BrokenLink = { file: string; line: number; target: string; why: string };

const INLINE = /!?\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g;
const HTML = /<(?:a|img)\s[^>]*?(?:href|src)="([^"]+)"/g;

/** The links of a Markdown page, outside code blocks and code spans, with their lines. */
export function linksOf(markdown: string): Link[] {
  const links: Link[] = [];
  let fence: string | undefined;
  markdown.split("\n").forEach((raw, i) => {
    const marker = /^\s*(`{3,}|~{3,})/.exec(raw)?.[1];
    if (marker && (!fence || (marker[0] === fence[0] && marker.length >= fence.length))) {
      fence = fence ? undefined : marker;
      return;
    }
    if (fence) return;
    // Code spans become blanks of the same length, so a link around one (`[`x`](y)`) still reads.
    const line = raw.replace(/``[^`].*?``|`[^`]*`/g, (span) => " ".repeat(span.length));
    for (const match of [...line.matchAll(INLINE), ...line.matchAll(HTML)]) {
      links.push({ line: i + 1, target: match[1] ?? "" });
    }
  });
  return links;
}

/**
 * The broken links of `pages` (path → Markdown, paths relative to the repository), against the
 * repository's files (`files`, relative paths with `/`).
 */
export function brokenLinks(pages: ReadonlyMap<string, string>, files: ReadonlySet<string>): BrokenLink[] {
  const broken: BrokenLink[] = [];
  const anchorsOf = new Map<string, Set<string>>();
  const pageAnchors = (page: string) => {
    let found = anchorsOf.get(page);
    if (!found) {
      found = anchors(pages.get(page) ?? "");
      anchorsOf.set(page, found);
    }
    return found;
  };
  for (const [file, markdown] of pages) {
    for (const { line, target } of linksOf(markdown)) {
      if (/^[a-z][a-z0-9+.-]*:/i.test(target)) continue; // https:, mailto: …
      const fail = (why: string) => broken.push({ file, line, target, why });
      const [rawPath = "", anchor] = target.split("#", 2);
      const relative = decodeURI(rawPath);
      const resolved = relative
        ? path.posix.normalize(
            relative.startsWith("/") ? relative.slice(1) : path.posix.join(path.posix.dirname(file), relative),
          )
        : file;
      if (resolved.startsWith("../") || resolved === "..") {
        fail("leads outside the repository");
        continue;
      }
      const bare = resolved.replace(/\/$/, "");
      const isFile = files.has(bare);
      const isDirectory = [...files].some((f) => f.startsWith(`${bare}/`));
      if (!isFile && !isDirectory) {
        fail("no such file in the repository");
        continue;
      }
      if (anchor === undefined) continue;
      if (!bare.endsWith(".md") || !pages.has(bare)) {
        fail(`an anchor into ${bare}, which is not a checked Markdown page`);
        continue;
      }
      if (!pageAnchors(bare).has(decodeURIComponent(anchor))) fail(`${bare} has no heading with the anchor #${anchor}`);
    }
  }
  return broken;
}
