// Real Pulumi runs for tests: a temp file backend and a private PULUMI_HOME per test file, and
// project directories inside the checkout (so `@pulumi/pulumi` resolves from its node_modules).
import { cp, mkdir, mkdtemp, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { ensurePulumi, projectRoot, pulumiEnvironment } from "../../src/workspace/index.ts";

export type PulumiSandbox = {
  env: Record<string, string>;
  /** The file backend's directory (stack state files live under .pulumi/stacks/). */
  backendDir: string;
  cleanup(): Promise<void>;
};

export async function pulumiSandbox(): Promise<PulumiSandbox> {
  await ensurePulumi();
  const dir = await mkdtemp(path.join(os.tmpdir(), "agent-iac-test-"));
  const backendDir = path.join(dir, "state");
  await mkdir(backendDir);
  const env = {
    ...pulumiEnvironment({ backendUrl: `file://${backendDir}`, pulumiHome: path.join(dir, "home"), base: {} }),
    PULUMI_CONFIG_PASSPHRASE: "test-passphrase",
  };
  return { env, backendDir, cleanup: () => rm(dir, { recursive: true, force: true }) };
}

/** Copies a directory into a fresh work dir under the checkout's gitignored .agent-iac/tests/. */
export async function projectCopy(source: string): Promise<{ dir: string; cleanup(): Promise<void> }> {
  const parent = path.join(projectRoot, ".agent-iac", "tests");
  await mkdir(parent, { recursive: true });
  const dir = await mkdtemp(path.join(parent, `${path.basename(source)}-`));
  await cp(source, dir, { recursive: true });
  return { dir, cleanup: () => rm(dir, { recursive: true, force: true }) };
}
