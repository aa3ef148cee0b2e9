// The git a run starts (a plan's --base, judge check --base, the judge cache's tracked-file check)
// runs with the run's environment, not the process's: a run whose environment names a repository
// (GIT_DIR) reads that one, wherever the process is.
import { execFileSync } from "node:child_process";
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { projectContext } from "../../src/settings/index.ts";
import { baselineChange } from "../../src/usecases/drift.ts";
import { stackSettingsAgainst } from "../../src/usecases/session.ts";

const dirs: string[] = [];
const temp = async () => {
  const dir = await mkdtemp(path.join(os.tmpdir(), "agent-iac-child-env-"));
  dirs.push(dir);
  return dir;
};
afterAll(() => Promise.all(dirs.map((dir) => rm(dir, { recursive: true, force: true }))));

describe("git runs with the run's environment", () => {
  it("reads the repository the run's GIT_DIR names, and none without it", async () => {
    // A repository elsewhere, with the stack's files and a baseline committed.
    const repo = await temp();
    const git = (...args: string[]) =>
      execFileSync("git", ["-c", "user.name=t", "-c", "user.email=t@example.com", ...args], { cwd: repo });
    git("init", "-q");
    await writeFile(path.join(repo, "Pulumi.yaml"), "name: child-env\nruntime: nodejs\n");
    await writeFile(path.join(repo, "Pulumi.dev.yaml"), "config:\n  agents:baseUrl: http://127.0.0.1:9\n");
    await mkdir(path.join(repo, "baselines"));
    await writeFile(path.join(repo, "baselines", "dev.json"), "{}\n");
    git("add", ".");
    git("commit", "-q", "-m", "base");
    // The project directory is no repository: only the run's environment points git at one.
    const dir = await temp();
    const env = { PATH: process.env.PATH, GIT_DIR: path.join(repo, ".git") };
    const named = projectContext({ cwd: dir, env, processEnv: process.env });
    const against = await stackSettingsAgainst("dev", "HEAD", named);
    expect(against.settings.base).toBe("HEAD");
    expect(await baselineChange("dev", "HEAD", named)).toMatchObject({ change: "removed" });
    const none = projectContext({ cwd: dir, env: { PATH: process.env.PATH }, processEnv: process.env });
    await expect(stackSettingsAgainst("dev", "HEAD", none)).rejects.toThrow(/not a commit of this repository/);
    expect(await baselineChange("dev", "HEAD", none)).toBeUndefined();
  });
});
