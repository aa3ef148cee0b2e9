// Upgrading agent-iac over a stack deployed by an earlier release replaces no one's agents. The
// earlier release is the real thing: the tree of the last commit with the old state layout (the
// provider text stored twice, the whole request body in the outputs), kept as a fixture (`git
// archive` of that commit's src, package.json, Pulumi.yaml, agents and prompts, so a shallow clone
// runs this too) and extracted into a work dir that is its own `agent-iac` package. It deploys the repo's example
// agents; then that work dir's sources are swapped for this checkout's, and the stack must preview
// with no changes, replace exactly what a change touches, and drop a removed agent of the old
// layout with the old provider's own delete.
import { execFileSync } from "node:child_process";
import { cp, mkdir, readdir, readFile, rm, symlink, writeFile } from "node:fs/promises";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { AGENT_TYPE_PREFIX } from "../../../src/provider/index.ts";
import { openStack, projectRoot, type Stack } from "../../../src/workspace/index.ts";
import { deployAndRead, deployStack, stateFile, stepRecorder } from "../../helpers/agents-project.ts";
import { type PulumiSandbox, projectCopy, pulumiSandbox } from "../../helpers/pulumi.ts";
import { startTestSimulator, storedAgents } from "../../helpers/simulator.ts";

/** main before issue 25 (commit 9466644), the last one whose provider stores the old layout. */
const OLD_LAYOUT_TREE = path.join(projectRoot, "test", "fixtures", "old-layout-9466644.tar.gz");
const API_KEY = "sk-test-upgrade-3f9a1c07b2";

type Resource = { type: string; urn: string; inputs: Record<string, unknown>; outputs: Record<string, unknown> };
async function agentResources(sandbox: PulumiSandbox): Promise<Map<string, Resource>> {
  const state = JSON.parse(await stateFile(sandbox, "upgrade")) as {
    checkpoint: { latest: { resources: Resource[] } };
  };
  return new Map(
    state.checkpoint.latest.resources
      .filter((r) => r.type.startsWith(AGENT_TYPE_PREFIX))
      .map((r) => [r.urn.split("::").at(-1) ?? r.urn, r]),
  );
}

