// The local-only passphrase applies only to the checkout's own file backend; elsewhere a stack
// needs a passphrase or another secrets provider (a configuration error before Pulumi writes anything).
import { mkdir, mkdtemp, rm, stat } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  assertSecretsProvider,
  LOCAL_PASSPHRASE,
  localBackendDir,
  pulumiEnvironment,
} from "../../src/workspace/index.ts";

describe("passphrase policy", () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), "agent-iac-passphrase-"));
  });
  afterAll(() => rm(dir, { recursive: true, force: true }));

  it("uses the local-only passphrase on the checkout's backend only", () => {
    const home = path.join(dir, "home");
    expect(pulumiEnvironment({ base: {}, pulumiHome: home, projectDir: dir }).PULUMI_CONFIG_PASSPHRASE).toBe(
      LOCAL_PASSPHRASE,
    );
    expect(pulumiEnvironment({ base: {}, pulumiHome: home, projectDir: dir }).PULUMI_BACKEND_URL).toBe(
      `file://${localBackendDir(dir)}`,
    );
    const elsewhere = pulumiEnvironment({ base: {}, pulumiHome: home, backendUrl: `file://${dir}`, projectDir: dir });
    expect(elsewhere.PULUMI_CONFIG_PASSPHRASE).toBeUndefined();
    const own = pulumiEnvironment({
      base: { PULUMI_CONFIG_PASSPHRASE_FILE: "/run/pass" },
      pulumiHome: home,
      projectDir: dir,
    });
    expect(own).toMatchObject({ PULUMI_CONFIG_PASSPHRASE_FILE: "/run/pass" });
    expect(own.PULUMI_CONFIG_PASSPHRASE).toBeUndefined();
  });

  it("keeps the default backend in the project it runs for, created only when used (never in node_modules)", async () => {
    const home = path.join(dir, "home");
    const project = path.join(dir, "their-project");
    await mkdir(project);
    const env = pulumiEnvironment({ base: {}, pulumiHome: home, projectDir: project });
    expect(env.PULUMI_BACKEND_URL).toBe(`file://${path.join(project, ".pulumi-state")}`);
    expect(env.PULUMI_CONFIG_PASSPHRASE).toBe(LOCAL_PASSPHRASE);
    expect((await stat(path.join(project, ".pulumi-state"))).isDirectory()).toBe(true);
    const other = path.join(dir, "chose-a-backend");
    await mkdir(other);
    pulumiEnvironment({ base: {}, pulumiHome: home, projectDir: other, backendUrl: `file://${dir}` });
    await expect(stat(path.join(other, ".pulumi-state"))).rejects.toThrow();
  });

  it("refuses a passphrase stack on another self-managed backend without a passphrase (a configuration error)", async () => {
    const env = { PULUMI_BACKEND_URL: `s3://bucket/state`, PULUMI_HOME: path.join(dir, "home") };
    expect(() => assertSecretsProvider(undefined, dir, "staging", env)).toThrow(
      expect.objectContaining({ code: "AGENT_IAC_CONFIG", message: expect.stringContaining("needs a passphrase") }),
    );
    // With a passphrase, another secrets provider in the stack file, or a Pulumi Cloud backend: fine.
    expect(() =>
      assertSecretsProvider(undefined, dir, "staging", { ...env, PULUMI_CONFIG_PASSPHRASE: "x" }),
    ).not.toThrow();
    expect(() => assertSecretsProvider("awskms://alias/agents", dir, "kms", env)).not.toThrow();
    expect(() => assertSecretsProvider("passphrase", dir, "pass", env)).toThrow(/needs a passphrase/);
    expect(() =>
      assertSecretsProvider(undefined, dir, "staging", { PULUMI_BACKEND_URL: "https://api.pulumi.com" }),
    ).not.toThrow();
  });
});
