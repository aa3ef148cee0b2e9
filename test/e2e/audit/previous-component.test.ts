// A program that declares its agents with the AgentDirectory component keeps `previous_versions` on
// the component (the version each agent held before its last replace), and the stack session reads
// it: `audit` names a replaced version by its key without the backend's history. The real Pulumi CLI.
import { readFile, rm, writeFile } from "node:fs/promises";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { AGENT_DIRECTORY_TYPE } from "../../../src/component/index.ts";
import { projectContext } from "../../../src/settings/index.ts";
import { openSession } from "../../../src/usecases/session.ts";
import { type AgentsProject, agentsProject, deployAndRead } from "../../helpers/agents-project.ts";
import { type PulumiSandbox, pulumiSandbox } from "../../helpers/pulumi.ts";
import { startTestSimulator } from "../../helpers/simulator.ts";

const API_KEY = "sk-previous-component-8c2d";

describe("previous_versions of an AgentDirectory", () => {
  let sandbox: PulumiSandbox;
  let sim: Awaited<ReturnType<typeof startTestSimulator>>;
  let project: AgentsProject;
  beforeAll(async () => {
    sandbox = await pulumiSandbox();
    sim = await startTestSimulator({ apiKey: API_KEY });
    project = await agentsProject(sandbox, {
      baseUrl: sim.url,
      apiKey: API_KEY,
      program: [
        'import { AgentDirectory } from "../../../src/component/index.ts";',
        'const fleet = new AgentDirectory("fleet", { dir: "agents" });',
        "export const versions = fleet.versions;",
        "",
      ].join("\n"),
    });
  });
  afterAll(async () => {
    await project?.cleanup();
    await sim?.close();
    await sandbox?.cleanup();
  });

  it("records the version a replace left on the component, and the session reads it", async () => {
    const first = await deployAndRead(project.stack);
    const oldSupport = (first.outputs.versions?.value as Record<string, string> | undefined)?.support ?? "";
    expect(oldSupport).toMatch(/@v\d+$/);
    const file = path.join(project.dir, "agents", "support.yaml");
    await writeFile(file, (await readFile(file, "utf8")).replace(/^description: /m, "description: Reworded. "));
    const second = await deployAndRead(project.stack);
    const newSupport = (second.outputs.versions?.value as Record<string, string> | undefined)?.support ?? "";
    expect(newSupport).not.toBe(oldSupport);
    const state = await project.stack.exportStack();
    const component = (state.deployment.resources as { type: string; outputs?: Record<string, unknown> }[]).find(
      (r) => r.type === AGENT_DIRECTORY_TYPE,
    );
    expect(component?.outputs?.previous_versions).toEqual({ support: oldSupport });
    // No history needed: the session reads the component's output.
    await rm(path.join(sandbox.backendDir, ".pulumi", "history"), { recursive: true, force: true });
    // The project's context, passed in: no chdir, no process.env swap.
    const env = { ...process.env, ...sandbox.env, AGENT_IAC_API_KEY: API_KEY };
    const session = await openSession("test", { project: projectContext({ cwd: project.dir, env }) });
    const held = await session.held();
    expect(held.previous).toEqual({ support: oldSupport });
    expect(held.agents.support?.version_id).toBe(newSupport);
  }, 300_000);
});
