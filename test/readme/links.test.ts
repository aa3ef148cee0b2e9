// Every relative link and anchor of the documentation leads somewhere in the repository: a page
// moved or a heading renamed without its links fails `npm test`.
import { execFileSync } from "node:child_process";
import { readFile } from "node:fs/promises";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { brokenLinks, linksOf } from "./links.ts";

const ROOT = path.resolve(import.meta.dirname, "../..");

/** The repository's files as a clone would have them (tracked, or new and not ignored). */
function repositoryFiles(): Set<string> {
  const out = execFileSync("git", ["ls-files", "--cached", "--others", "--exclude-standard"], {
    cwd: ROOT,
    encoding: "utf8",
  });
  return new Set(out.split("\n").filter(Boolean));
}

/** The documentation: README.md, every page of docs/, and the READMEs under src/. */
function documentationPages(files: Set<string>): string[] {
  return [...files].filter(
    (file) => file === "README.md" || /^docs\/.*\.md$/.test(file) || /^src\/(.*\/)?README\.md$/.test(file),
  );
}

describe("the documentation's links", () => {
  it("every relative link and anchor in README.md, docs/ and src/**/README.md leads somewhere", async () => {
    const files = repositoryFiles();
    const pages = documentationPages(files);
    expect(pages).toEqual(expect.arrayContaining(["README.md", "docs/cli.md", "docs/architecture.md"]));
    const text = new Map(
      await Promise.all(pages.map(async (p) => [p, await readFile(path.join(ROOT, p), "utf8")] as const)),
    );
    const links = [...text.values()].flatMap(linksOf);
    expect(links.length).toBeGreaterThan(50);
    const broken = brokenLinks(text, files).map((b) => `${b.file}:${b.line}: ${b.target}: ${b.why}`);
    expect(broken).toEqual([]);
  });

  it("reports a missing file, a missing anchor and a link out of the repository, and follows none in code", () => {
    const pages = new Map([
      [
        "docs/a.md",
        [
          "# Title",
          "## Old versus new (`smoke --compare`)",
          "[ok](b.md#section-two) [ok](#old-versus-new-smoke---compare) [ok](../src/) ![ok](pic.png)",
          "[gone](c.md) [no anchor](b.md#section-three) [out](../../shared/x.md) [web](https://example.com/x)",
          "`[in code](nowhere.md)`",
          "```",
          "[in a block](nowhere.md)",
          "```",
          '<a href="b.md#nope">html</a>',
        ].join("\n"),
      ],
      ["docs/b.md", "# B\n\n## Section two\n"],
    ]);
    const files = new Set(["docs/a.md", "docs/b.md", "docs/pic.png", "src/cli.ts"]);
    expect(brokenLinks(pages, files).map(({ line, target, why }) => ({ line, target, why }))).toEqual([
      { line: 4, target: "c.md", why: "no such file in the repository" },
      { line: 4, target: "b.md#section-three", why: "docs/b.md has no heading with the anchor #section-three" },
      { line: 4, target: "../../shared/x.md", why: "leads outside the repository" },
      { line: 9, target: "b.md#nope", why: "docs/b.md has no heading with the anchor #nope" },
    ]);
  });
});
