// The README's "How it works" map names every folder of src/ and says where a new output format and
// a new command go, so the map cannot silently fall behind the code.
import { readdir, readFile } from "node:fs/promises";
import path from "node:path";
import { describe, expect, it } from "vitest";

const ROOT = path.resolve(import.meta.dirname, "../..");

describe("README: How it works", () => {
  it("shows every folder of src/ and where a new output format or command goes", async () => {
    const readme = await readFile(path.join(ROOT, "README.md"), "utf8");
    const start = readme.indexOf("## How it works");
    const section = readme.slice(start, readme.indexOf("\n## ", start + 1));
    const map = section.slice(section.indexOf("```"), section.indexOf("```", section.indexOf("```") + 3));
    const folders = (await readdir(path.join(ROOT, "src"), { withFileTypes: true }))
      .filter((entry) => entry.isDirectory())
      .map((entry) => `src/${entry.name}`);
    expect(folders.length).toBeGreaterThan(10);
    for (const folder of folders) expect(map, folder).toContain(folder);
    expect(section).toMatch(/\*\*A new output format\*\* is a renderer in `src\/report`/);
    expect(section).toMatch(/\*\*A new command\*\* is one file in `src\/commands\/`/);
  });
});
