// The leak check of the run's teardown (global-setup.ts) finds what it must: a process carrying the
// run's mark, with the port it listens on, and nothing once that process is gone.
import { spawn } from "node:child_process";
import { once } from "node:events";
import { describe, expect, it } from "vitest";
import { describeLeaks, markedProcesses, RUN_MARK } from "./helpers/leaks.ts";

describe("the run's leak check", () => {
  it("the run's environment carries the mark its processes inherit", () => {
    expect(process.env[RUN_MARK]).toMatch(/^[0-9a-f-]{36}$/);
  });

  it("names a marked process that listens, with its address, and forgets it once it exits", async () => {
    const mark = `leak-test-${process.pid}-${Date.now()}`;
    const child = spawn(
      process.execPath,
      ["-e", 'const s=require("node:net").createServer().listen(0,"127.0.0.1",()=>console.log(s.address().port))'],
      { env: { ...process.env, [RUN_MARK]: mark }, stdio: ["ignore", "pipe", "inherit"] },
    );
    try {
      const [chunk] = (await once(child.stdout, "data")) as [Buffer];
      const port = Number(String(chunk).trim());
      const found = await markedProcesses(mark);
      expect(found.map((p) => p.pid)).toEqual([child.pid]);
      expect(found[0]?.listening).toEqual([`127.0.0.1:${port}`]);
      // Where it runs too: a test project's copy names the test that left it.
      expect(describeLeaks(found)).toContain(`listening on 127.0.0.1:${port}: ${process.execPath} -e`);
      expect(describeLeaks(found)).toContain(`(in ${process.cwd()})`);
      expect(await markedProcesses(`${mark}-other`)).toEqual([]);
    } finally {
      child.kill("SIGTERM");
      await once(child, "exit");
    }
    expect(await markedProcesses(mark)).toEqual([]);
  });
});
