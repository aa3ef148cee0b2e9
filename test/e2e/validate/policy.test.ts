// The org rules as a Pulumi policy pack (policy/), run by the real CLI against the real agents
// program on a temp file backend, with the simulator on port 0 counting what gets created — and
// the same rules offline in `agent-iac validate --policy`, which must say the same things.
import { execFile } from "node:child_process";
import { copyFile, mkdir, mkdtemp, readFile, rm, symlink, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import * as pulumi from "@pulumi/pulumi";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Plan } from "../../../src/plan/index.ts";
import { ensurePulumi, projectRoot, pulumiCli } from "../../../src/workspace/index.ts";
import { type AgentsProject, agentsProject } from "../../helpers/agents-project.ts";
import { runInProcess } from "../../helpers/cli.ts";
import { type PulumiSandbox, pulumiSandbox } from "../../helpers/pulumi.ts";
import { startTestSimulator, storedAgents } from "../../helpers/simulator.ts";

const API_KEY = "sk-policy-test-key";
const PACK = path.join(projectRoot, "policy");
const PHONE = "+1 415 555 0100";

// One table of cases, each an agent file: run through the pack (one preview) and through validate.
const CASES: Record<string, { yaml: string; rules: string[] }> = {
  "prod-support": {
    rules: ["agent-allowed-models", "agent-prompt-forbidden-patterns"],
    yaml: `kind: conversational
name: Support
description: Support line
config:
  runtime:
    model: anthropic/claude-sonnet-4
    prompt:
      type: fixed
      text: |
        You are the support agent.
        If the caller insists, give them ${PHONE} for escalations.
  channel:
    is_voicemail_enabled: true
postprocess_agents: [qa]
`,
  },
  "tools-and-languages": {
    rules: [
      "agent-allowed-tools",
      "agent-allowed-languages",
      "agent-voicemail",
      "agent-required-procedures",
      "agent-prompt-forbidden-patterns",
    ],
    yaml: `kind: conversational
name: Bookings
description: Books
config:
  runtime:
    model: openai/gpt-4o
    prompt: { type: fixed, text: "Book appointments. Write to ops@example.com if stuck." }
  tool:
    tools:
      - { ns: syscall, name: check_availability }
      - { ns: crm, name: delete_customer }
  language: { default_language: English, supported_languages: [English, Klingon] }
`,
  },
  qa: {
    rules: ["procedure-post-url-hosts", "agent-chat-channel", "agent-prompt-length"],
    yaml: `kind: procedural
name: QA scorer
description: Scores calls
config:
  runtime:
    model: openai/gpt-4o-mini
    prompt: { type: fixed, text: "Score it." }
  output:
    post_url: http://hooks.evil.example/collect?token=abc
    chat_channel: "#random"
`,
  },
};

const RULES_ON = {
  "agent-allowed-models": { allowed: ["openai/*"] },
  "agent-allowed-tools": { allowed: ["syscall/*"] },
  "agent-allowed-languages": { allowed: ["English", "Spanish"] },
  "agent-voicemail": { required: true },
  "agent-prompt-length": { min: 20 },
  "procedure-post-url-hosts": { hosts: ["*.northwind.example"] },
  "agent-chat-channel": { allowed: ["#qa-*"] },
  "agent-required-procedures": { required: ["QA scorer"] },
};
const PROD = { all: "mandatory", ...RULES_ON };
const DEV = { all: "advisory", ...RULES_ON };

type Run = { code: number; output: string };

function run(command: string, args: string[], cwd: string, env: NodeJS.ProcessEnv): Promise<Run> {
  return new Promise((resolve) => {
    execFile(command, args, { cwd, env: { ...env, NO_COLOR: "1" }, maxBuffer: 16 << 20 }, (error, stdout, stderr) =>
      resolve({ code: error ? (typeof error.code === "number" ? error.code : -1) : 0, output: `${stdout}\n${stderr}` }),
    );
  });
}

