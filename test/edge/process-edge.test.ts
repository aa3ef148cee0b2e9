// The lint of the command edge: no process.env or process.cwd() below it. A new file that reads the
// process fails here by name; each allowed one says why (the process it runs in is its own).
import { readdir, readFile } from "node:fs/promises";
import path from "node:path";
import { describe, expect, it } from "vitest";

const SRC = path.join(import.meta.dirname, "..", "..", "src");

/** Files that may read the process, and why. */
const ALLOWED: Record<string, string> = {
  "program.ts": "the Pulumi program's own process (started by the CLI in the project)",
  "provider/index.ts": "the dynamic provider's methods run in the provider process, whose cwd is the project",
  "provider/create.ts": "the dynamic provider's process: its environment is the run's",
  "component/index.ts": "the component provider's own process, started in the program's directory",
};
// src/cli.ts (the process entry) and src/commands (the command edge) may read it.
const EDGE = ["cli.ts", "commands/"];

async function sources(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { withFileTypes: true, recursive: true });
  return entries
    .filter((entry) => entry.isFile() && entry.name.endsWith(".ts"))
    .map((entry) => path.relative(SRC, path.join(entry.parentPath, entry.name)).split(path.sep).join("/"));
}

describe("the command edge", () => {
  it("finds process.env and process.cwd() only at the edge and in the allowed process entries", async () => {
    const offenders: string[] = [];
    for (const file of await sources(SRC)) {
      if (EDGE.some((edge) => file.startsWith(edge)) || Object.hasOwn(ALLOWED, file)) continue;
      const text = await readFile(path.join(SRC, file), "utf8");
      text.split("\n").forEach((line, index) => {
        if (/process\.env|process\.cwd\(\)/.test(line)) offenders.push(`src/${file}:${index + 1}: ${line.trim()}`);
      });
    }
    expect(offenders).toEqual([]);
  });

  it("each allowed file still reads the process (an entry that no longer does leaves the list)", async () => {
    for (const file of Object.keys(ALLOWED)) {
      const text = await readFile(path.join(SRC, file), "utf8");
      expect(/process\.env|process\.cwd\(\)/.test(text), file).toBe(true);
    }
  });
});
