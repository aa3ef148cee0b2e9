// Each seam of src/pulumi-seams against the installed @pulumi/pulumi, the real SDK: a release that
// changes a member a seam relies on fails here. The Pulumi CLI is stood in for by a recorder of the
// commands the SDK asks it to run (the SDK's PulumiCommand is its one way to run the CLI), so what
// each seam saves is counted in CLI runs.
import { mkdtempSync, rmSync } from "node:fs";
import { createRequire } from "node:module";
import os from "node:os";
import path from "node:path";
import * as pulumi from "@pulumi/pulumi";
import { afterAll, describe, expect, it } from "vitest";
import {
  capturePromiseStacks,
  FRAME_POSITION,
  readFileUrlFrames,
  runPulumi,
  stackWithoutSelect,
  upWithoutReads,
} from "../src/pulumi-seams/index.ts";

const { LocalWorkspace, Stack } = pulumi.automation;
/** `Resource.callsites` (private in the SDK's types): the frames a resource's source position is taken from. */
const callsites = () => (pulumi.Resource as unknown as { callsites(): { file?: string }[] }).callsites();
const workDir = mkdtempSync(path.join(os.tmpdir(), "pulumi-seams-"));
afterAll(() => rmSync(workDir, { recursive: true, force: true }));

/** A PulumiCommand that records each run (args, cwd, env) and answers it with `stdout`. */
function recordingCommand(stdout = "{}") {
  const runs: { args: string[]; cwd: string; env: Record<string, string> }[] = [];
  const command = {
    command: "pulumi",
    version: "3.259.0",
    run: async (args: string[], cwd: string, env: Record<string, string>) => {
      runs.push({ args, cwd, env });
      return { stdout, stderr: "", code: 0 };
    },
  };
  return { runs, command: command as unknown as pulumi.automation.PulumiCommand };
}

async function workspaceWith(stdout?: string) {
  const { runs, command } = recordingCommand(stdout);
  const workspace = await LocalWorkspace.create({ workDir, pulumiCommand: command, envVars: { MARK: "1" } });
  return { runs, workspace };
}

describe("readFileUrlFrames: Resource.framePositionRegExp", () => {
  it("is the SDK's static regexp, with file, line and column groups, read by Resource.callsites", () => {
    const sdk = (pulumi.Resource as unknown as { framePositionRegExp: unknown }).framePositionRegExp;
    expect(sdk).toBeInstanceOf(RegExp);
    const groups = (sdk as RegExp).exec("    at new Agent (/p/src/a.ts:12:34)")?.groups;
    expect(groups).toEqual({ file: "/p/src/a.ts", line: "12", column: "34" });
    expect(String((pulumi.Resource as unknown as { callsites: unknown }).callsites)).toContain(
      "Resource.framePositionRegExp.exec(frame)",
    );
  });

  it("reads an ES module's file: URL frame as a path once set", () => {
    const frame = "    at new Agent (file:///p/src/a.ts:12:34)";
    expect(FRAME_POSITION.exec(frame)?.groups).toEqual({ file: "/p/src/a.ts", line: "12", column: "34" });
    readFileUrlFrames();
    expect((pulumi.Resource as unknown as { framePositionRegExp: RegExp }).framePositionRegExp).toBe(FRAME_POSITION);
    // What the state records for this test's own frames: paths, never file: URLs.
    const files = callsites().flatMap((site) => (site.file ? [site.file] : []));
    expect(files.length).toBeGreaterThan(0);
    expect(files.filter((file) => file.startsWith("file:"))).toEqual([]);
  });
});

describe("stackWithoutSelect: Stack.select runs only workspace.selectStack", () => {
  it("the SDK's Stack.select runs `pulumi stack select` through the workspace", async () => {
    const { runs, workspace } = await workspaceWith();
    await Stack.select("dev", workspace);
    expect(runs.map((run) => run.args.slice(0, 4))).toEqual([["stack", "select", "--stack", "dev"]]);
  });

  it("the seam's stack runs no CLI at all, and names its stack", async () => {
    const { runs, workspace } = await workspaceWith();
    const stack = await stackWithoutSelect("dev", workspace);
    expect(stack.name).toBe("dev");
    expect(runs).toEqual([]);
  });
});

