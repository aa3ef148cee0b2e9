// The process's signals have one owner: src/cli.ts, the process entry, hands them to the run's
// lifecycle (src/commands/lifecycle.ts); no other file in src/ registers a SIGINT or SIGTERM
// handler (each did its own before, with different exits).
import { readdir, readFile } from "node:fs/promises";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { projectRoot } from "../../src/workspace/index.ts";

describe("signal handlers", () => {
  it("are registered in one place, src/cli.ts", async () => {
    const src = path.join(projectRoot, "src");
    const files = (await readdir(src, { recursive: true })).filter((f) => f.endsWith(".ts"));
    const handlers = /process\.(on|once|addListener|prependListener)\(\s*["'`](SIGINT|SIGTERM)/;
    const registering: string[] = [];
    for (const file of files) {
      if (handlers.test(await readFile(path.join(src, file), "utf8"))) registering.push(file);
    }
    expect(registering).toEqual(["cli.ts"]);
  });
});
