// Past one stack: a fleet split into stacks per folder of agents (`agents:dir`), deployed by
// concurrent `pulumi up` runs on one shared backend (as parallel CI jobs do), each stack planned
// and smoke-called on its own. README "Past one stack".
import { readFile } from "node:fs/promises";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Plan } from "../../../src/plan/index.ts";
import { openStack, projectRoot, type Stack } from "../../../src/workspace/index.ts";
import { runCli } from "../../helpers/cli.ts";
import { conversationalKey, proceduralKey, writeGeneratedAgents } from "../../helpers/generate.ts";
import { type PulumiSandbox, projectCopy, pulumiSandbox } from "../../helpers/pulumi.ts";
import { startTestSimulator, storedAgents } from "../../helpers/simulator.ts";

const API_KEY = "sk-test-fleet-stacks-71c2e9a4";
const FOLDERS = { north: "fleet/north", south: "fleet/south" } as const;
type Name = keyof typeof FOLDERS;
const PAIRS = 2;

describe("a fleet split into stacks per folder of agents", () => {
  let sandbox: PulumiSandbox;
  let sim: Awaited<ReturnType<typeof startTestSimulator>>;
  let project: { dir: string; cleanup(): Promise<void> };
  const stacks = {} as Record<Name, Stack>;
  const env = () => ({ ...process.env, ...sandbox.env, AGENT_IAC_API_KEY: API_KEY });

  beforeAll(async () => {
    sandbox = await pulumiSandbox();
    sim = await startTestSimulator({ apiKey: API_KEY });
    project = await projectCopy(path.join(projectRoot, "test", "fixtures", "agents-project"));
    for (const [name, folder] of Object.entries(FOLDERS) as [Name, string][]) {
      await writeGeneratedAgents(path.join(project.dir, folder), PAIRS, { smoke: true });
      stacks[name] = await openStack({
        stackName: name,
        workDir: project.dir,
        env: { ...sandbox.env, AGENT_IAC_API_KEY: API_KEY },
      });
      await stacks[name].setConfig("agents:baseUrl", { value: sim.url });
      await stacks[name].setConfig("agents:dir", { value: folder });
    }
  });

  afterAll(async () => {
    await project?.cleanup();
    await sim?.close();
    await sandbox?.cleanup();
  });

  it("deploys both stacks at once, each with exactly the agents of its folder", async () => {
    const [north, south] = await Promise.all([stacks.north.up(), stacks.south.up()]);
    const keys = [...Array.from({ length: PAIRS }, (_, i) => [proceduralKey(i), conversationalKey(i)]).flat()].sort();
    for (const up of [north, south]) {
      expect(up.summary.result).toBe("succeeded");
      expect(Object.keys(up.outputs.versions?.value ?? {}).sort()).toEqual(keys);
    }
    // Two stacks, two sets of agents on the service: nothing shared but the backend.
    const northVersions = Object.values(north.outputs.versions?.value ?? {});
    const southVersions = Object.values(south.outputs.versions?.value ?? {});
    expect(northVersions.filter((v) => southVersions.includes(v))).toEqual([]);
    const stored = await storedAgents(sim);
    expect(stored.conversational).toHaveLength(2 * PAIRS);
    expect(stored.procedural).toHaveLength(2 * PAIRS);
  }, 600_000);

  it("plans and smoke-calls each stack on its own, at the same time, and both pass", async () => {
    const perStack = async (name: Name) => {
      const json = path.join(project.dir, `smoke-${name}.json`);
      const planJson = path.join(project.dir, `plan-${name}.json`);
      const plan = await runCli(["plan", "--stack", name, "--json", planJson], { cwd: project.dir, env: env() });
      const planned = JSON.parse(await readFile(planJson, "utf8").catch(() => "{}")) as Plan;
      const smoke = await runCli(["smoke", "--stack", name, "--json", json], { cwd: project.dir, env: env() });
      return { plan, planned, smoke, report: JSON.parse(await readFile(json, "utf8").catch(() => "{}")) };
    };
    const results = await Promise.all([perStack("north"), perStack("south")]);
    for (const { plan, planned, smoke, report } of results) {
      expect(plan.code, plan.stderr).toBe(0);
      expect(planned.agents?.map((a) => a.action)).toEqual(Array(2 * PAIRS).fill("unchanged"));
      expect(smoke.code, `${smoke.stdout}\n${smoke.stderr}`).toBe(0);
      expect(report.summary).toMatchObject({ scenarios: PAIRS, passed: PAIRS, failed: 0, errors: 0 });
      expect(`${plan.stdout}${smoke.stdout}${smoke.stderr}${JSON.stringify(report)}`).not.toContain(API_KEY);
    }
  }, 600_000);
});
