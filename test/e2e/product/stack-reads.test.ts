// The cheaper stack reads (src/settings/plain-config.ts, src/workspace/reads.ts) against what the Automation API's own reads give,
// on the real Pulumi CLI and a temp file backend: the config read from the files is exactly
// `pulumi config --json`'s wherever it is used, and left to the CLI wherever the files cannot say;
// the state exported without --show-secrets is the same state, its secrets still encrypted.
import { mkdir, readFile, writeFile } from "node:fs/promises";
import path from "node:path";
import * as pulumi from "@pulumi/pulumi";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { plainSettings, plainStackConfig, stackFiles, workingTree } from "../../../src/settings/index.ts";
import {
  exportState,
  openStack,
  projectRoot,
  type Stack,
  StackNotFoundError,
  stackError,
} from "../../../src/workspace/index.ts";
import { type PulumiSandbox, projectCopy, pulumiSandbox } from "../../helpers/pulumi.ts";

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

  it("falls back to the CLI for each value Pulumi's YAML reads otherwise (an unquoted date, 012, a large integer), and reads the quoted ones", async () => {
    const salt = (await readFile(path.join(project.dir, "Pulumi.reads.yaml"), "utf8"))
      .split("\n")
      .find((line) => line.startsWith("encryptionsalt:"));
    const withValue = (value: string) => stackFile(`${salt ?? ""}\nconfig:\n  agents:serviceVersion: ${value}\n`);
    // What `pulumi config --json` prints for each differs from the value's text: the files cannot say it.
    const cli: Record<string, string> = {};
    for (const value of ["2025-06-19", "012", "123456789012345678901234", "9007199254740993", "1_000"]) {
      await withValue(value);
      cli[value] = (await stack.getAllConfig())["agents:serviceVersion"]?.value ?? "";
      expect(await plainStackConfig(project.dir, "reads"), value).toBeUndefined();
    }
    expect(cli).toEqual({
      "2025-06-19": "2025-06-19 00:00:00 +0000 UTC",
      "012": "10",
      "123456789012345678901234": "1.2345678901234569e+23",
      "9007199254740993": "9007199254740993",
      "1_000": "1000",
    });
    // Quoted, or a small integer: the files say exactly what the CLI does.
    for (const value of ['"2025-06-19"', "'012'", "12"]) {
      await withValue(value);
      const fromFiles = await plainStackConfig(project.dir, "reads");
      expect(fromFiles, value).toEqual(await stack.getAllConfig());
    }
  });

  it("reads what the CLI does through merge keys, stackConfigDir and a qualified stack name", async () => {
    const salt = (await readFile(path.join(project.dir, "Pulumi.reads.yaml"), "utf8"))
      .split("\n")
      .find((line) => line.startsWith("encryptionsalt:"));
    const text = `${salt ?? ""}\nconfig:\n  <<: { agents:merged: from-merge, agents:dir: merged }\n  agents:dir: explicit\n`;
    await stackFile(text);
    // A value only a merge key sets goes to the CLI; the resolver's values are the CLI's.
    expect(await plainStackConfig(project.dir, "reads")).toBeUndefined();
    const cli = await stack.getAllConfig();
    expect(cli["agents:merged"]?.value).toBe("from-merge");
    expect(cli["agents:dir"]?.value).toBe("explicit");
    const resolved = await stackFiles(workingTree(project.dir), "reads");
    expect(plainSettings(resolved.settings)).toEqual(
      Object.fromEntries(Object.entries(cli).map(([key, { value }]) => [key, { value }])),
    );
    // The stack file elsewhere (stackConfigDir), read under a qualified name.
    await mkdir(path.join(project.dir, "conf"), { recursive: true });
    await writeFile(
      path.join(project.dir, "conf", "Pulumi.reads.yaml"),
      `${salt ?? ""}\nconfig:\n  agents:where: conf\n`,
    );
    await writeFile(path.join(project.dir, "Pulumi.yaml"), `${PROJECT}stackConfigDir: conf\n`);
    try {
      const qualified = "organization/readsproject/reads";
      const fromFiles = await plainStackConfig(project.dir, qualified);
      expect(fromFiles?.["agents:where"]?.value).toBe("conf");
      expect(fromFiles).toEqual(await stack.getAllConfig());
    } finally {
      await writeFile(path.join(project.dir, "Pulumi.yaml"), PROJECT);
    }
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
