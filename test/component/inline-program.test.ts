// Which projects agent-iac runs the agents program inline for (in its own process, where
// `@pulumi/pulumi` is loaded already): those whose Pulumi.yaml runs this checkout's src/program.ts.
// Any other program (a user's own, AgentDirectory in a program of theirs) stays the CLI's to run.
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { inlineAgentsProgram } from "../../src/component/program.ts";
import { projectRoot } from "../../src/workspace/index.ts";

describe("inlineAgentsProgram", () => {
  const dirs: string[] = [];
  const project = async (pulumiYaml: string) => {
    const dir = await mkdtemp(path.join(os.tmpdir(), "inline-program-"));
    dirs.push(dir);
    await writeFile(path.join(dir, "Pulumi.yaml"), pulumiYaml);
    return dir;
  };
  afterAll(() => Promise.all(dirs.map((dir) => rm(dir, { recursive: true, force: true }))));

  it("runs the checkout's own program, and a project whose main is that file, inline", async () => {
    expect(inlineAgentsProgram(projectRoot, {})).toBeTypeOf("function");
    const main = path.join(projectRoot, "src", "program.ts");
    const elsewhere = await project(`name: agents\nruntime:\n  name: nodejs\nmain: ${main}\n`);
    expect(inlineAgentsProgram(elsewhere, {})).toBeTypeOf("function");
  });

  it("leaves any other program to the Pulumi CLI", async () => {
    const own = await project("name: agents\nruntime: nodejs\nmain: index.ts\n");
    await writeFile(path.join(own, "index.ts"), 'export * from "agent-iac";\n');
    expect(inlineAgentsProgram(own, {})).toBeUndefined();
    const yaml = await project(`name: agents\nruntime: yaml\nmain: ${path.join(projectRoot, "src", "program.ts")}\n`);
    expect(inlineAgentsProgram(yaml, {})).toBeUndefined();
    expect(inlineAgentsProgram(path.join(os.tmpdir(), "no-such-project"), {})).toBeUndefined();
  });
});
