// Upgrading replaces nothing: a stack deployed by the program as it was before agent-iac became a
// package (test/fixtures/previous-program) previews with no changes under today's program, which
// declares its agents through the AgentDirectory component's code.
import { readFile, writeFile } from "node:fs/promises";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { agentsProgram } from "../../../src/component/program.ts";
import { openStack, projectRoot } from "../../../src/workspace/index.ts";
import { type AgentsProject, agentsProject, deployAndRead, stepRecorder } from "../../helpers/agents-project.ts";
import { type PulumiSandbox, pulumiSandbox } from "../../helpers/pulumi.ts";
import { startTestSimulator } from "../../helpers/simulator.ts";

describe("upgrading a stack to the program built on AgentDirectory", () => {
  let sandbox: PulumiSandbox;
  let sim: Awaited<ReturnType<typeof startTestSimulator>>;
  let project: AgentsProject;

  beforeAll(async () => {
    sandbox = await pulumiSandbox();
    sim = await startTestSimulator();
    const previous = await readFile(path.join(projectRoot, "test", "fixtures", "previous-program", "index.ts"), "utf8");
    project = await agentsProject(sandbox, { baseUrl: sim.url, program: previous });
  });

  afterAll(async () => {
    await project?.cleanup();
    await sim?.close();
    await sandbox?.cleanup();
  });

  it("previews no changes for a stack the previous program deployed, and keeps its outputs", async () => {
    const before = await deployAndRead(project.stack);
    expect(before.summary.result).toBe("succeeded");
    expect(Object.keys(before.outputs.versions?.value ?? {}).length).toBeGreaterThan(0);

    // Today's program as a user's project runs it (through the Pulumi CLI).
    await writeFile(path.join(project.dir, "index.ts"), 'export * from "../../../src/program.ts";\n');
    const steps = stepRecorder();
    const preview = await project.stack.preview({ expectNoChanges: true, onEvent: steps.onEvent });
    expect(preview.changeSummary).toEqual({ same: expect.any(Number) });
    expect(steps.namesWith("create", "replace", "delete", "update", "create-replacement")).toEqual([]);

    const after = await deployAndRead(project.stack);
    expect(after.summary.resourceChanges).toEqual({ same: expect.any(Number) });
    expect(after.outputs.versions?.value).toEqual(before.outputs.versions?.value);
    expect(after.outputs.agents?.value).toEqual(before.outputs.agents?.value);

    // agent-iac's own runs of the same program (inline, in this process) see the same stack: the
    // serialized providers and every input as the CLI-run program left them.
    const program = () => agentsProgram({ projectDir: project.dir, env: { ...process.env, ...sandbox.env } });
    const inline = await openStack({
      stackName: "test",
      workDir: project.dir,
      env: sandbox.env,
      create: false,
      program,
    });
    const inlineSteps = stepRecorder();
    const same = await inline.preview({ expectNoChanges: true, onEvent: inlineSteps.onEvent });
    expect(same.changeSummary).toEqual({ same: expect.any(Number) });
    expect(inlineSteps.namesWith("create", "replace", "delete", "update", "create-replacement")).toEqual([]);
  }, 300_000);
});
