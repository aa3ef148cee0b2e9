// The policy configuration (the file `--policy-pack-config` and `validate --policy` take): each
// key a rule or "all", each value a level or an object with enforcementLevel and the settings.
import { readFile } from "node:fs/promises";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { configSchema, PolicyConfigError, RULES, ruleSetups } from "../../src/policy/index.ts";
import { projectRoot } from "../../src/workspace/index.ts";

/** Each rule's level under `config`, by rule name. */
const levels = (config: unknown) => Object.fromEntries(ruleSetups(config).map((s) => [s.rule.name, s.level]));
const setup = (config: unknown, name: string) => ruleSetups(config).find((s) => s.rule.name === name);
const error = (config: unknown) => {
  try {
    ruleSetups(config);
  } catch (e) {
    expect(e).toBeInstanceOf(PolicyConfigError);
    return (e as Error).message;
  }
  throw new Error("no error");
};

describe("policy config parsing", () => {
  it("{}: every rule advisory with its defaults (forbidden patterns on, the others not checking)", () => {
    const setups = ruleSetups({});
    expect(setups.map((s) => s.rule.name)).toEqual(RULES.map((r) => r.name));
    expect(new Set(setups.map((s) => s.level))).toEqual(new Set(["advisory"]));
    expect(setup({}, "agent-prompt-forbidden-patterns")?.settings).toEqual({ patterns: [], replaceDefaults: false });
    expect(setup({}, "procedure-post-url-hosts")?.settings).toEqual({ httpsOnly: true });
    expect(setup({}, "agent-allowed-models")?.settings).toEqual({});
  });

  it("names an unknown rule, and lists the known ones", () => {
    const message = error({ "agent-allowed-model": { allowed: ["openai/*"] } });
    expect(message).toContain('unknown rule "agent-allowed-model"');
    expect(message).toContain("agent-allowed-models");
  });

  it("refuses a bad level, naming the rule (or all) and the levels", () => {
    expect(error({ "agent-allowed-models": "strict" })).toBe(
      "agent-allowed-models: enforcementLevel must be advisory, mandatory or disabled",
    );
    expect(error({ "agent-allowed-tools": { enforcementLevel: "warn", allowed: ["syscall/*"] } })).toMatch(
      /^agent-allowed-tools: enforcementLevel must be/,
    );
    expect(error({ all: "blocking" })).toMatch(/^all: enforcementLevel must be/);
    expect(error({ all: { enforcementLevel: 1 } })).toMatch(/^all: enforcementLevel must be/);
  });

  it("all sets every rule's level; a rule's own level wins over all", () => {
    expect(new Set(Object.values(levels({ all: "mandatory" })))).toEqual(new Set(["mandatory"]));
    expect(new Set(Object.values(levels({ all: { enforcementLevel: "disabled" } })))).toEqual(new Set(["disabled"]));
    const mixed = levels({
      all: "mandatory",
      "agent-voicemail": "disabled",
      "agent-prompt-length": { enforcementLevel: "advisory", max: 100 },
      "agent-allowed-models": { allowed: ["openai/*"] },
    });
    expect(mixed).toMatchObject({
      "agent-voicemail": "disabled",
      "agent-prompt-length": "advisory",
      "agent-allowed-models": "mandatory",
      "agent-chat-channel": "mandatory",
    });
  });

  it("counts remediate as mandatory (there is nothing to remediate)", () => {
    expect(levels({ "agent-allowed-models": "remediate" })["agent-allowed-models"]).toBe("mandatory");
  });

  it("parses each rule's settings next to its level, and refuses wrong or unknown settings by rule", () => {
    expect(
      setup({ "agent-prompt-length": { enforcementLevel: "mandatory", min: 10 } }, "agent-prompt-length"),
    ).toMatchObject({
      level: "mandatory",
      settings: { min: 10 },
    });
    expect(error({ "agent-prompt-length": { min: "ten" } })).toMatch(/^agent-prompt-length: .*min/);
    expect(error({ "agent-allowed-models": { allow: ["openai/*"] } })).toMatch(/^agent-allowed-models: .*allow/);
    expect(
      error({ "agent-prompt-forbidden-patterns": { patterns: [{ name: "broken", regex: "(unclosed" }] } }),
    ).toMatch(/^agent-prompt-forbidden-patterns: .*not a valid regular expression/);
    expect(error({ "agent-prompt-forbidden-patterns": { patterns: [{ name: "g", regex: "x", flags: "g" }] } })).toMatch(
      /only the flags i, m, s and u/,
    );
  });

  it("refuses a config that is not a JSON object", () => {
    for (const config of [null, [], "mandatory", 3]) {
      expect(error(config)).toBe("the policy config must be a JSON object keyed by rule name");
    }
  });
});

describe("the settings' JSON Schema (what Pulumi validates the config file with)", () => {
  it("describes each rule's settings and requires none", () => {
    for (const rule of RULES) {
      const schema = configSchema(rule);
      expect(schema.required, rule.name).toBeUndefined();
    }
    const forbidden = RULES.find((r) => r.name === "agent-prompt-forbidden-patterns");
    expect(Object.keys(configSchema(forbidden as (typeof RULES)[number]).properties).sort()).toEqual([
      "patterns",
      "replaceDefaults",
    ]);
    const models = RULES.find((r) => r.name === "agent-allowed-models");
    expect(Object.keys(configSchema(models as (typeof RULES)[number]).properties)).toEqual(["allowed"]);
  });
});

describe("the shipped prod config", () => {
  it("is the one the docs show (docs/operations.md)", async () => {
    const readme = await readFile(path.join(projectRoot, "docs", "operations.md"), "utf8");
    const shown = /`prod\.json`:\n\n```json\n([\s\S]*?)```/.exec(readme)?.[1];
    const file = await readFile(path.join(projectRoot, "policy-config", "prod.json"), "utf8");
    expect(JSON.parse(shown ?? "null")).toEqual(JSON.parse(file));
  });
});