describe("upWithoutReads: Stack.prototype.up reads this.outputs() and this.info() after the update", () => {
  it("the SDK's up runs three CLI reads after the update", async () => {
    const { runs, workspace } = await workspaceWith();
    const stack = await stackWithoutSelect("dev", workspace);
    await stack.up();
    expect(runs.map((run) => run.args.slice(0, 2))).toEqual([
      ["up", "--yes"],
      ["stack", "output"],
      ["stack", "output"],
      ["stack", "history"],
    ]);
  });

  it("the seam runs the update alone and returns its output", async () => {
    const { runs, workspace } = await workspaceWith("updated");
    const events: unknown[] = [];
    const result = await upWithoutReads(await stackWithoutSelect("dev", workspace), {
      onEvent: (event) => events.push(event),
    });
    expect(runs.map((run) => run.args[0])).toEqual(["up"]);
    expect(runs[0]?.args).toEqual(expect.arrayContaining(["--yes", "--stack", "dev", "--event-log"]));
    expect(result.stdout).toBe("updated");
  });
});

describe("runPulumi: LocalWorkspace.pulumiCommand.run(args, cwd, env)", () => {
  it("is PulumiCommand's run with args, cwd and env first", () => {
    const { run } = pulumi.automation.PulumiCommand.prototype as unknown as { run: unknown };
    expect(typeof run).toBe("function");
    expect(String(run)).toMatch(/^run\(args, cwd, additionalEnv\b/);
  });

  it("runs in the workspace's directory with its environment", async () => {
    const { runs, workspace } = await workspaceWith('{"version":3}');
    const { stdout } = await runPulumi(workspace, ["stack", "export", "--stack", "dev"]);
    expect(stdout).toBe('{"version":3}');
    expect(runs).toEqual([{ args: ["stack", "export", "--stack", "dev"], cwd: workDir, env: { MARK: "1" } }]);
  });
});

describe("capturePromiseStacks: runtime/debuggable's debuggablePromise", () => {
  const debuggable = createRequire(import.meta.url)("@pulumi/pulumi/runtime/debuggable") as {
    debuggablePromise: (promise: Promise<unknown>, context: string) => Promise<unknown>;
  };
  const stackOf = (promise: Promise<unknown>) => (promise as unknown as { _debugStackTrace?: string })._debugStackTrace;

  it("is called by the SDK's runtime through its module's exports, where the seam wraps it", () => {
    const resource = createRequire(import.meta.url)("@pulumi/pulumi/runtime/resource.js");
    expect(typeof resource.registerResource).toBe("function");
    expect(String(resource.registerResource)).toContain("debuggable_1.debuggablePromise(");
  });

  it("captures a stack per promise; with the seam off, only the SDK's capture is empty", async () => {
    // An inline program that ran earlier in this worker set the capture for its own run: start from on.
    capturePromiseStacks(true);
    const captured = Promise.resolve(1);
    await debuggable.debuggablePromise(captured, "with a stack");
    expect(stackOf(captured)).toMatch(/\n\s+at /);

    capturePromiseStacks(false);
    try {
      const quiet = Promise.resolve(2);
      await debuggable.debuggablePromise(quiet, "without");
      expect(stackOf(quiet)).not.toMatch(/\n\s+at /);
      expect(new Error("another").stack).toMatch(/\n\s+at /); // the process keeps its stacks
    } finally {
      capturePromiseStacks(true);
    }
    const again = Promise.resolve(3);
    await debuggable.debuggablePromise(again, "asked again");
    expect(stackOf(again)).toMatch(/\n\s+at /);
  });
});
