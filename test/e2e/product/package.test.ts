// The packed package, used the way a team with its own Pulumi project uses it: `npm pack` of this
// checkout, `npm install` of the tarball into a copy of examples/typescript outside the checkout,
// the installed package's simulator and policy pack, a real `pulumi up`, `npx agent-iac smoke`, and
// a preview that shows no changes. Nothing of the checkout's sources is reachable from that project.
import { readdir, readFile, rm, writeFile } from "node:fs/promises";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { projectRoot } from "../../../src/workspace/index.ts";
import { type PackedProject, packedProject, run } from "../../helpers/packed.ts";
import { type PulumiSandbox, pulumiSandbox } from "../../helpers/pulumi.ts";
import { type StoredAgents, simulatorCall } from "../../helpers/simulator.ts";

const API_KEY = "sk-package-e2e-7f3b91c2d4";

/** Every file under `dir` (but node_modules) whose text holds `needle`. */
async function filesHolding(dir: string, needle: string): Promise<string[]> {
  const found: string[] = [];
  for (const entry of await readdir(dir, { recursive: true, withFileTypes: true })) {
    const file = path.join(entry.parentPath, entry.name);
    if (!entry.isFile() || file.split(path.sep).includes("node_modules")) continue;
    if ((await readFile(file, "utf8")).includes(needle)) found.push(file);
  }
  return found;
}