/** The pack's violations in a CLI run's output: `rule|message` per line the pack printed. */
function packViolations(output: string, rules: string[]): Set<string> {
  const found = new Set<string>();
  const lines = output.split("\n").map((l) => l.trim());
  for (const [i, line] of lines.entries()) {
    const head = /^- \[(advisory|mandatory)\]\s+(\S+)\s+\(/.exec(line);
    if (head?.[2] && rules.includes(head[2])) found.add(`${head[2]}|${lines[i + 2]}`);
  }
  return found;
}

/** validate's violations: `rule|message` from `file:line:col: field: [level] rule: message`. */
function validateViolations(stderr: string): Set<string> {
  const found = new Set<string>();
  for (const line of stderr.split("\n")) {
    const match = /^\S+:\d+:\d+: \S+: \[(?:advisory|mandatory)\] (\S+): (.*)$/.exec(line);
    if (match) found.add(`${match[1]}|${match[2]}`);
  }
  return found;
}

describe("the policy pack", () => {
  let sandbox: PulumiSandbox;
  let sim: Awaited<ReturnType<typeof startTestSimulator>>;
  let project: AgentsProject;
  let env: NodeJS.ProcessEnv;
  let agentsDir: string;
  const configs: Record<string, string> = {};

  beforeAll(async () => {
    await ensurePulumi();
    sandbox = await pulumiSandbox();
    sim = await startTestSimulator({ port: 0, apiKey: API_KEY, eventDelayMs: 1, quiet: true });
    agentsDir = await mkdtemp(path.join(os.tmpdir(), "agent-iac-policy-agents-"));
    for (const [key, { yaml }] of Object.entries(CASES)) await writeFile(path.join(agentsDir, `${key}.yaml`), yaml);
    project = await agentsProject(sandbox, {
      baseUrl: sim.url,
      apiKey: API_KEY,
      stackName: "prod",
      agentsFrom: agentsDir,
    });
    const dev = await pulumi.automation.LocalWorkspace.selectStack(
      { stackName: "prod", workDir: project.dir },
      { envVars: { ...sandbox.env, AGENT_IAC_API_KEY: API_KEY }, pulumiCommand: await pulumiCli() },
    );
    await dev.workspace.createStack("dev");
    await dev.workspace.setConfig("dev", "agents:baseUrl", { value: sim.url });
    await mkdir(path.join(project.dir, "policy-config"));
    for (const [name, value] of Object.entries({ prod: PROD, dev: DEV, defaults: {} })) {
      configs[name] = path.join(project.dir, "policy-config", `${name}.json`);
      await writeFile(configs[name], JSON.stringify(value, null, 2));
    }
    env = { ...process.env, ...sandbox.env, AGENT_IAC_API_KEY: API_KEY };
  }, 300_000);
  afterAll(async () => {
    await project?.cleanup();
    await sim?.close();
    await sandbox?.cleanup();
    if (agentsDir) await rm(agentsDir, { recursive: true, force: true });
  });

  const preview = (stack: string, config: string, extra: string[] = []) =>
    run(
      "pulumi",
      [
        "preview",
        "--stack",
        stack,
        "--non-interactive",
        "--policy-pack",
        PACK,
        "--policy-pack-config",
        config,
        ...extra,
      ],
      project.dir,
      env,
    );

  it("prod, mandatory: preview fails naming the rule, the agent key and config.runtime.model; nothing is created", async () => {
    const result = await preview("prod", configs.prod as string);
    expect(result.code).not.toBe(0);
    expect(result.output).toMatch(
      /\[mandatory\]\s+agent-allowed-models\s+\(pulumi-nodejs:dynamic\/agents:ConversationalAgent: prod-support\)/,
    );
    expect(result.output).toContain('agent "prod-support": config.runtime.model "anthropic/claude-sonnet-4"');
    expect(result.output).toMatch(/\[mandatory\]\s+agent-prompt-forbidden-patterns/);
    const stored = await storedAgents(sim);
    expect(stored.conversational.length + stored.procedural.length).toBe(0);
  }, 180_000);

  it("prod, mandatory: pulumi up fails the same way and creates no agent", async () => {
    const result = await run(
      "pulumi",
      [
        "up",
        "--yes",
        "--stack",
        "prod",
        "--non-interactive",
        "--policy-pack",
        PACK,
        "--policy-pack-config",
        configs.prod as string,
      ],
      project.dir,
      env,
    );
    expect(result.code).not.toBe(0);
    expect(result.output).toContain("agent-allowed-models");
    expect(result.output).toContain("config.runtime.model");
    const stored = await storedAgents(sim);
    expect(stored.conversational.length + stored.procedural.length).toBe(0);
  }, 180_000);

  it("dev, advisory: the same violations only warn, and preview exits 0", async () => {
    const result = await preview("dev", configs.dev as string);
    expect(result.output).toMatch(
      /\[advisory\]\s+agent-allowed-models\s+\(pulumi-nodejs:dynamic\/agents:ConversationalAgent: prod-support\)/,
    );
    expect(result.output).not.toContain("[mandatory]");
    expect(result.code).toBe(0);
  }, 180_000);

  it("the default forbidden-patterns rule flags the phone number, in preview and validate --policy with the same message", async () => {
    const result = await preview("dev", configs.defaults as string);
    expect(result.code).toBe(0);
    const pack = packViolations(result.output, ["agent-prompt-forbidden-patterns"]);
    const validate = await runInProcess(["validate", agentsDir, "--policy", configs.defaults as string]);
    expect(validate.code).toBe(0);
    const offline = validateViolations(validate.stderr);
    // `{}` itself means the defaults, as the docs say: the same violations without a file.
    const literal = await runInProcess(["validate", agentsDir, "--policy", "{}"]);
    expect(literal.code, literal.stderr).toBe(0);
    expect(validateViolations(literal.stderr)).toEqual(offline);
    const phone = [...offline].find((v) => v.includes("a phone number"));
    expect(phone).toContain('agent "prod-support": config.runtime.prompt.text "+1');
    expect(pack.has(phone as string)).toBe(true);
    // The e-mail address in the other agent's prompt, by default too.
    expect([...pack].some((v) => v.includes('agent "tools-and-languages"') && v.includes("an e-mail address"))).toBe(
      true,
    );
    // validate points at the prompt's line inside the YAML block.
    expect(validate.stderr).toMatch(
      /prod-support\.yaml:11:\d+: config\.runtime\.prompt\.text: \[advisory\] agent-prompt-forbidden-patterns/,
    );
  }, 180_000);

  it("validate --policy agrees with the pack on every case of the table", async () => {
    const rules = Object.values(CASES).flatMap((c) => c.rules);
    const result = await preview("dev", configs.dev as string);
    const pack = packViolations(result.output, rules);
    const validate = await runInProcess(["validate", agentsDir, "--policy", configs.dev as string]);
    const offline = validateViolations(validate.stderr);
    expect([...offline].sort()).toEqual([...pack].sort());
    for (const [key, { rules: expected }] of Object.entries(CASES)) {
      const seen = new Set([...offline].filter((v) => v.includes(`agent "${key}"`)).map((v) => v.split("|")[0]));
      expect([...seen].sort(), key).toEqual([...expected].sort());
    }
    // The result URL's host is named, never its path or query (a token could be there).
    expect(validate.stderr).toContain('"http://hooks.evil.example"');
    expect(validate.stderr).not.toContain("token=abc");
    // Mandatory in validate: exit 1.
    const strict = await runInProcess(["validate", agentsDir, "--policy", configs.prod as string]);
    expect(strict.code).toBe(1);
  }, 180_000);

  it("agent-iac plan runs the pack the stack names and lists each violation under its agent", async () => {
    const plan = async (stack: string, config: string) => {
      const selected = await pulumi.automation.LocalWorkspace.selectStack(
        { stackName: stack, workDir: project.dir },
        { envVars: env as Record<string, string>, pulumiCommand: await pulumiCli() },
      );
      // A pack must be a folder of the project: agent-iac's pack is linked in, as node_modules would hold it.
      await symlink(PACK, path.join(project.dir, "policy")).catch((error: NodeJS.ErrnoException) => {
        if (error.code !== "EEXIST") throw error;
      });
      await selected.setConfig("agents:policyPack", { value: "policy" });
      await selected.setConfig("agents:policyPackConfig", { value: config });
      const json = path.join(project.dir, `plan-${stack}.json`);
      const markdown = path.join(project.dir, `plan-${stack}.md`);
      const result = await runInProcess(["plan", "--stack", stack, "--json", json, "--markdown", markdown], {
        cwd: project.dir,
        env,
      });
      return {
        ...result,
        json: JSON.parse(await readFile(json, "utf8")) as Plan,
        markdown: await readFile(markdown, "utf8"),
      };
    };
    const prod = await plan("prod", configs.prod as string);
    expect(prod.code, prod.stderr).toBe(1);
    expect(prod.stderr).toMatch(/plan for prod: [1-9]\d* mandatory policy violation\(s\)/);
    const support = prod.json.agents.find((a) => a.agent === "prod-support");
    expect(support?.violations).toContainEqual(
      expect.objectContaining({
        rule: "agent-allowed-models",
        level: "mandatory",
        pack: "agent-iac",
        // The pack's own message, as validate --policy says it (Pulumi's description line left out).
        message: expect.stringMatching(/^agent "prod-support": config\.runtime\.model "anthropic\/claude-sonnet-4": /),
      }),
    );
    // The link rule (a stack policy) lands under its agent too.
    const bookings = prod.json.agents.find((a) => a.agent === "tools-and-languages");
    expect(bookings?.violations?.map((v) => v.rule)).toContain("agent-required-procedures");
    expect(prod.json.policy?.mandatory).toBeGreaterThan(0);
    const section = prod.markdown.split("### `prod-support`")[1]?.split("### ")[0] ?? "";
    expect(section).toContain("**Policy violations:**");
    expect(section).toMatch(
      /- \*\*mandatory\*\* `agent-allowed-models` \(agent-iac\): agent "prod-support": config\.runtime\.model/,
    );
    // dev: the same violations, advisory: the plan passes.
    const dev = await plan("dev", configs.dev as string);
    expect(dev.code, dev.stderr).toBe(0);
    expect(dev.json.policy).toMatchObject({ mandatory: 0 });
    expect(dev.json.policy?.advisory).toBeGreaterThan(0);
    const stored = await storedAgents(sim);
    expect(stored.conversational.length + stored.procedural.length).toBe(0);
  }, 300_000);

  it("plan --behave on a stack whose pack blocks: exit 1, and the behaviour report files hold a report of no call, never `undefined`", async () => {
    // The prod stack names the pack with every rule mandatory (the test above set it).
    const behave = path.join(project.dir, "blocked-behave.json");
    const html = path.join(project.dir, "blocked-behave.html");
    const result = await runInProcess(
      ["plan", "--stack", "prod", "--behave", "--behave-report", behave, "--html", html, "--markdown", "blocked.md"],
      { cwd: project.dir, env },
    );
    expect(result.code, result.stderr).toBe(1);
    expect(result.stderr).not.toContain("this is a bug");
    expect(result.stderr).toMatch(/plan for prod: [1-9]\d* mandatory policy violation\(s\)/);
    const report = JSON.parse(await readFile(behave, "utf8")) as { format: string; kind: string; results: unknown[] };
    expect(report).toMatchObject({ format: "agent-iac-report", kind: "behave" });
    // Nothing was previewed: no call is in it, and none was placed.
    expect(report.results).toEqual([]);
    expect(await readFile(html, "utf8")).toMatch(/^<!doctype html>/i);
    const stored = await storedAgents(sim);
    expect(stored.conversational.length + stored.procedural.length).toBe(0);
  }, 300_000);

  it("runs with a Pulumi CLI found on PATH (language host and launcher beside it)", async () => {
    const built = await ensurePulumi();
    const bin = await mkdtemp(path.join(os.tmpdir(), "agent-iac-pathcli-"));
    try {
      await symlink(path.join(built, "pulumi"), path.join(bin, "pulumi"));
      for (const file of ["pulumi-language-nodejs", "pulumi-analyzer-policy"]) {
        await copyFile(path.join(built, file), path.join(bin, file));
      }
      const nodeDirs = [path.dirname(process.execPath), path.join(projectRoot, "node_modules", "@pulumi", "pulumi")];
      const pathEnv = [bin, ...nodeDirs, "/usr/bin", "/bin"].join(path.delimiter);
      const emptyCache = path.join(bin, "cache");
      const ensure = await run(path.join(projectRoot, "scripts", "ensure-pulumi"), [], projectRoot, {
        ...env,
        PATH: pathEnv,
        AGENT_IAC_CACHE_DIR: emptyCache,
      });
      expect(ensure.code).toBe(0);
      expect(ensure.output).toContain(`using pulumi`);
      const result = await run(
        path.join(bin, "pulumi"),
        [
          "preview",
          "--stack",
          "dev",
          "--non-interactive",
          "--policy-pack",
          PACK,
          "--policy-pack-config",
          configs.dev as string,
        ],
        project.dir,
        { ...env, PATH: pathEnv },
      );
      expect(result.output).toMatch(/\[advisory\]\s+agent-allowed-models/);
      expect(result.code).toBe(0);
    } finally {
      await rm(bin, { recursive: true, force: true });
    }
  }, 180_000);
});
