// Qualified stack names (issue 60's "a qualified stack name reads no stack file", issue 59's
// "organization name must be 'organization'"), with the real CLI and the real Pulumi CLI on a
// file:// backend: `--stack organization/<project>/dev` reads Pulumi.dev.yaml as Pulumi does (its
// address, its secrets provider), and a name a self-managed backend cannot hold is a usage error
// (exit 2) that names the forms it takes.
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runCli } from "../../helpers/cli.ts";
import { type PulumiSandbox, pulumiSandbox } from "../../helpers/pulumi.ts";
import { requestCounts, startTestSimulator } from "../../helpers/simulator.ts";

const API_KEY = "sk-stack-names-key-60aa";
const SLOW = 180_000;

describe("qualified stack names on a file backend (real CLI, Pulumi CLI, simulator)", { timeout: SLOW }, () => {
  let sandbox: PulumiSandbox;
  let sim: Awaited<ReturnType<typeof startTestSimulator>>;
  let dir: string;
  // No passphrase: the stack's secrets provider is a KMS key, named in its stack file.
  const env = () => ({
    ...process.env,
    ...sandbox.env,
    PULUMI_CONFIG_PASSPHRASE: "",
    AGENT_IAC_API_KEY: API_KEY,
    AGENT_IAC_BASE_URL: "",
  });

  beforeAll(async () => {
    sandbox = await pulumiSandbox();
    sim = await startTestSimulator({ port: 0, apiKey: API_KEY, eventDelayMs: 1, quiet: true });
    dir = await mkdtemp(path.join(os.tmpdir(), "agent-iac-stack-names-"));
    await writeFile(path.join(dir, "Pulumi.yaml"), "name: demo\nruntime: nodejs\n");
    await writeFile(
      path.join(dir, "Pulumi.dev.yaml"),
      `secretsprovider: awskms://alias/agents-demo\nconfig:\n  agents:baseUrl: ${sim.url}\n`,
    );
    await mkdir(path.join(dir, "agents"));
  }, SLOW);
  afterAll(async () => {
    await sim?.close();
    await sandbox?.cleanup();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it("--stack organization/<project>/dev reads Pulumi.dev.yaml, as --stack dev does", async () => {
    for (const stack of ["dev", "organization/demo/dev"]) {
      const before = (await requestCounts(sim)).by_route["GET /conversations"] ?? 0;
      const listed = await runCli(["conversations", "list", "--stack", stack, "--json"], { cwd: dir, env: env() });
      expect(listed.code, `${stack}: ${listed.stderr}`).toBe(0);
      expect(listed.stderr).not.toContain("needs a passphrase");
      // The address came from Pulumi.dev.yaml: the simulator was asked.
      expect((await requestCounts(sim)).by_route["GET /conversations"] ?? 0, stack).toBeGreaterThan(before);
    }
  });

  it("a name a self-managed backend cannot hold (acme/…, <project>/dev): exit 2, naming the forms it takes", async () => {
    for (const stack of ["acme/demo/dev", "demo/dev"]) {
      const planned = await runCli(["plan", "--stack", stack], {
        cwd: dir,
        env: { ...env(), PULUMI_CONFIG_PASSPHRASE: "not-used" },
      });
      expect(planned.code, `${stack}: ${planned.stderr}`).toBe(2);
      expect(planned.stderr).toContain(`--stack ${stack}: a self-managed backend`);
      expect(planned.stderr).toContain('"organization/<project>/dev"');
      expect(planned.stderr).not.toMatch(/this is a bug/);
    }
  });
});
