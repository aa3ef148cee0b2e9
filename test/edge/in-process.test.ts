// A run in another project than the process's cwd (its CommandIO's, the process left where it is)
// reads and shows that project's files, side by side with another.
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { CommandIO, runCli } from "../../src/commands/index.ts";

const dirs: string[] = [];
afterAll(() => Promise.all(dirs.map((dir) => rm(dir, { recursive: true, force: true }))));

async function projectWith(file: string, text: string): Promise<string> {
  const dir = await mkdtemp(path.join(os.tmpdir(), "agent-iac-inproc-"));
  dirs.push(dir);
  await writeFile(path.join(dir, "Pulumi.yaml"), "name: inproc\nruntime: nodejs\n");
  await mkdir(path.join(dir, "agents"));
  await writeFile(path.join(dir, "agents", file), text);
  return dir;
}

/** `agent-iac <args>` with `cwd` as the run's directory, nothing of the process changed. */
async function run(args: string[], cwd: string): Promise<{ code: number; stderr: string }> {
  let stderr = "";
  const io = new CommandIO(
    { stdout: { write: () => true }, stderr: { write: (text: string) => (stderr += text) }, env: {}, cwd },
    () => {},
  );
  const code = await runCli(args, io);
  return { code, stderr };
}

describe("in-process runs", () => {
  it("validate reads the run's project, says its paths from there, and leaves the process alone", async () => {
    const cwd = process.cwd();
    const env = process.env;
    const [broken, other] = await Promise.all([
      projectWith("bad.yaml", "key: [\n"),
      projectWith("odd.yaml", "key: [\n"),
    ]);
    // Side by side: each says its own file, relative to its own project.
    const [a, b] = await Promise.all([run(["validate"], broken), run(["validate"], other)]);
    expect(a.code).toBe(1);
    expect(a.stderr).toMatch(/^agents\/bad\.yaml:\d+:\d+: /);
    expect(b.code).toBe(1);
    expect(b.stderr).toMatch(/^agents\/odd\.yaml:\d+:\d+: /);
    expect(process.cwd()).toBe(cwd);
    expect(process.env).toBe(env);
  });
});
