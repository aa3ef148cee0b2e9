// The stack's policy pack settings: a pack the stack names but that is not there is a configuration
// error (exit 2, naming the setting), never a preview or up that quietly runs without it.
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ConfigError } from "../../src/errors/index.ts";
import { configMapReader, policyPackOptions } from "../../src/settings/index.ts";

describe("policyPackOptions", () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), "agent-iac-policy-settings-"));
    await mkdir(path.join(dir, "policy"));
    await writeFile(path.join(dir, "policy", "PulumiPolicy.yaml"), "runtime: nodejs\n");
    await mkdir(path.join(dir, "not-a-pack"));
    await writeFile(path.join(dir, "dev.json"), "{}\n");
  });
  afterAll(() => rm(dir, { recursive: true, force: true }));
  const options = (config: Record<string, string>) =>
    policyPackOptions(
      configMapReader(Object.fromEntries(Object.entries(config).map(([k, v]) => [k, { value: v }]))),
      dir,
    );

  it("passes the pack and its config, resolved against the project", () => {
    expect(options({ "agents:policyPack": "policy", "agents:policyPackConfig": "dev.json" })).toEqual({
      policyPacks: [path.join(dir, "policy")],
      policyPackConfigs: [path.join(dir, "dev.json")],
    });
    expect(options({})).toEqual({});
  });

  it("refuses a pack or a config that is not there, naming the setting", () => {
    for (const [config, key] of [
      [{ "agents:policyPack": "missing" }, "agents:policyPack"],
      // Code the preview would run: only a pack of the project.
      [{ "agents:policyPack": "not-a-pack" }, "agents:policyPack"],
      [{ "agents:policyPack": "../policy" }, "agents:policyPack"],
      [{ "agents:policyPack": os.tmpdir() }, "agents:policyPack"],
      [{ "agents:policyPack": "policy", "agents:policyPackConfig": "/etc/hostname" }, "agents:policyPackConfig"],
      [{ "agents:policyPack": "policy", "agents:policyPackConfig": "prod.json" }, "agents:policyPackConfig"],
    ] as const) {
      let thrown: unknown;
      try {
        options(config);
      } catch (error) {
        thrown = error;
      }
      expect(thrown).toBeInstanceOf(ConfigError);
      expect((thrown as ConfigError).code).toBe("AGENT_IAC_CONFIG");
      expect((thrown as ConfigError).message).toContain(key);
      expect((thrown as ConfigError).message).toMatch(/does not exist|outside the project|not a policy pack/);
    }
  });
});
