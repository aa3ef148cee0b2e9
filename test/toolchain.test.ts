// The foundation: the real Pulumi CLI (built by scripts/ensure-pulumi), its Node.js language host,
// the dynamic-provider plugin and this project's Node run a dynamic-resource program end to end.
import { readFile } from "node:fs/promises";
import path from "node:path";
import * as pulumi from "@pulumi/pulumi";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ensurePulumi, projectRoot } from "../src/workspace/index.ts";
import { type PulumiSandbox, projectCopy, pulumiSandbox } from "./helpers/pulumi.ts";

describe("toolchain", () => {
  let sandbox: PulumiSandbox;
  let project: { dir: string; cleanup(): Promise<void> };

  beforeAll(async () => {
    sandbox = await pulumiSandbox();
    project = await projectCopy(path.join(projectRoot, "test", "fixtures", "dynamic-project"));
  });
  afterAll(async () => {
    await project?.cleanup();
    await sandbox?.cleanup();
  });

  it("runs up, a no-change preview and destroy of a dynamic-resource program with the real CLI", async () => {
    const command = await pulumi.automation.PulumiCommand.get();
    const version = command.version?.toString();
    // Which Node.js language host ran: a change of host (official module or the project's own
    // minimal one) must never be silent.
    const dir = await ensurePulumi();
    const host = dir
      ? (await readFile(path.join(dir, "LANGUAGE-HOST"), "utf8")).trim()
      : "pulumi-language-nodejs from PATH";
    console.log(`Pulumi CLI ${version} (${command.command}) on Node ${process.version}; language host: ${host}`);
    expect(host).toMatch(
      /^(the official pulumi-language-nodejs at [0-9a-f]{40}|agent-iac's minimal Node\.js language host .*|pulumi-language-nodejs from PATH)$/,
    );
    expect(version).toMatch(/^3\.\d+\.\d+$/);

    const stack = await pulumi.automation.LocalWorkspace.createOrSelectStack(
      { stackName: "toolchain", workDir: project.dir },
      { envVars: sandbox.env, pulumiCommand: command },
    );
    const up = await stack.up();
    expect(up.summary.result).toBe("succeeded");
    expect(up.summary.resourceChanges?.create).toBe(3);
    expect(up.outputs.serials?.value).toEqual({ first: "one-root", second: "two-one-root" });

    // Fails (throws) when the preview finds any change.
    const preview = await stack.preview({ expectNoChanges: true });
    expect(preview.changeSummary.same).toBe(3);

    const destroy = await stack.destroy();
    expect(destroy.summary.resourceChanges?.delete).toBe(3);
  });

  it("puts the CLI on the PATH in force at each call, not only the first: an in-process run swaps process.env", async () => {
    const dir = await ensurePulumi();
    const saved = process.env;
    // A run's own environment, made after the first call, without the toolchain on its PATH.
    process.env = { ...saved, PATH: "/usr/bin:/bin" };
    try {
      expect(await ensurePulumi()).toBe(dir);
      const entries = (process.env.PATH ?? "").split(path.delimiter);
      expect(entries).toContain(path.dirname(process.execPath));
      if (dir) expect(entries[0]).toBe(dir);
      expect(entries.slice(-2)).toEqual(["/usr/bin", "/bin"]);
      // Idempotent: a second call adds nothing.
      const once = process.env.PATH;
      await ensurePulumi();
      expect(process.env.PATH).toBe(once);
    } finally {
      process.env = saved;
    }
  });

  it("runs on Node 22 or later", () => {
    expect(Number(process.versions.node.split(".")[0])).toBeGreaterThanOrEqual(22);
  });
});
