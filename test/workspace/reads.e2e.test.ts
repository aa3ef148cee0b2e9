// The cheaper stack reads (src/settings/plain-config.ts, src/workspace/reads.ts) against what the Automation API's own reads give,
// on the real Pulumi CLI and a temp file backend: the config read from the files is exactly
// `pulumi config --json`'s wherever it is used, and left to the CLI wherever the files cannot say;
// the state exported without --show-secrets is the same state, its secrets still encrypted.
import { readFile, writeFile } from "node:fs/promises";
import path from "node:path";
import * as pulumi from "@pulumi/pulumi";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { plainStackConfig } from "../../src/settings/index.ts";
import {
  exportState,
  openStack,
  projectRoot,
  type Stack,
  StackNotFoundError,
  stackError,
} from "../../src/workspace/index.ts";
import { type PulumiSandbox, projectCopy, pulumiSandbox } from "../helpers/pulumi.ts";

const PROJECT = [
  "name: readsproject",
  "runtime: nodejs",
  "config:",
  "  readsproject:declared:",
  "    type: string",
  '    default: "from the project"',
  "  shorthand: 7",
  "  readsproject:overridden:",
  "    type: string",
  "    default: project",
  "",
].join("\n");

describe("stack reads that cost fewer Pulumi CLI runs", () => {
  let sandbox: PulumiSandbox;
  let project: { dir: string; cleanup(): Promise<void> };
  let stack: Stack;
  const stackFile = (text: string) => writeFile(path.join(project.dir, "Pulumi.reads.yaml"), text);

  beforeAll(async () => {
    sandbox = await pulumiSandbox();
    project = await projectCopy(path.join(projectRoot, "test", "fixtures", "dynamic-project"));
    await writeFile(path.join(project.dir, "Pulumi.yaml"), PROJECT);
    stack = await openStack({ stackName: "reads", workDir: project.dir, env: sandbox.env });
  });
  afterAll(async () => {
    await project?.cleanup();
    await sandbox?.cleanup();
  });

  it("reads plain settings exactly as `pulumi config --json` gives them: the project's defaults, then the stack file's", async () => {
    // `stack init` left the passphrase's salt in the stack file: it stays.
    const salt = (await readFile(path.join(project.dir, "Pulumi.reads.yaml"), "utf8"))
      .split("\n")
      .find((line) => line.startsWith("encryptionsalt:"));
    await stackFile(
      [
        salt ?? "",
        "config:",
        "  agents:baseUrl: http://127.0.0.1:9",
        '  agents:quoted: "5"',
        "  agents:count: 12",
        "  agents:flag: true",
        "  bare: in the project's namespace",
        "  readsproject:overridden: by the stack",
        "",
      ].join("\n"),
    );
    const fromFiles = await plainStackConfig(project.dir, "reads");
    expect(fromFiles).toEqual(await stack.getAllConfig());
    expect(fromFiles?.["readsproject:declared"]?.value).toBe("from the project");
    expect(fromFiles?.["readsproject:overridden"]?.value).toBe("by the stack");
    expect(fromFiles?.["readsproject:bare"]?.value).toBe("in the project's namespace");
    expect(fromFiles?.["agents:count"]?.value).toBe("12");
  });

  it("leaves to the CLI what the files alone cannot say: a secret, an object, a list, a decimal, an environment, no file", async () => {
    await stack.setConfig("agents:apiKey", { value: "sk-reads-secret", secret: true });
    expect(await plainStackConfig(project.dir, "reads")).toBeUndefined();
    for (const text of [
      "config:\n  agents:nested:\n    a: 1\n",
      "config:\n  agents:list: [1, 2]\n",
      "config:\n  agents:ratio: 0.50\n",
      "environment:\n  - team/dev\n",
      "config: [not, a, map]\n",
      "config: {unclosed\n",
    ]) {
      await stackFile(text);
      expect(await plainStackConfig(project.dir, "reads"), text).toBeUndefined();
    }
    expect(await plainStackConfig(project.dir, "no-such-stack")).toBeUndefined();
    await writeFile(path.join(project.dir, "Pulumi.yaml"), `${PROJECT}stackConfigDir: config\n`);
    await stackFile("config:\n  agents:baseUrl: http://127.0.0.1:9\n");
    expect(await plainStackConfig(project.dir, "reads")).toBeUndefined();
    await writeFile(path.join(project.dir, "Pulumi.yaml"), PROJECT);
    expect(await plainStackConfig(project.dir, "reads")).toBeDefined();
  });

  it("exports the same state without --show-secrets, its secrets still encrypted; a missing stack is a StackNotFoundError", async () => {
    const program = async () => ({ plain: "shown", token: pulumi.secret("tok-reads-never-shown") });
    const deployed = await openStack({ stackName: "outputs", workDir: project.dir, env: sandbox.env, program });
    await deployed.up();
    const [cheap, full] = await Promise.all([exportState(deployed), deployed.exportStack()]);
    const root = (state: typeof cheap) =>
      (state.deployment?.resources ?? []).find((r: { type: string }) => r.type === "pulumi:pulumi:Stack")?.outputs;
    expect(root(cheap)?.plain).toBe("shown");
    expect(root(cheap)?.plain).toEqual(root(full)?.plain);
    expect(JSON.stringify(root(full)?.token)).toContain("tok-reads-never-shown");
    expect(JSON.stringify(cheap)).not.toContain("tok-reads-never-shown");
    expect(root(cheap)?.token).toHaveProperty("ciphertext");
    const missing = await openStack({ stackName: "nowhere", workDir: project.dir, create: false, env: sandbox.env });
    const error = await exportState(missing).catch((e: unknown) => stackError(e, "nowhere"));
    expect(error).toBeInstanceOf(StackNotFoundError);
  });
});
