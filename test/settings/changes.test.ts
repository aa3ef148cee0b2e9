// Stack-setting changes against a pull request's base: each changed agents:* setting, connection and
// policy first, secrets as "changed" only; the guarded ones read from the base; and how the plan
// shows them (first, marked, with what the deploy would do after merge).
import { mkdtemp, readFile, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { emitReport, planMarkdown } from "../../src/report/index.ts";
import type { Plan } from "../../src/results/index.ts";
import { settingChanges, stackFiles, withBaseSettings } from "../../src/settings/index.ts";

/** A Pulumi.prod.yaml's settings as src/settings reads them (a project with no Pulumi.yaml). */
const stackFileSettings = async (text: string, where = "") =>
  (await stackFiles(async (file) => (file === "Pulumi.prod.yaml" ? text : undefined), "prod", where)).settings;

const BASE = `config:
  agents:dir: agents
  agents:baseUrl: https://api.service.example
  agents:apiKey:
    secure: v1:AAAAbaseciphertext
  agents:policyPack: policy
  agents:policyPackConfig: policy-config/prod.json
  other:setting: x
`;
const HEAD = `config:
  agents:dir: agents
  agents:baseUrl: http://collector.example:8080
  agents:apiKey:
    secure: v1:BBBBheadciphertext
  agents:judgeModel: gpt-judge
  agents:policyPackConfig: policy-config/prod.json
  other:setting: y
`;

const baseSettings = await stackFileSettings(BASE, " at origin/main");
const headSettings = await stackFileSettings(HEAD);

describe("settingChanges", () => {
  const base = baseSettings;
  const head = headSettings;

  it("lists each changed agents:* setting, connection then judge then policy, secrets without values", () => {
    expect(settingChanges(base, head)).toEqual([
      {
        key: "agents:baseUrl",
        change: "changed",
        before: "https://api.service.example",
        after: "http://collector.example:8080",
        secret: false,
        guarded: true,
      },
      { key: "agents:apiKey", change: "changed", secret: true, guarded: true },
      { key: "agents:judgeModel", change: "added", after: "gpt-judge", secret: false, guarded: true },
      { key: "agents:policyPack", change: "removed", before: "policy", secret: false, guarded: true },
    ]);
    expect(settingChanges(base, base)).toEqual([]);
    // A stack file the base does not have: every setting is added.
    expect(settingChanges({}, head).map((c) => c.change)).toEqual(Array(5).fill("added"));
  });

  it("reads the guarded settings from the base and every other from the head", async () => {
    // Pulumi's reader of the head: secrets decrypted.
    const decrypted: Record<string, string> = { "agents:apiKey": "sk-head-key", "agents:judgeApiKey": "sk-judge" };
    const headReader = (key: string) => decrypted[key] ?? head[key]?.value;
    const read = withBaseSettings(headReader, { base, head });
    expect(read("agents:baseUrl")).toBe("https://api.service.example");
    expect(read("agents:policyPack")).toBe("policy");
    expect(read("agents:judgeBaseUrl")).toBeUndefined();
    // Added by the head: unset (the environment's, if any), never the head's.
    expect(read("agents:judgeModel")).toBeUndefined();
    // A secret the head changed: the base's cannot be read here, so unset; never the head's.
    expect(read("agents:apiKey")).toBeUndefined();
    // Unchanged: the head's value is the base's (a secret's decrypted one too).
    expect(read("agents:policyPackConfig")).toBe("policy-config/prod.json");
    const same = await stackFileSettings(`config:\n  agents:judgeApiKey:\n    secure: v1:CCCC\n`);
    expect(withBaseSettings(headReader, { base: same, head: same })("agents:judgeApiKey")).toBe("sk-judge");
    // Not guarded: the head's.
    expect(read("agents:dir")).toBe("agents");
  });

  it("refuses a stack file that is not YAML, naming it", async () => {
    await expect(stackFileSettings("config: [", " at origin/main")).rejects.toThrow(
      /Pulumi\.prod\.yaml at origin\/main/,
    );
  });

  it("shows the changes first in the plan, the guarded ones marked with what the deploy would do, no secret", () => {
    const plan: Plan = {
      kind: "plan",
      stack: "prod",
      agents: [],
      overlays: [],
      settings: { base: "origin/main", changes: settingChanges(base, head) },
    };
    const markdown = planMarkdown(plan);
    expect(markdown.indexOf("### ⚠️ Stack settings changed (against `origin/main`)")).toBeGreaterThan(0);
    expect(markdown.indexOf("Stack settings changed")).toBeLessThan(markdown.indexOf("No changes"));
    expect(markdown).toContain("**A human must review this:**");
    expect(markdown).toContain(
      "- ⚠️ `agents:baseUrl`: `https://api.service.example` → `http://collector.example:8080` — **after merge, the `prod` deploy sends its API key to `http://collector.example:8080`**",
    );
    expect(markdown).toContain(
      "- ⚠️ `agents:apiKey`: changed (secret, value not shown) — **after merge, the `prod` deploy sends the new value as its API key to the service**",
    );
    expect(markdown).not.toMatch(/ciphertext/);
  });
});

describe("settings against the last deploy (a plan without a base)", () => {
  const deployed = baseSettings;
  const now = headSettings;

  it("holds nothing: the guarded settings are listed like the others, the values in use are the stack's", () => {
    const changes = settingChanges(deployed, now, { guard: false });
    expect(changes.map((c) => c.key)).toEqual([
      "agents:baseUrl",
      "agents:apiKey",
      "agents:judgeModel",
      "agents:policyPack",
    ]);
    expect(changes.every((c) => !c.guarded)).toBe(true);
  });

  it("says what it compared with: the last deploy's update, or the first deploy", () => {
    const changes = settingChanges(deployed, now, { guard: false });
    const plan = (settings: Plan["settings"]): Plan => ({
      kind: "plan",
      stack: "prod",
      agents: [],
      overlays: [],
      settings,
    });
    const since = planMarkdown(plan({ deployed: { update: 7, ended: "2026-11-26T06:38:43.000Z" }, changes }));
    expect(since).toContain("### Stack settings changed since the last deploy (update 7, 2026-11-26T06:38:43.000Z)");
    expect(since).not.toContain("A human must review this");
    expect(since).not.toContain("⚠️");
    expect(since).toContain("- `agents:baseUrl`: `https://api.service.example` → `http://collector.example:8080`\n");
    const first = planMarkdown(plan({ deployed: { first: true }, changes: settingChanges({}, now, { guard: false }) }));
    expect(first).toContain("### Stack settings of the first deploy (the stack has never been deployed)");
    expect(first).toContain("- `agents:apiKey`: added (secret, value not shown)");
  });
});

describe("the plan's job summary", () => {
  it("shows no ✅ when the behaviour preview played nothing: it says what changed and that nothing was played", async () => {
    const dir = await mkdtemp(path.join(os.tmpdir(), "agent-iac-plan-summary-"));
    const file = path.join(dir, "summary.md");
    const created = (agent: string) => ({
      agent,
      kind: "conversational" as const,
      action: "create" as const,
      why: "new agent",
      fields: [],
      promptDiffs: {},
    });
    const plan: Plan = {
      kind: "plan",
      stack: "staging",
      agents: [created("line-1"), created("line-2")],
      overlays: [],
      behave: {
        previewed: [],
        not_previewed: [
          { agent: "line-1", reason: "a new agent has no version to play against" },
          { agent: "line-2", reason: "a new agent has no version to play against" },
        ],
        scenarios: 0,
        passed: 0,
        failed: 0,
        errors: 0,
      },
    };
    try {
      await emitReport(plan, { within: os.tmpdir(), env: { GITHUB_STEP_SUMMARY: file } });
      const summary = await readFile(file, "utf8");
      expect(summary).toContain(
        "### Agent plan for stack `staging`: 2 agent(s) change; no scenario played (2 changed agent(s) could not be previewed",
      );
      expect(summary).not.toContain("✅");
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it("is ❌ with the reasons when a guarded setting changed, never the behaviour preview's ✅", async () => {
    const dir = await mkdtemp(path.join(os.tmpdir(), "agent-iac-plan-summary-"));
    const file = path.join(dir, "summary.md");
    const plan: Plan = {
      kind: "plan",
      stack: "prod",
      agents: [],
      overlays: [],
      settings: {
        base: "origin/main",
        changes: [{ key: "agents:judgeBaseUrl", change: "added", after: "http://x", secret: false, guarded: true }],
      },
    };
    try {
      await emitReport(plan, { within: os.tmpdir(), env: { GITHUB_STEP_SUMMARY: file } });
      const summary = await readFile(file, "utf8");
      expect(summary).toMatch(/^### ❌ Agent plan for stack `prod`: the pull request changes `agents:judgeBaseUrl`/);
      expect(summary).not.toContain("✅");
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
