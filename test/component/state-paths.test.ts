// The state `agent-iac start` writes names no path of the machine that deployed it: each resource's
// source position is relative to the project (the engine makes a file: URL relative; an ES module's
// frame used to reach it as `file:///<cwd>/file:/<absolute path>`), so a state moved to another
// machine or checkout reads the same.
import { readdir, readFile } from "node:fs/promises";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { LOCAL_PASSPHRASE, projectRoot } from "../../src/workspace/index.ts";
import { runCli } from "../helpers/cli.ts";
import { copyDevStack } from "../helpers/dev-address.ts";
import { type PulumiSandbox, projectCopy, pulumiSandbox } from "../helpers/pulumi.ts";

describe("the state written by start", { timeout: 300_000 }, () => {
  let sandbox: PulumiSandbox;
  let project: { dir: string; cleanup(): Promise<void> };
  beforeAll(async () => {
    sandbox = await pulumiSandbox();
    project = await projectCopy(path.join(projectRoot, "test", "fixtures", "agents-project"));
    await copyDevStack(project.dir, projectRoot);
  });
  afterAll(async () => {
    await project?.cleanup();
    await sandbox?.cleanup();
  });

  it("holds no absolute path of this machine: source positions are relative to the project", async () => {
    const env = {
      ...process.env,
      ...sandbox.env,
      AGENT_IAC_API_KEY: "sk-state-paths-5d1e8c",
      PULUMI_CONFIG_PASSPHRASE: LOCAL_PASSPHRASE,
    };
    const started = await runCli(["start", "--no-smoke"], { cwd: project.dir, env });
    expect(started.code, started.stderr).toBe(0);
    const entries = await readdir(sandbox.backendDir, { recursive: true, withFileTypes: true });
    const state = entries.find((entry) => entry.isFile() && entry.name === "dev.json");
    expect(state).toBeDefined();
    const text = await readFile(path.join(state?.parentPath ?? "", state?.name ?? ""), "utf8");
    const positions = [...text.matchAll(/"sourcePosition":\s*"([^"]+)"/g)].map((match) => match[1]);
    // Every agent resource has one, written by this package's code.
    expect(positions.filter((p) => /\/src\/(component|provider)\//.test(p ?? "")).length).toBeGreaterThan(0);
    for (const position of positions) expect(position).toMatch(/^project:\/\/\/(?!file:)/);
    expect(text).not.toContain(projectRoot);
    expect(text).not.toContain(project.dir);
  });
});
