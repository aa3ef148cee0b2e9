// The README's exit-code table is the rule for every command on the same inputs: an invalid agent
// file is a failed check (exit 1) from validate, plan, smoke and start alike, each naming the file,
// line and field, and nothing is previewed, called or deployed (real Pulumi CLI, simulator on port 0).
import { readFile, writeFile } from "node:fs/promises";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type AgentsProject, agentsProject } from "../../helpers/agents-project.ts";
import { runCli } from "../../helpers/cli.ts";
import { type PulumiSandbox, pulumiSandbox } from "../../helpers/pulumi.ts";
import { requestCounts, startTestSimulator, storedAgents } from "../../helpers/simulator.ts";

const API_KEY = "sk-exit-codes-5b1e0c";

/** Requests to the service's own routes (not the simulator's /_simulator/ ones, which this test reads). */
async function serviceRequests(sim: Awaited<ReturnType<typeof startTestSimulator>>): Promise<number> {
  const { by_route } = await requestCounts(sim);
  return Object.entries(by_route)
    .filter(([route]) => !route.includes("/_simulator/"))
    .reduce((sum, [, n]) => sum + n, 0);
}
const SLOW = 300_000;

describe("an invalid agent file exits 1 from every command", { timeout: SLOW }, () => {
  let sandbox: PulumiSandbox;
  let sim: Awaited<ReturnType<typeof startTestSimulator>>;
  let project: AgentsProject;

  beforeAll(async () => {
    sandbox = await pulumiSandbox();
    sim = await startTestSimulator({ port: 0, apiKey: API_KEY, eventDelayMs: 1, quiet: true });
    project = await agentsProject(sandbox, { baseUrl: sim.url, apiKey: API_KEY });
    const file = path.join(project.dir, "agents", "support.yaml");
    // A field of the wrong type: the loader names agents/support.yaml, its line and `name`.
    const text = await readFile(file, "utf8");
    await writeFile(file, text.replace(/^name: .*$/m, "name: [not, a, string]"));
  }, SLOW);
  afterAll(async () => {
    await project?.cleanup();
    await sim?.close();
    await sandbox?.cleanup();
  });

  it.each([
    ["validate", ["validate", "agents", "--stack", "test"]],
    ["plan", ["plan", "--stack", "test"]],
    ["smoke", ["smoke", "--stack", "test"]],
    ["start", ["start", "--stack", "test"]],
  ])("%s", async (_name, args) => {
    const before = await serviceRequests(sim);
    const run = await runCli(args, { cwd: project.dir, env: { ...process.env, ...sandbox.env } });
    expect(run.code, run.stderr).toBe(1);
    expect(run.stderr).toMatch(/agents\/support\.yaml:\d+:\d+: name: /);
    expect(run.stderr).not.toContain("this is a bug");
    // Nothing reached the service: no agent created, no call placed.
    expect(await serviceRequests(sim)).toBe(before);
    const stored = await storedAgents(sim);
    expect(stored.conversational.length + stored.procedural.length).toBe(0);
  });
});

describe("a malformed agents:serviceVersion is a configuration error naming the setting (exit 2)", {
  timeout: SLOW,
}, () => {
  let sandbox: PulumiSandbox;
  let sim: Awaited<ReturnType<typeof startTestSimulator>>;
  let project: AgentsProject;

  beforeAll(async () => {
    sandbox = await pulumiSandbox();
    sim = await startTestSimulator({ port: 0, apiKey: API_KEY, eventDelayMs: 1, quiet: true });
    project = await agentsProject(sandbox, { baseUrl: sim.url, apiKey: API_KEY });
    await project.stack.setConfig("agents:serviceVersion", { value: "June 2025" });
  }, SLOW);
  afterAll(async () => {
    await project?.cleanup();
    await sim?.close();
    await sandbox?.cleanup();
  });

  it.each([
    ["smoke", ["smoke", "--stack", "test"]],
    ["plan", ["plan", "--stack", "test"]],
  ])("%s", async (_name, args) => {
    const before = await serviceRequests(sim);
    const run = await runCli(args, {
      cwd: project.dir,
      env: { ...process.env, ...sandbox.env, AGENT_IAC_API_KEY: API_KEY },
    });
    expect(run.code, run.stderr).toBe(2);
    expect(run.stderr).toContain('agents:serviceVersion "June 2025" must be a date (YYYY-MM-DD)');
    expect(run.stderr).not.toContain("this is a bug");
    expect(run.stderr).not.toContain("ZodError");
    expect(await serviceRequests(sim)).toBe(before);
  });
});
