// `agent-iac plan` end to end: the real Pulumi CLI previews the agents program against the
// simulator, run through the command layer in this process (the process boundary has its own tests: test/e2e/cli/exit-codes, test/e2e/cli/lifecycle). The tests run in order on one work dir
// with two stacks (dev and prod) deployed from the base files; each starts from the previous state.
import { appendFile, mkdir, readFile, rename, rm, writeFile } from "node:fs/promises";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { AgentPlan, Plan } from "../../../src/plan/index.ts";
import { openStack, type Stack } from "../../../src/workspace/index.ts";
import { type AgentsProject, agentsProject, deployAndRead } from "../../helpers/agents-project.ts";
import { runInProcess } from "../../helpers/cli.ts";
import { type PulumiSandbox, pulumiSandbox } from "../../helpers/pulumi.ts";
import { requestCounts, startTestSimulator } from "../../helpers/simulator.ts";

const API_KEY = "sk-test-plan-5c0e9b7d21a84f36";
const OVERLAYS = ["booking.prod.yaml", "call-summary.prod.yaml"];
// What a simulator stream token looks like (`tok_` + random suffix), and bearer-ish secrets in general.
const TOKEN_LIKE = /tok_[A-Za-z0-9]{8,}|sk-[A-Za-z0-9-]{8,}|Bearer\s+\S+/;

