// Real Pulumi runs for tests: a temp file backend and a private PULUMI_HOME per test file, and
// project directories inside the checkout (so `@pulumi/pulumi` resolves from its node_modules).
import { cp, mkdir, mkdtemp, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { projectRoot, pulumiEnvironment, toolchainPath } from "../../src/workspace/index.ts";
import { type Postgres, startPostgres } from "./postgres.ts";

export type PulumiSandbox = {
  env: Record<string, string>;
  /** The file backend's directory (stack state files live under .pulumi/stacks/); "" on Postgres. */
  backendDir: string;
  /** The database of a Postgres backend (to dump and search it). */
  postgres?: Postgres;
  cleanup(): Promise<void>;
};

export type Backend = "file" | "postgres";

/** A private PULUMI_HOME and a fresh backend: a temp directory, or a database on a real Postgres. */
export async function pulumiSandbox(options: { backend?: Backend } = {}): Promise<PulumiSandbox> {
  // The toolchain on the sandbox's PATH: the CLI runs the tests spawn themselves find it there.
  const PATH = await toolchainPath(process.env.PATH);
  const dir = await mkdtemp(path.join(os.tmpdir(), "agent-iac-test-"));
  const postgres = options.backend === "postgres" ? await startPostgres() : undefined;
  const backendDir = postgres ? "" : path.join(dir, "state");
  if (backendDir) await mkdir(backendDir);
  const backendUrl = postgres ? postgres.url : `file://${backendDir}`;
  const env = {
    ...pulumiEnvironment({ backendUrl, pulumiHome: path.join(dir, "home"), base: {}, projectDir: dir }),
    PULUMI_CONFIG_PASSPHRASE: "test-passphrase",
    PATH,
  };
  const cleanup = async () => {
    await postgres?.stop();
    await rm(dir, { recursive: true, force: true });
  };
  return { env, backendDir, ...(postgres ? { postgres } : {}), cleanup };
}

/** Copies a directory into a fresh work dir under the checkout's gitignored .agent-iac/tests/. */
export async function projectCopy(source: string): Promise<{ dir: string; cleanup(): Promise<void> }> {
  const parent = path.join(projectRoot, ".agent-iac", "tests");
  await mkdir(parent, { recursive: true });
  const dir = await mkdtemp(path.join(parent, `${path.basename(source)}-`));
  await cp(source, dir, { recursive: true });
  return { dir, cleanup: () => rm(dir, { recursive: true, force: true }) };
}
