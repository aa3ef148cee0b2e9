// Pulumi's own failures, typed: a stack the backend does not hold is a StackNotFoundError with its
// name (recognised by the Automation API's StackNotFoundError, not by the CLI's wording), and a
// locked stack is a StackLockedError with the recovery. The real Pulumi CLI on a temp file backend.
import { mkdir, writeFile } from "node:fs/promises";
import path from "node:path";
import * as pulumi from "@pulumi/pulumi";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { cliOutcome } from "../../src/commands/errors.ts";
import {
  isLockError,
  lockedStackError,
  openStack,
  projectRoot,
  pulumiCli,
  StackLockedError,
  StackNotFoundError,
  stackError,
} from "../../src/workspace/index.ts";
import { runCli } from "../helpers/cli.ts";
import { type PulumiSandbox, projectCopy, pulumiSandbox } from "../helpers/pulumi.ts";

describe("Pulumi's stack errors, typed", () => {
  let sandbox: PulumiSandbox;
  let project: { dir: string; cleanup(): Promise<void> };
  beforeAll(async () => {
    sandbox = await pulumiSandbox();
    // Any project: only the backend's stacks and locks are used (the program never runs).
    project = await projectCopy(path.join(projectRoot, "test", "fixtures", "dynamic-project"));
  });
  afterAll(async () => {
    await project?.cleanup();
    await sandbox?.cleanup();
  });

  it("a missing stack is a StackNotFoundError naming it, with the safe way to create it; nothing is created", async () => {
    let thrown: unknown;
    try {
      // Opening runs no CLI command: the first one that names the stack finds it missing.
      const stack = await openStack({ stackName: "nowhere", workDir: project.dir, create: false, env: sandbox.env });
      await stack.getAllConfig();
    } catch (error) {
      thrown = stackError(error, "nowhere");
    }
    expect(thrown).toBeInstanceOf(StackNotFoundError);
    const error = thrown as StackNotFoundError;
    expect(error).toMatchObject({ code: "AGENT_IAC_STACK_NOT_FOUND", stackName: "nowhere" });
    expect(error.cause).toBeInstanceOf(pulumi.automation.StackNotFoundError);
    expect(cliOutcome(error, {})).toEqual({
      exitCode: 2,
      message: 'there is no stack "nowhere" on this backend',
      hint: expect.stringContaining("pulumi stack init nowhere"),
    });
    const stacks = await pulumi.automation.LocalWorkspace.create({
      workDir: project.dir,
      envVars: sandbox.env,
      pulumiCommand: await pulumiCli(),
    });
    expect((await stacks.listStacks()).map((s) => s.name)).not.toContain("nowhere");
  });

  it("reading a stack runs no `pulumi stack select`: the stack the user selected stays selected", async () => {
    await openStack({ stackName: "other", workDir: project.dir, env: sandbox.env });
    const chosen = await openStack({ stackName: "chosen", workDir: project.dir, env: sandbox.env });
    await chosen.setConfig("agents:baseUrl", { value: "http://127.0.0.1:9" });
    expect((await chosen.workspace.stack())?.name).toBe("chosen");
    const other = await openStack({ stackName: "other", workDir: project.dir, create: false, env: sandbox.env });
    expect(await other.getAllConfig()).toEqual({});
    expect((await other.exportStack()).deployment).toBeDefined();
    expect((await chosen.workspace.stack())?.name).toBe("chosen");
    // The config read is the named stack's, not the selected one's.
    expect((await chosen.getAllConfig())["agents:baseUrl"]?.value).toBe("http://127.0.0.1:9");
  });

  it("the CLI says a missing stack with exit 2, its name and how to create it", async () => {
    const missing = await runCli(["plan", "--stack", "nowhere"], {
      cwd: project.dir,
      env: { ...process.env, ...sandbox.env },
    });
    expect(missing.code).toBe(2);
    expect(missing.stderr).toMatch(/^agent-iac plan: there is no stack "nowhere" on this backend\n\ncreate it with /);
    expect(missing.stderr).toContain("pulumi stack init nowhere --secrets-provider");
  });

  it("a stack held by a lock is a StackLockedError with the recovery; other failures are not", async () => {
    const stack = await openStack({ stackName: "held", workDir: project.dir, env: sandbox.env });
    const projectName = (await stack.workspace.projectSettings()).name;
    const locks = path.join(sandbox.backendDir, ".pulumi", "locks", "organization", projectName, "held");
    await mkdir(locks, { recursive: true });
    await writeFile(
      path.join(locks, "killed.json"),
      JSON.stringify({ pid: 1, username: "ci", hostname: "runner", timestamp: new Date() }),
    );
    let thrown: unknown;
    try {
      await stack.refresh();
    } catch (error) {
      thrown = error;
    }
    expect(isLockError(thrown)).toBe(true);
    const locked = lockedStackError(thrown, "held", sandbox.env, "npm start");
    expect(locked).toBeInstanceOf(StackLockedError);
    expect(locked).toMatchObject({ code: "AGENT_IAC_STACK_LOCKED", stackName: "held", cause: thrown });
    expect(cliOutcome(locked as StackLockedError, {})).toMatchObject({
      exitCode: 3,
      message: expect.stringMatching(/^stack held is locked: /),
      hint: expect.stringContaining("pulumi cancel --stack held --yes\n  npm start"),
    });
    expect(lockedStackError(new Error("stack is currently locked"), "held", sandbox.env, "npm start")).toBeUndefined();
  });
});
