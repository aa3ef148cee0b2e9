// --debug is carried by the run's IO and environment (which the Pulumi program inherits), never
// written into the process's environment: in-process runs side by side keep their own.
import { mkdtemp, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { CommandIO, runCli } from "../../src/commands/index.ts";

const dirs: string[] = [];
afterAll(() => Promise.all(dirs.map((dir) => rm(dir, { recursive: true, force: true }))));

const quietIO = async (env: NodeJS.ProcessEnv) => {
  const cwd = await mkdtemp(path.join(os.tmpdir(), "agent-iac-debug-"));
  dirs.push(cwd);
  const sink = { write: () => true };
  return new CommandIO({ stdout: sink, stderr: sink, env, cwd }, () => {});
};

describe("the debug flag", () => {
  it("--debug sets AGENT_IAC_DEBUG in the run's environment and project, not the process's", async () => {
    const before = process.env.AGENT_IAC_DEBUG;
    const io = await quietIO({});
    expect(await runCli(["--debug", "help"], io)).toBe(0);
    expect(io.debug).toBe(true);
    expect(io.env.AGENT_IAC_DEBUG).toBe("1");
    expect(io.project.env.AGENT_IAC_DEBUG).toBe("1");
    expect(process.env.AGENT_IAC_DEBUG).toBe(before);
    // A run beside it, without the flag, is not in debug.
    const other = await quietIO({});
    expect(await runCli(["help"], other)).toBe(0);
    expect(other.debug).toBe(false);
    expect(other.env.AGENT_IAC_DEBUG).toBeUndefined();
  });

  it("AGENT_IAC_DEBUG=1 in the run's environment is debug", async () => {
    const io = await quietIO({ AGENT_IAC_DEBUG: "1" });
    expect(io.debug).toBe(true);
  });
});
