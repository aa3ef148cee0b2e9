// The comparison base of `npm start` names only versions the stack held (issue 41): a pending base
// (.agent-iac/comparison-base.<stack>.json) naming versions the stack never held — another stack's,
// or edited — is refused before anything is deployed (exit 2, the file and the way out named, the
// file kept); one naming versions the stack holds is used and consumed. The real Pulumi CLI on a
// file backend (whose update history says what the stack held), the simulator on port 0.
import { readFile, stat, writeFile } from "node:fs/promises";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type AgentsProject, agentsProject } from "./helpers/agents-project.ts";
import { runInProcess } from "./helpers/cli.ts";
import { type PulumiSandbox, pulumiSandbox } from "./helpers/pulumi.ts";
import { requestCounts, startTestSimulator } from "./helpers/simulator.ts";

const API_KEY = "sk-base-held-e2e-3c8e17";

describe("a comparison base naming versions the stack never held", { timeout: 300_000 }, () => {
  let sandbox: PulumiSandbox;
  let sim: Awaited<ReturnType<typeof startTestSimulator>>;
  let project: AgentsProject;
  const env = () => ({ ...process.env, ...sandbox.env, AGENT_IAC_API_KEY: API_KEY });
  const start = () => runInProcess(["start", "--stack", "test"], { cwd: project.dir, env: env() });
  const baseFile = () => path.join(project.dir, ".agent-iac", "comparison-base.test.json");

  beforeAll(async () => {
    sandbox = await pulumiSandbox();
    sim = await startTestSimulator({ port: 0, apiKey: API_KEY, eventDelayMs: 1, quiet: true });
    project = await agentsProject(sandbox, { baseUrl: sim.url, apiKey: API_KEY });
    const first = await start();
    expect(first.code, `${first.stdout}\n${first.stderr}`).toBe(0);
  }, 300_000);
  afterAll(async () => {
    await project?.cleanup();
    await sim?.close();
    await sandbox?.cleanup();
  });

  it("is refused before the deploy: exit 2, the file, the versions and the way out named; the file kept", async () => {
    const held = (await project.stack.outputs()).versions?.value as Record<string, string>;
    const forged = {
      stack: "test",
      versions: { ...held, support: "ca_0therstack@v3" },
      seen: Object.keys(held),
      recorded_at: "2026-01-01T00:00:00.000Z",
    };
    await writeFile(baseFile(), `${JSON.stringify(forged)}\n`);
    const creates = async () => (await requestCounts(sim)).count;
    const before = await creates();
    const run = await start();
    expect(run.code, `${run.stdout}\n${run.stderr}`).toBe(2);
    expect(run.stdout).not.toContain("pulumi up");
    expect(run.stderr).toContain(baseFile());
    expect(run.stderr).toContain(`"support": "ca_0therstack@v3"`);
    expect(run.stderr).toContain("never held");
    expect(run.stderr).toContain(`rm ${baseFile()}`);
    expect(run.stderr).not.toMatch(/this is a bug/);
    // Nothing placed or created on the service; the base is still there for a human to decide.
    expect(await creates()).toBe(before);
    expect(JSON.parse(await readFile(baseFile(), "utf8"))).toEqual(forged);
  });

  it("a base naming the versions the stack holds is used and consumed", async () => {
    const held = (await project.stack.outputs()).versions?.value as Record<string, string>;
    const base = { stack: "test", versions: held, seen: Object.keys(held), recorded_at: "2026-01-01T00:00:00.000Z" };
    await writeFile(baseFile(), `${JSON.stringify(base)}\n`);
    const run = await start();
    expect(run.code, `${run.stdout}\n${run.stderr}`).toBe(0);
    expect(run.stdout).toContain("compared with the versions before this deploy");
    await expect(stat(baseFile())).rejects.toMatchObject({ code: "ENOENT" });
  });
});
