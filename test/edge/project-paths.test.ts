// The files a run writes and reads by a relative name are its project's, not the process's working
// directory: an in-process run (a test, side by side with others) names its own project directory.
import { existsSync } from "node:fs";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { writeJsonFile } from "../../src/report/index.ts";
import { projectContext } from "../../src/settings/index.ts";

const dirs: string[] = [];
const temp = async () => {
  const dir = await mkdtemp(path.join(os.tmpdir(), "agent-iac-edge-"));
  dirs.push(dir);
  return dir;
};
afterAll(() => Promise.all(dirs.map((dir) => rm(dir, { recursive: true, force: true }))));

describe("paths of the run resolve against the project", () => {
  it("writes a bare-named data file under the project's reports/, never the process's", async () => {
    const project = await temp();
    const shown = await writeJsonFile("edge-probe-old-versions.json", { a: "v1" }, project);
    expect(shown).toBe(path.join("reports", "edge-probe-old-versions.json"));
    expect(JSON.parse(await readFile(path.join(project, shown), "utf8"))).toEqual({ a: "v1" });
    expect(existsSync(path.join(process.cwd(), shown))).toBe(false);
  });

  it("resolves a flag's relative path against the project's directory", async () => {
    const dir = await temp();
    const project = projectContext({ cwd: dir, env: {} });
    expect(project.path("recordings")).toBe(path.join(dir, "recordings"));
    expect(project.path("/abs/old.json")).toBe("/abs/old.json");
    expect(project.path(undefined)).toBeUndefined();
    expect(project.stateDir.startsWith(dir)).toBe(true);
  });

  it("gives a child process the run's environment, each variable only the process has unset", () => {
    const processEnv = { HOME: "/home/process", AGENT_IAC_API_KEY: "process-key", SHARED: "process" };
    const project = projectContext({ cwd: "/p", env: { SHARED: "run", RUN_ONLY: "1" }, processEnv });
    // Unset, not absent: a spawn that puts the process's environment first is overridden by these.
    expect(project.childEnv).toEqual({ HOME: undefined, AGENT_IAC_API_KEY: undefined, SHARED: "run", RUN_ONLY: "1" });
    expect(Object.keys(project.childEnv).sort()).toEqual(["AGENT_IAC_API_KEY", "HOME", "RUN_ONLY", "SHARED"]);
    expect({ ...processEnv, ...project.childEnv }).toEqual(project.childEnv);
    // The process's own run (env is the process's): nothing to unset.
    expect(projectContext({ cwd: "/p", env: processEnv, processEnv }).childEnv).toEqual(processEnv);
  });
});
