// Two `start --no-smoke` runs in this process, side by side, each in its own project on its own
// backend and simulator: the Pulumi CLI each starts (and the dynamic provider it starts, which reads
// AGENT_IAC_API_KEY from its own environment) gets that run's environment, never this process's. A
// key only this process has reaches neither; the process's environment and directory are not changed.
import { mkdtemp, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type AgentsProject, agentsProject } from "../../helpers/agents-project.ts";
import { runInProcess } from "../../helpers/cli.ts";
import { writeGeneratedAgents } from "../../helpers/generate.ts";
import { type PulumiSandbox, pulumiSandbox } from "../../helpers/pulumi.ts";
import { startTestSimulator, storedAgents } from "../../helpers/simulator.ts";

const RUN_KEY = "sk-run-environment-a-5d21c9";
const PROCESS_ONLY_KEY = "sk-only-in-the-test-process-77e0";

describe("runs side by side in one process, each with its own environment", { timeout: 300_000 }, () => {
  const sandboxes: PulumiSandbox[] = [];
  const projects: AgentsProject[] = [];
  const sims: Awaited<ReturnType<typeof startTestSimulator>>[] = [];
  let agentsDir: string;

  beforeAll(async () => {
    agentsDir = await mkdtemp(path.join(os.tmpdir(), "agent-iac-run-env-"));
    await writeGeneratedAgents(agentsDir, 1);
    // A: a service that takes only the run's key. B: one that takes only the local dev key (what
    // a run without AGENT_IAC_API_KEY uses on a loopback address).
    sims.push(await startTestSimulator({ apiKey: RUN_KEY }), await startTestSimulator());
    for (const sim of sims) {
      const sandbox = await pulumiSandbox();
      sandboxes.push(sandbox);
      projects.push(await agentsProject(sandbox, { baseUrl: sim.url, agentsFrom: agentsDir }));
    }
  }, 300_000);
  afterAll(async () => {
    for (const project of projects) await project.cleanup();
    for (const sim of sims) await sim.close();
    for (const sandbox of sandboxes) await sandbox.cleanup();
    if (agentsDir) await rm(agentsDir, { recursive: true, force: true });
  });

  it("each provider uses its run's key (A's from its environment, B the local dev key), not the process's", async () => {
    const [a, b] = projects as [AgentsProject, AgentsProject];
    const [sandboxA, sandboxB] = sandboxes as [PulumiSandbox, PulumiSandbox];
    const cwd = process.cwd();
    const env = process.env;
    const planted = env.AGENT_IAC_API_KEY;
    // Only this process has it: leaked into B's provider, B's service refuses it; into A's, A's does.
    env.AGENT_IAC_API_KEY = PROCESS_ONLY_KEY;
    try {
      const start = (dir: string, runEnv: Record<string, string>) =>
        runInProcess(["start", "--stack", "test", "--no-smoke"], { cwd: dir, env: runEnv });
      const [first, second] = await Promise.all([
        start(a.dir, { ...sandboxA.env, AGENT_IAC_API_KEY: RUN_KEY }),
        start(b.dir, { ...sandboxB.env }),
      ]);
      expect(first.code, `${first.stdout}\n${first.stderr}`).toBe(0);
      expect(second.code, `${second.stdout}\n${second.stderr}`).toBe(0);
      expect(`${first.stderr}${second.stderr}`).not.toContain(PROCESS_ONLY_KEY);
    } finally {
      if (planted === undefined) delete env.AGENT_IAC_API_KEY;
      else env.AGENT_IAC_API_KEY = planted;
    }
    // Each service holds the agents its run's provider created with the key it takes.
    for (const sim of sims) {
      const stored = await storedAgents(sim);
      expect(stored.procedural.length + stored.conversational.length).toBe(2);
    }
    expect(process.cwd()).toBe(cwd);
    expect(process.env).toBe(env);
  });
});