describe("upgrading over a stack deployed with the old state layout", () => {
  let sandbox: PulumiSandbox;
  let sim: Awaited<ReturnType<typeof startTestSimulator>>;
  let work: { dir: string; cleanup(): Promise<void> };
  let stack: Stack;
  let oldLayout: Map<string, Resource>;

  beforeAll(async () => {
    sandbox = await pulumiSandbox();
    sim = await startTestSimulator({ apiKey: API_KEY });
    work = await projectCopy(path.join(projectRoot, "test", "fixtures", "agents-project"));
    await rm(work.dir, { recursive: true, force: true });
    await mkdir(work.dir, { recursive: true });
    execFileSync("tar", ["-xzf", OLD_LAYOUT_TREE, "-C", work.dir]);
    // Its own `agent-iac` package (the provider loads `agent-iac/provider-runtime` from it) on this
    // checkout's dependencies.
    await symlink(path.join(projectRoot, "node_modules"), path.join(work.dir, "node_modules"));
    stack = await openStack({
      stackName: "upgrade",
      workDir: work.dir,
      env: { ...sandbox.env, AGENT_IAC_API_KEY: API_KEY },
    });
    await stack.setConfig("agents:baseUrl", { value: sim.url });
    const up = await deployAndRead(stack);
    expect(up.summary.result).toBe("succeeded");
    oldLayout = await agentResources(sandbox);
  }, 600_000);

  afterAll(async () => {
    await sim?.close();
    await work?.cleanup();
    await sandbox?.cleanup();
  });

  it("the old release stored its layout: the body in the outputs too, a provider of over 2 KB", () => {
    expect(oldLayout.size).toBeGreaterThan(2);
    for (const resource of oldLayout.values()) {
      expect(resource.outputs.config).toEqual(resource.inputs.config);
      expect(String(resource.outputs.__provider).length).toBeGreaterThan(2000);
    }
  });

  it("previews with no changes after the upgrade, and `up` replaces nothing", async () => {
    for (const dir of ["src"]) {
      await rm(path.join(work.dir, dir), { recursive: true, force: true });
      await cp(path.join(projectRoot, dir), path.join(work.dir, dir), { recursive: true });
    }
    await cp(path.join(projectRoot, "package.json"), path.join(work.dir, "package.json"));
    const stored = (await storedAgents(sim)).conversational.length;
    await stack.preview({ expectNoChanges: true });
    const up = await deployAndRead(stack);
    expect(up.summary.resourceChanges?.create ?? 0).toBe(0);
    expect(up.summary.resourceChanges?.replace ?? 0).toBe(0);
    expect((await storedAgents(sim)).conversational).toHaveLength(stored);
    // The new provider text is in the inputs now; the old outputs stay until an agent is replaced.
    const after = await agentResources(sandbox);
    for (const [name, resource] of after) {
      expect(String(resource.inputs.__provider).length).toBeLessThan(700);
      expect(resource.outputs.versionId).toBe(oldLayout.get(name)?.outputs.versionId);
    }
    await stack.preview({ expectNoChanges: true });
  }, 600_000);

  it("replaces exactly a changed agent and what links it; the replacement stores the new layout", async () => {
    const resources = await agentResources(sandbox);
    const linked = [...resources.values()].find(
      (r) => r.type.endsWith("ProceduralAgent") && [...resources.values()].some((c) => isLinked(c, r)),
    );
    if (!linked) throw new Error("the examples need a linked procedural agent");
    const key = linked.urn.split("::").at(-1) ?? "";
    const linkers = [...resources.entries()].filter(([, c]) => isLinked(c, linked)).map(([name]) => name);
    const file = path.join(work.dir, "agents", `${key}.yaml`);
    await writeFile(file, (await readFile(file, "utf8")).replace(/^description: .*$/m, "description: Upgraded."));

    const recorder = stepRecorder();
    await stack.preview({ onEvent: recorder.onEvent });
    expect(recorder.namesWith("replace")).toEqual([key, ...linkers].sort());
    await deployStack(stack);
    const after = await agentResources(sandbox);
    const replaced = after.get(key);
    expect(replaced?.outputs).toEqual({
      agentId: expect.stringMatching(/^pa_/),
      versionId: expect.any(String),
      digests: { name: expect.any(String), description: expect.any(String), config: expect.any(String) },
      __provider: replaced?.inputs.__provider,
    });
    expect(replaced?.inputs.description).toBe("Upgraded.");
    await stack.preview({ expectNoChanges: true });
  }, 600_000);

  it("drops a removed agent of the old layout with the old provider's delete", async () => {
    const resources = await agentResources(sandbox);
    const [oldOne] = [...resources.entries()].filter(
      ([, r]) => r.type.endsWith("ConversationalAgent") && "config" in r.outputs,
    );
    if (!oldOne) throw new Error("no conversational agent left in the old layout");
    for (const file of await readdir(path.join(work.dir, "agents"))) {
      if (file === `${oldOne[0]}.yaml` || file.startsWith(`${oldOne[0]}.`))
        await rm(path.join(work.dir, "agents", file));
    }
    const up = await deployAndRead(stack);
    expect(up.summary.resourceChanges?.delete).toBe(1);
    expect(`${up.stdout}\n${up.stderr}`).toMatch(/no longer managed by this stack; the service keeps it/);
    const state = await stateFile(sandbox, "upgrade");
    expect(state).not.toContain(API_KEY);
  }, 600_000);
});

function isLinked(conversational: Resource, procedural: Resource): boolean {
  const links = conversational.inputs.postprocess_agents;
  return Array.isArray(links) && links.includes(procedural.outputs.agentId);
}
