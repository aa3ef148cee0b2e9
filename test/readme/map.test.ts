// The architecture page's map (docs/architecture.md, "How it works") names every folder of src/ and
// says where a new output format, command and expectation go, so the map cannot silently fall
// behind the code.
import { readdir, readFile } from "node:fs/promises";
import path from "node:path";
import { describe, expect, it } from "vitest";

const ROOT = path.resolve(import.meta.dirname, "../..");

describe("docs/architecture.md: How it works", () => {
  it("shows every folder of src/ and where a new output format, command or expectation goes", async () => {
    const page = await readFile(path.join(ROOT, "docs", "architecture.md"), "utf8");
    const start = page.indexOf("## How it works");
    expect(start).toBeGreaterThanOrEqual(0);
    const section = page.slice(start, page.indexOf("\n## ", start + 1));
    const map = section.slice(section.indexOf("```"), section.indexOf("```", section.indexOf("```") + 3));
    const folders = (await readdir(path.join(ROOT, "src"), { withFileTypes: true }))
      .filter((entry) => entry.isDirectory())
      .map((entry) => `src/${entry.name}`);
    expect(folders.length).toBeGreaterThan(10);
    for (const folder of folders) expect(map, folder).toContain(folder);
    expect(section).toMatch(/\*\*A new output format\*\* is a renderer in `src\/report`/);
    expect(section).toMatch(/\*\*A new command\*\* is an adapter in `src\/commands\/`/);
    expect(section).toMatch(/\*\*A new expectation\*\* is a field of `expectations` in `src\/definitions\/schema\.ts`/);
  });

  it("is one link from the README", async () => {
    const readme = await readFile(path.join(ROOT, "README.md"), "utf8");
    expect(readme).toContain("](docs/architecture.md#how-it-works)");
  });
});
