// The foundation: the real Pulumi CLI (built by scripts/ensure-pulumi), its Node.js language host,
// the dynamic-provider plugin and this project's Node run a dynamic-resource program end to end.
import { readFile } from "node:fs/promises";
import path from "node:path";
import * as pulumi from "@pulumi/pulumi";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ensurePulumi, projectRoot, pulumiCli, toolchainPath } from "../../../src/workspace/index.ts";
import { type PulumiSandbox, projectCopy, pulumiSandbox } from "../../helpers/pulumi.ts";

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
    const command = await pulumiCli();
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

  it("gives the toolchain in the CLI's PATH and leaves the process's PATH alone", async () => {
    const before = process.env.PATH;
    const dir = await ensurePulumi();
    expect(process.env.PATH).toBe(before);
    // A run's own PATH, without the toolchain.
    const entries = (await toolchainPath("/usr/bin:/bin")).split(path.delimiter);
    expect(entries).toContain(path.dirname(process.execPath));
    if (dir) expect(entries[0]).toBe(dir);
    expect(entries.slice(-2)).toEqual(["/usr/bin", "/bin"]);
    // Idempotent: a PATH that has it already gets nothing more.
    const once = await toolchainPath("/usr/bin:/bin");
    expect(await toolchainPath(once)).toBe(once);
  });

  it("runs on Node 22 or later", () => {
    expect(Number(process.versions.node.split(".")[0])).toBeGreaterThanOrEqual(22);
  });
});
