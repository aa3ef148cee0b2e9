// The comparison base of `npm start` names only versions the stack held (issue 41): a pending base
// (.agent-iac/comparison-base.<stack>.json) naming versions the stack never held — another stack's,
// or edited — is refused before anything is deployed (exit 2, the file and the way out named, the
// file kept); one naming versions the stack holds is used and consumed. The real Pulumi CLI on a
// file backend (whose update history says what the stack held) and on a Postgres backend (no
// readable history: the state, `previous_versions` and the base's own record), the simulator on
// port 0. A base carried over two deploys that both replaced an agent still names a version the
// stack held two deploys ago: accepted on both backends.
import { appendFile, readFile, stat, writeFile } from "node:fs/promises";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type AgentsProject, agentsProject, stackOutputs } from "../../helpers/agents-project.ts";
import { runInProcess } from "../../helpers/cli.ts";
import { type Backend, type PulumiSandbox, pulumiSandbox } from "../../helpers/pulumi.ts";
import { requestCounts, startTestSimulator } from "../../helpers/simulator.ts";

const API_KEY = "sk-base-held-e2e-3c8e17";

describe.each<Backend>(["file", "postgres"])("a comparison base on a %s backend", { timeout: 300_000 }, (backend) => {
  let sandbox: PulumiSandbox;
  let sim: Awaited<ReturnType<typeof startTestSimulator>>;
  let project: AgentsProject;
  const env = () => ({ ...process.env, ...sandbox.env, AGENT_IAC_API_KEY: API_KEY });
  const start = (...flags: string[]) =>
    runInProcess(["start", "--stack", "test", ...flags], { cwd: project.dir, env: env() });
  const baseFile = () => path.join(project.dir, ".agent-iac", "comparison-base.test.json");

  beforeAll(async () => {
    sandbox = await pulumiSandbox({ backend });
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

  it("naming a version the stack never held is refused before the deploy: exit 2, the file, the versions and the way out named; the file kept", async () => {
    const held = (await stackOutputs(project.stack)).versions?.value as Record<string, string>;
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

    // Another stack's record does not vouch for its versions: what it says the stack held after its
    // last deploy is not what this stack holds.
    const foreign = {
      ...forged,
      held_after: { ...held, support: "ca_0therstack@v4" },
      held_versions: ["ca_0therstack@v3", "ca_0therstack@v4"],
    };
    await writeFile(baseFile(), `${JSON.stringify(foreign)}\n`);
    const again = await start();
    expect(again.code, `${again.stdout}\n${again.stderr}`).toBe(2);
    expect(again.stderr).toContain(`"support": "ca_0therstack@v3"`);
    expect(await creates()).toBe(before);
  });

  it("a base naming the versions the stack holds is used and consumed", async () => {
    const held = (await stackOutputs(project.stack)).versions?.value as Record<string, string>;
    const base = { stack: "test", versions: held, seen: Object.keys(held), recorded_at: "2026-01-01T00:00:00.000Z" };
    await writeFile(baseFile(), `${JSON.stringify(base)}\n`);
    const run = await start();
    expect(run.code, `${run.stdout}\n${run.stderr}`).toBe(0);
    expect(run.stdout).toContain("compared with the versions before this deploy");
    await expect(stat(baseFile())).rejects.toMatchObject({ code: "ENOENT" });
  });

  it("a base carried over two deploys that both replaced support is accepted, compared and consumed", async () => {
    const versions = async () => (await stackOutputs(project.stack)).versions?.value as Record<string, string>;
    const prompt = path.join(project.dir, "prompts", "support.md");
    const original = (await versions()).support;
    // Two deploys without smoke (their comparisons never run): the base stays the one from before the first.
    for (const edit of ["Mention the opening hours once.", "Thank the caller at the end."]) {
      await appendFile(prompt, `\n${edit}\n`);
      const deployed = await start("--no-smoke");
      expect(deployed.code, `${deployed.stdout}\n${deployed.stderr}`).toBe(0);
    }
    const now = await versions();
    expect(now.support).not.toBe(original);
    // Neither what the stack holds nor (where no history is read) what its last replace left.
    const previous = (await stackOutputs(project.stack)).previous_versions?.value as Record<string, string>;
    expect(previous.support).not.toBe(original);
    expect(JSON.parse(await readFile(baseFile(), "utf8")).versions.support).toBe(original);

    const run = await start();
    expect(run.code, `${run.stdout}\n${run.stderr}`).toBe(0);
    expect(run.stdout).toContain("compared with the versions before this deploy");
    expect(run.stderr + run.stdout).toContain("comparison base: the versions from before the deploy of");
    const compared = JSON.parse(await readFile(path.join(project.dir, "reports", "old-versions.json"), "utf8"));
    expect(compared.support).toBe(original);
    await expect(stat(baseFile())).rejects.toMatchObject({ code: "ENOENT" });
  });
});