describe("the packed package in a project of its own", () => {
  let work: string;
  let project: string;
  let packedFiles: string[] = [];
  let packed: PackedProject;
  let sandbox: PulumiSandbox;
  let env: NodeJS.ProcessEnv;
  let sim: { url: string; apiKey: string };
  const printed: string[] = [];

  const pulumi = async (...args: string[]) => {
    const result = await run("pulumi", [...args, "--non-interactive"], project, env);
    printed.push(result.stdout, result.stderr);
    return result;
  };

  beforeAll(async () => {
    sandbox = await pulumiSandbox(); // its env's PATH has the Pulumi CLI and this Node first
    env = { ...process.env, ...sandbox.env, AGENT_IAC_API_KEY: API_KEY };
    packed = await packedProject("typescript", "package.md", env);
    ({ work, project, packedFiles, sim } = packed);
    expect((await pulumi("stack", "init", "dev")).code).toBe(0);
    expect((await pulumi("config", "set", "agents:baseUrl", sim.url)).code).toBe(0);
  }, 600_000);

  afterAll(async () => {
    await packed?.cleanup();
    await sandbox?.cleanup();
  });

  it("ships compiled JavaScript, types and the command, and no sources, tests or fixtures", () => {
    const files = packedFiles;
    for (const needed of ["dist/index.js", "dist/index.d.ts", "dist/provider/runtime.js", "bin/agent-iac.js"]) {
      expect(files).toContain(needed);
    }
    // The policy pack: its entry, the compiled rules it loads, and the CLI's launcher for Node.js packs.
    for (const needed of [
      "policy/PulumiPolicy.yaml",
      "policy/index.js",
      "policy/package.json",
      "dist/policy/pack.js",
      "dist/policy/rules.js",
      "scripts/pulumi-analyzer-policy",
    ]) {
      expect(files).toContain(needed);
    }
    expect(files.filter((f) => /^(src|test|examples|reports|agents\/.*\.yaml|prompts)\b/.test(f))).toEqual([]);
    expect(files.filter((f) => f.startsWith("dist/program."))).toEqual([]);
  });

  it("types the public API from the installed .d.ts files: the example checks, a wrong field does not", async () => {
    const tsc = path.join(projectRoot, "node_modules", "typescript", "bin", "tsc");
    const flags = ["--noEmit", "--strict", "--module", "nodenext", "--target", "es2024", "--skipLibCheck"];
    const example = await run(process.execPath, [tsc, ...flags, "index.ts"], project, env);
    expect(example.code, example.stdout).toBe(0);
    const wrong = path.join(project, "wrong.ts");
    await writeFile(
      wrong,
      'import { AgentDirectory, ConversationalAgent } from "agent-iac";\n' +
        'new ConversationalAgent("x", { name: "x", description: "d", config: { runtime: { model: 4 } } });\n' +
        'new AgentDirectory("y", { folder: "agents" });\n',
    );
    try {
      const checked = await run(process.execPath, [tsc, ...flags, "wrong.ts"], project, env);
      expect(checked.code).not.toBe(0);
      expect(checked.stdout).toMatch(/wrong\.ts\(2,.*'number' is not assignable/);
      expect(checked.stdout).toMatch(/wrong\.ts\(3,.*'folder'/);
    } finally {
      await rm(wrong);
    }
  }, 300_000);

  it("refuses a model without its vendor at preview, naming the resource and the field, and creates nothing", async () => {
    const index = path.join(project, "index.ts");
    const good = await readFile(index, "utf8");
    await writeFile(index, good.replace('model: "openai/gpt-4o",', 'model: "gpt-4o",'));
    try {
      const up = await pulumi("up", "--yes");
      expect(up.code).not.toBe(0);
      expect(up.stdout + up.stderr).toMatch(/front-desk.*config\.runtime\.model/);
      const stored = await simulatorCall<StoredAgents>(sim, "GET", "/_simulator/agents");
      expect([...stored.conversational, ...stored.procedural]).toEqual([]);
    } finally {
      await writeFile(index, good);
    }
  }, 300_000);

  it("fails the preview on a wrong agent file of an AgentDirectory at its file:line, with no stack trace", async () => {
    const file = path.join(project, "agents", "booking-summary.yaml");
    const good = await readFile(file, "utf8");
    await writeFile(file, good.replace("model: openai/gpt-4o-mini", "model: gpt-4o-mini"));
    try {
      const preview = await pulumi("preview");
      const output = preview.stdout + preview.stderr;
      expect(preview.code).not.toBe(0);
      expect(output).toMatch(
        /agents\/booking-summary\.yaml:7:\d+: config\.runtime\.model: must look like <vendor>\/<model name>/,
      );
      expect(output).not.toMatch(/^\s+at .*\.js:\d+/m);
    } finally {
      await writeFile(file, good);
    }
  }, 300_000);

  it("runs the installed policy pack in preview: a disallowed model (mandatory) and a phone number in a prompt", async () => {
    const file = path.join(project, "agents", "booking.yaml");
    const good = await readFile(file, "utf8");
    const config = path.join(work, "policy-prod.json");
    await writeFile(file, good.replace("text: You are Sam.", "text: You are Sam. Escalations go to +1 415 555 0100."));
    await writeFile(
      config,
      JSON.stringify({ "agent-allowed-models": { enforcementLevel: "mandatory", allowed: ["openai/gpt-4o-mini"] } }),
    );
    try {
      const pack = path.join("node_modules", "agent-iac", "policy");
      const preview = await pulumi("preview", "--policy-pack", pack, "--policy-pack-config", config);
      const output = preview.stdout + preview.stderr;
      expect(preview.code, output).not.toBe(0);
      // An agent declared in TypeScript and one from the folder, each by its key and field.
      expect(output).toMatch(
        /\[mandatory\]\s+agent-allowed-models\s+\(pulumi-nodejs:dynamic\/agents:ConversationalAgent: front-desk\)/,
      );
      expect(output).toContain('agent "front-desk": config.runtime.model "openai/gpt-4o": is not an approved model');
      expect(output).toContain('agent "booking": config.runtime.model "openai/gpt-4o"');
      expect(output).not.toMatch(/agent-allowed-models\s+\(\S+: (call-notes|booking-summary)\)/);
      // The default forbidden patterns, advisory: the number masked, never whole.
      expect(output).toMatch(/\[advisory\]\s+agent-prompt-forbidden-patterns\s+\(\S+ConversationalAgent: booking\)/);
      expect(output).toContain(
        'agent "booking": config.runtime.prompt.text "+1•••••••••••00": the prompt contains a phone number',
      );
      expect(output).not.toContain("415 555 0100");
      const stored = await simulatorCall<StoredAgents>(sim, "GET", "/_simulator/agents");
      expect([...stored.conversational, ...stored.procedural]).toEqual([]);
    } finally {
      await writeFile(file, good);
    }
  }, 300_000);

  it("deploys agents declared in TypeScript and a folder of agent files, linked by id on the service", async () => {
    const up = await pulumi("up", "--yes");
    expect(up.code, up.stdout + up.stderr).toBe(0);
    const outputs = await pulumi("stack", "output", "--json");
    const { versions } = JSON.parse(outputs.stdout) as { versions: Record<string, string> };
    expect(Object.keys(versions).sort()).toEqual(["booking", "booking-summary", "call-notes", "front-desk"]);
    for (const version of Object.values(versions)) expect(version).toMatch(/^(ca|pa)_[A-Za-z0-9_-]+@v1$/);

    const stored = await simulatorCall<StoredAgents>(sim, "GET", "/_simulator/agents");
    const idOf = (version: string | undefined) => version?.split("@")[0];
    const linksOf = (key: string) =>
      stored.conversational.find((agent) => agent.id === idOf(versions[key]))?.postprocess_agents;
    expect(linksOf("front-desk")).toEqual([idOf(versions["call-notes"])]);
    expect(linksOf("booking")).toEqual([idOf(versions["booking-summary"])]);
  }, 300_000);

  it("plan --behave plays the scenarios of an agent declared in TypeScript (smoke/front-desk.yaml), as smoke does", async () => {
    const index = path.join(project, "index.ts");
    const good = await readFile(index, "utf8");
    // The scenario expects "this is Ada": with the persona renamed, the preview must fail like smoke would.
    await writeFile(index, good.replaceAll("Ada", "Eve"));
    try {
      const plan = await run("npx", ["agent-iac", "plan", "--stack", "dev", "--behave"], project, env);
      printed.push(plan.stdout, plan.stderr);
      expect(plan.stdout + plan.stderr).not.toMatch(/no smoke scenarios/);
      expect(plan.code, plan.stdout + plan.stderr).toBe(1);
      expect(plan.stderr).toMatch(/behaviour preview: front-desk against ca_\S+@v1 with override_config/);
      expect(plan.stdout).toMatch(/greets-and-takes-notes/);
      expect(plan.stdout).toMatch(/this is Ada/);
      expect(plan.stdout).toMatch(/0 passed, 1 failed/);
    } finally {
      await writeFile(index, good);
    }
  }, 300_000);

  it("smoke-calls both kinds of agents with `npx agent-iac smoke` in that project", async () => {
    const smoke = await run(
      "npx",
      ["agent-iac", "smoke", "--stack", "dev", "--json", "smoke.json", "--record", "recordings"],
      project,
      env,
    );
    printed.push(smoke.stdout, smoke.stderr);
    expect(smoke.code, smoke.stdout + smoke.stderr).toBe(0);
    expect(smoke.stdout).toMatch(/front-desk\/greets-and-takes-notes/);
    expect(smoke.stdout).toMatch(/booking\/greets/);
    expect(smoke.stdout).toMatch(/^2 passed, 0 failed$/m);
    printed.push(await readFile(path.join(project, "reports", "smoke.json"), "utf8"));
  }, 300_000);

  it("replays the recordings offline, the TypeScript-declared agent's scenario (smoke/front-desk.yaml) included", async () => {
    const replay = await run("npx", ["agent-iac", "smoke", "--stack", "dev", "--replay", "recordings"], project, env);
    printed.push(replay.stdout, replay.stderr);
    expect(replay.code, replay.stdout + replay.stderr).toBe(0);
    expect(replay.stdout + replay.stderr).not.toMatch(/no such scenario in the agent files/);
    expect(replay.stdout).toMatch(/front-desk\/greets-and-takes-notes/);
    expect(replay.stdout).toMatch(/^2 passed, 0 failed$/m);
  }, 300_000);

  it("validates the agent files and renders a plan with the installed command", async () => {
    const validate = await run("npx", ["agent-iac", "validate", "agents", "--stack", "dev"], project, env);
    expect(validate.code, validate.stdout + validate.stderr).toBe(0);
    const plan = await run("npx", ["agent-iac", "plan", "--stack", "dev", "--markdown", "plan.md"], project, env);
    printed.push(plan.stdout, plan.stderr);
    expect(plan.code, plan.stdout + plan.stderr).toBe(0);
    const markdown = await readFile(path.join(project, "reports", "plan.md"), "utf8");
    printed.push(markdown);
    // Every agent the stack holds, declared either way: nothing to change right after the deploy.
    expect(markdown).toMatch(/No changes: 4 agent\(s\) unchanged/);
  }, 300_000);

  it("previews no changes after the deploy, and the key is in no file, output or log", async () => {
    const preview = await pulumi("preview", "--expect-no-changes");
    expect(preview.code, preview.stdout + preview.stderr).toBe(0);
    printed.push((await pulumi("stack", "output", "--json", "--show-secrets")).stdout);
    printed.push((await pulumi("stack", "export", "--show-secrets")).stdout);
    expect(printed.filter((text) => text.includes(API_KEY))).toEqual([]);
    expect(await filesHolding(project, API_KEY)).toEqual([]);
    expect(await filesHolding(sandbox.backendDir, API_KEY)).toEqual([]);
  }, 300_000);
});