describe("agent-iac plan (real Pulumi CLI against the simulator)", () => {
  let sandbox: PulumiSandbox;
  let sim: Awaited<ReturnType<typeof startTestSimulator>>;
  let project: AgentsProject;
  let prod: Stack;
  let outDir: string;
  const written: string[] = [];

  async function plan(stack: string, extra: { args?: string[]; env?: Record<string, string> } = {}) {
    const md = path.join(outDir, `${stack}-${written.length}.md`);
    const json = path.join(outDir, `${stack}-${written.length}.json`);
    written.push(md, json);
    const result = await runInProcess(
      ["plan", "--stack", stack, "--markdown", md, "--json", json, ...(extra.args ?? [])],
      {
        cwd: project.dir,
        env: { ...process.env, ...sandbox.env, AGENT_IAC_API_KEY: API_KEY, ...extra.env },
      },
    );
    const read = (file: string) => readFile(file, "utf8").catch(() => undefined);
    const markdown = await read(md);
    const jsonText = await read(json);
    return { ...result, markdown, json: jsonText ? (JSON.parse(jsonText) as Plan) : undefined, jsonText };
  }

  const byAgent = (p: Plan | undefined) => new Map((p?.agents ?? []).map((a) => [a.agent, a]));
  const changedAgents = (p: Plan | undefined) =>
    (p?.agents ?? [])
      .filter((a) => a.action !== "unchanged")
      .map((a) => a.agent)
      .sort();
  /** The summary table's row for an agent: its cells. */
  const row = (markdown: string | undefined, agent: string) => {
    const line = (markdown ?? "").split("\n").find((l) => l.startsWith(`| \`${agent}\` |`));
    return line
      ?.slice(1, -1)
      .split(/(?<!\\)\|/)
      .map((cell) => cell.trim());
  };
  const expectNoSecrets = (...texts: (string | undefined)[]) => {
    for (const text of texts) {
      expect(text).toBeDefined();
      expect(text).not.toContain(API_KEY);
      expect(text).not.toMatch(TOKEN_LIKE);
    }
  };

  beforeAll(async () => {
    sandbox = await pulumiSandbox();
    sim = await startTestSimulator({ port: 0, apiKey: API_KEY, eventDelayMs: 1, quiet: true });
    project = await agentsProject(sandbox, { baseUrl: sim.url, apiKey: API_KEY, stackName: "dev" });
    outDir = path.join(project.dir, ".plans");
    await mkdir(outDir);
    // Deploy both stacks from the base files: the prod overlays are set aside for now.
    await mkdir(path.join(project.dir, "overlays"));
    for (const file of OVERLAYS) {
      await rename(path.join(project.dir, "agents", file), path.join(project.dir, "overlays", file));
    }
    prod = await openStack({
      stackName: "prod",
      workDir: project.dir,
      env: { ...sandbox.env, AGENT_IAC_API_KEY: API_KEY },
    });
    await prod.setConfig("agents:baseUrl", { value: sim.url });
    for (const stack of [project.stack, prod]) {
      const up = await deployAndRead(stack);
      expect(up.summary.result).toBe("succeeded");
    }
    for (const file of OVERLAYS) {
      await rename(path.join(project.dir, "overlays", file), path.join(project.dir, "agents", file));
    }
  });
  afterAll(async () => {
    await project?.cleanup();
    await sim?.close();
    await sandbox?.cleanup();
  });

  it("says there are no changes for an unchanged stack (dev: the prod overlays do not apply)", async () => {
    const before = await requestCounts(sim);
    const result = await plan("dev");
    expect(result.stderr).toBe("");
    expect(result.code).toBe(0);
    expect(result.markdown).toContain("## Agent plan for stack `dev`");
    expect(result.markdown).toContain("No changes: 4 agent(s) unchanged.");
    expect(result.markdown).not.toContain("| agent |");
    expect(result.markdown).not.toContain("Overlays applied");
    expect(result.json?.stack).toBe("dev");
    expect(result.json?.overlays).toEqual([]);
    expect(result.json?.agents.map((a) => [a.agent, a.action]).sort()).toEqual([
      ["booking", "unchanged"],
      ["call-summary", "unchanged"],
      ["qa-scorer", "unchanged"],
      ["support", "unchanged"],
    ]);
    // A plan is a preview: nothing is sent to the service.
    expect((await requestCounts(sim)).count).toBe(before.count);
    expectNoSecrets(result.markdown, result.jsonText, result.stdout);
  });

  it("replaces exactly the overlaid agents (and the linkers of a replaced procedural agent) in prod", async () => {
    const result = await plan("prod");
    expect(result.stderr).toBe("");
    expect(result.code).toBe(0);
    const md = result.markdown ?? "";
    const agents = byAgent(result.json);
    expect(changedAgents(result.json)).toEqual(["booking", "call-summary", "support"]);
    expect(agents.get("qa-scorer")?.action).toBe("unchanged");

    // booking: the prod transfer number, from its overlay.
    const booking = agents.get("booking") as AgentPlan;
    expect(booking).toMatchObject({ action: "replace", overlay: "agents/booking.prod.yaml" });
    expect(booking.fields).toEqual([
      { path: "config.tool.transfers", before: [{ id: "+15550142000" }], after: [{ id: "+18005550142" }] },
    ]);
    expect(booking.why).toBe("changed: config.tool.transfers");
    expect(row(md, "booking")).toEqual(["`booking`", "conversational", "replace", "changed: config.tool.transfers"]);
    expect(md).toContain("### `booking` (replace, with overlay `agents/booking.prod.yaml`)");
    expect(md).toContain('- `config.tool.transfers`: `[{"id":"+15550142000"}]` → `[{"id":"+18005550142"}]`');

    // call-summary: the prod post_url, from its overlay.
    const summary = agents.get("call-summary") as AgentPlan;
    expect(summary).toMatchObject({ action: "replace", overlay: "agents/call-summary.prod.yaml" });
    expect(summary.fields).toEqual([
      {
        path: "config.output.post_url",
        before: "http://127.0.0.1:8787/_simulator/hooks/call-summary",
        after: "https://hooks.northwind.example/agents/call-summary",
      },
    ]);
    expect(row(md, "call-summary")?.slice(2)).toEqual(["replace", "changed: config.output.post_url"]);
    expect(md).toContain(
      "- `config.output.post_url`: `http://127.0.0.1:8787/_simulator/hooks/call-summary` → `https://hooks.northwind.example/agents/call-summary`",
    );

    // support: no overlay of its own, replaced because it links call-summary.
    const support = agents.get("support") as AgentPlan;
    expect(support.overlay).toBeUndefined();
    expect(support.why).toBe("linked procedural agent `call-summary` is replaced");
    expect(row(md, "support")?.slice(2)).toEqual(["replace", "linked procedural agent `call-summary` is replaced"]);

    // The plan says which overlays applied.
    expect(result.json?.overlays.sort()).toEqual(["agents/booking.prod.yaml", "agents/call-summary.prod.yaml"]);
    expect(md).toMatch(/Overlays applied: .*`agents\/booking\.prod\.yaml`/);
    expect(md).toMatch(/Overlays applied: .*`agents\/call-summary\.prod\.yaml`/);
    expect(md).toContain("the old one stays on the service");
    expectNoSecrets(result.markdown, result.jsonText, result.stdout);
  });

  it("replaces exactly a procedural agent whose prompt file changed and its linkers, with the prompt as a diff", async () => {
    await appendFile(
      path.join(project.dir, "prompts", "call-summary.md"),
      "\nAlways mention the caller's account number.\n",
    );
    const before = await requestCounts(sim);
    const result = await plan("dev");
    expect(result.stderr).toBe("");
    expect(result.code).toBe(0);
    expect((await requestCounts(sim)).count).toBe(before.count);
    const md = result.markdown ?? "";

    expect(changedAgents(result.json)).toEqual(["call-summary", "support"]);
    const summary = byAgent(result.json).get("call-summary") as AgentPlan;
    expect(summary.action).toBe("replace");
    expect(summary.why).toBe("changed: config.runtime.prompt.text");
    expect(summary.fields.map((f) => f.path)).toEqual(["config.runtime.prompt.text"]);
    const patch = summary.promptDiffs["config.runtime.prompt.text"] ?? "";
    expect(patch).toMatch(/^@@ -\d+,\d+ \+\d+,\d+ @@\n/);
    expect(patch).toContain("+Always mention the caller's account number.");
    expect(patch.split("\n").filter((l) => l.startsWith("-") && !l.startsWith("---"))).toEqual([]);

    const support = byAgent(result.json).get("support") as AgentPlan;
    expect(support.action).toBe("replace");
    expect(support.why).toBe("linked procedural agent `call-summary` is replaced");

    // The Markdown agrees with the JSON: table rows, the diff fenced, no one else replaced.
    expect(row(md, "call-summary")).toEqual([
      "`call-summary`",
      "procedural",
      "replace",
      "changed: config.runtime.prompt.text",
    ]);
    expect(row(md, "support")?.slice(2)).toEqual(["replace", "linked procedural agent `call-summary` is replaced"]);
    expect(row(md, "qa-scorer")?.slice(2)).toEqual(["unchanged", ""]);
    expect(row(md, "booking")?.slice(2)).toEqual(["unchanged", ""]);
    expect(md).toContain("0 to create, 2 to replace, 0 to remove, 2 unchanged.");
    const fenced = md.match(/```diff\n([\s\S]*?)\n```/)?.[1];
    expect(fenced).toBe(patch.trimEnd());
    expectNoSecrets(result.markdown, result.jsonText, result.stdout);
  });

  it("exits 1 with file:line errors for invalid files and previews nothing", async () => {
    const broken = path.join(project.dir, "agents", "typo.yaml");
    await writeFile(
      broken,
      "kind: procedural\nname: Typo\ndescripton: misspelt\nconfig:\n  runtime:\n    model: gpt-4o\n    prompt: {type: fixed, text: Hi}\n",
    );
    try {
      const before = await requestCounts(sim);
      const result = await plan("dev");
      expect(result.code).toBe(1);
      expect(result.stderr).toMatch(/^agents\/typo\.yaml:3:1: descripton: .*description/m);
      expect(result.stderr).toMatch(/^agents\/typo\.yaml:6:12: config\.runtime\.model: /m);
      expect(result.stderr).toContain("nothing was previewed");
      expect(result.markdown).toBeUndefined();
      expect(result.json).toBeUndefined();
      expect((await requestCounts(sim)).count).toBe(before.count);
    } finally {
      await rm(broken);
    }
  });

  it("exits 3 when the backend is unusable, without the key in the message", async () => {
    const result = await plan("dev", { env: { PULUMI_BACKEND_URL: "unsupported-scheme://nowhere" } });
    expect(result.code).toBe(3);
    expect(result.stderr).toMatch(/^agent-iac plan: the preview failed: error: /);
    // The CLI's own error, not the Automation API's dump of the command.
    expect(result.stderr).not.toMatch(/err\?:|stdout:/);
    expect(result.stderr).not.toContain(API_KEY);
    expect(result.markdown).toBeUndefined();
  });

  it("needs no key on a loopback address (the local dev key), and no request is sent", async () => {
    const before = await requestCounts(sim);
    const result = await plan("dev", { env: { AGENT_IAC_API_KEY: "" } });
    expect(result.code, result.stderr).toBe(0);
    expect(result.markdown).toContain("## Agent plan for stack `dev`");
    expect((await requestCounts(sim)).count).toBe(before.count);
  });

  it("exits 2 without an API key for a remote service, naming where to set it, before any preview", async () => {
    // A stack whose service is not on this machine: no dev key applies. Nothing is sent to it.
    const remote = await openStack({ stackName: "remote", workDir: project.dir, env: sandbox.env });
    await remote.setConfig("agents:baseUrl", { value: "https://agents.example.invalid" });
    const result = await plan("remote", { env: { AGENT_IAC_API_KEY: "" } });
    expect(result.code).toBe(2);
    expect(result.stderr).toContain("agents:apiKey");
    expect(result.stderr).toContain("AGENT_IAC_API_KEY");
    expect(result.markdown).toBeUndefined();
  });

  it("writes a bare report file name under reports/ (gitignored)", async () => {
    const result = await runInProcess(["plan", "--stack", "dev", "--markdown", "plan.md", "--json", "plan.json"], {
      cwd: project.dir,
      env: { ...process.env, ...sandbox.env, AGENT_IAC_API_KEY: API_KEY },
    });
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toContain(`written to ${path.join("reports", "plan.md")}`);
    expect(await readFile(path.join(project.dir, "reports", "plan.md"), "utf8")).toContain("## Agent plan");
    expect(JSON.parse(await readFile(path.join(project.dir, "reports", "plan.json"), "utf8")).stack).toBe("dev");
    await expect(readFile(path.join(project.dir, "plan.md"))).rejects.toThrow();
  });

  it("exits 2 on a bad flag, with the usage", async () => {
    const result = await plan("dev", { args: ["--frobnicate"] });
    expect(result.code).toBe(2);
    expect(result.stderr).toContain("--frobnicate");
    expect(result.stderr).toContain("usage: agent-iac plan");
    expect(result.markdown).toBeUndefined();
  });
});
