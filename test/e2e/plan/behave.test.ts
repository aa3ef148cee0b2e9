// `agent-iac plan --behave` end to end: one real `pulumi up` of the example agents against the
// simulator, then previews of changed agent files. The changed agents' scenarios are played against
// the deployed versions with the proposed config as override_config; nothing is created.
import { cp, readFile, rm, symlink, writeFile } from "node:fs/promises";
import path from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { parseDocument } from "yaml";
import type { Plan } from "../../../src/plan/index.ts";
import { reportSchema } from "../../../src/results/index.ts";
import { projectRoot } from "../../../src/workspace/index.ts";
import { type AgentsProject, agentsProject, deployAndRead, stackOutputs } from "../../helpers/agents-project.ts";
import { runInProcess } from "../../helpers/cli.ts";
import { type PulumiSandbox, pulumiSandbox } from "../../helpers/pulumi.ts";
import { requestCounts, simulatorCall, startTestSimulator } from "../../helpers/simulator.ts";

const API_KEY = "sk-behave-e2e-8c21f0d9a4";
/** The simulator's stream tokens look like this; none may ever be printed or reported. */
const TOKEN_LIKE = /tok_[A-Za-z0-9_-]{8,}/;
const CREATES = ["POST /conversational_agents", "POST /procedural_agents"];
const TOOL_EXPECTATION = 'calls tool book_appointment with {"request":"/tuesday at 10am/i"}';

// Each step runs the real Pulumi CLI (and `start` a whole deploy): on a shared 2-core machine a
// step can take well over the default 120 s.
const SLOW = 300_000;

describe("agent-iac plan --behave (real Pulumi CLI against the simulator)", { timeout: SLOW }, () => {
  let sandbox: PulumiSandbox;
  let sim: Awaited<ReturnType<typeof startTestSimulator>>;
  let project: AgentsProject;
  let pristine: string;
  let versions: Record<string, string>;
  const printed: string[] = [];

  async function plan(...args: string[]) {
    const n = printed.length;
    const files = {
      md: path.join(project.dir, `plan-${n}.md`),
      json: path.join(project.dir, `plan-${n}.json`),
      report: path.join(project.dir, `behave-${n}.json`),
    };
    const behave = args.includes("--behave") ? ["--behave-report", files.report] : [];
    const before = await requestCounts(sim);
    const result = await runInProcess(
      ["plan", "--stack", "test", "--markdown", files.md, "--json", files.json, ...behave, ...args],
      { cwd: project.dir, env: { ...process.env, ...sandbox.env, AGENT_IAC_API_KEY: API_KEY } },
    );
    const after = await requestCounts(sim);
    const read = (file: string) => readFile(file, "utf8").catch(() => "");
    const [markdown, jsonText, reportText] = await Promise.all([read(files.md), read(files.json), read(files.report)]);
    printed.push(result.stdout, result.stderr, markdown, jsonText, reportText);
    const routeDelta = (route: string) => (after.by_route[route] ?? 0) - (before.by_route[route] ?? 0);
    return {
      ...result,
      markdown,
      plan: jsonText ? (JSON.parse(jsonText) as Plan) : undefined,
      report: reportText ? reportSchema.parse(JSON.parse(reportText)) : undefined,
      requests: after.count - before.count,
      creates: CREATES.reduce((sum, route) => sum + routeDelta(route), 0),
      conversations: routeDelta("POST /conversations"),
    };
  }

  const edit = async (key: string, change: (doc: ReturnType<typeof parseDocument>) => void) => {
    const file = path.join(project.dir, "agents", `${key}.yaml`);
    const doc = parseDocument(await readFile(file, "utf8"));
    change(doc);
    await writeFile(file, doc.toString());
  };
  const agentOf = (p: Plan | undefined, key: string) => p?.agents.find((a) => a.agent === key);

  beforeAll(async () => {
    sandbox = await pulumiSandbox();
    sim = await startTestSimulator({ port: 0, apiKey: API_KEY, eventDelayMs: 1, quiet: true });
    project = await agentsProject(sandbox, { baseUrl: sim.url, apiKey: API_KEY });
    const up = await deployAndRead(project.stack);
    expect(up.summary.result).toBe("succeeded");
    versions = (await stackOutputs(project.stack)).versions?.value as Record<string, string>;
    pristine = path.join(project.dir, "agents.pristine");
    await cp(path.join(project.dir, "agents"), pristine, { recursive: true });
  }, SLOW);
  afterEach(async () => {
    // Every test starts from the deployed files.
    await rm(path.join(project.dir, "agents"), { recursive: true });
    await cp(pristine, path.join(project.dir, "agents"), { recursive: true });
  });
  afterAll(async () => {
    await project?.cleanup();
    await sim?.close();
    await sandbox?.cleanup();
  });

  it("plays booking's scenarios with the proposed tools: the lost tool call fails the preview (exit 1), nothing is created", async () => {
    await edit("booking", (doc) =>
      doc.setIn(["config", "tool", "tools"], [{ ns: "syscall", name: "check_availability" }]),
    );
    // Also a name-only change and a new agent: neither can be previewed.
    await edit("support", (doc) => doc.set("name", "Support line (new name)"));
    const booking = await readFile(path.join(project.dir, "agents", "booking.yaml"), "utf8");
    await writeFile(
      path.join(project.dir, "agents", "callback.yaml"),
      booking.replace("name: Appointment booking", "name: Callback line"),
    );

    const result = await plan("--behave");
    expect(result.code, result.stderr).toBe(1);
    expect(result.creates).toBe(0);
    expect(result.conversations).toBe(2); // booking's two scenarios, nothing else

    // JSON: the result under booking's diff.
    const entry = agentOf(result.plan, "booking");
    expect(entry?.action).toBe("replace");
    expect(entry?.behaviour).toMatchObject({
      previewed: true,
      version_id: versions.booking,
      override_sections: ["tool"],
      passed: 1,
      failed: 1,
    });
    const scenarios = entry?.behaviour?.previewed ? entry.behaviour.scenarios : [];
    const failing = scenarios.find((s) => s.scenario === "checks-availability-and-books");
    expect(failing?.status).toBe("failed");
    expect(failing?.unmet.map((u) => u.description)).toEqual([TOOL_EXPECTATION]);
    expect(failing?.unmet[0]?.detail).toContain("book_appointment was never called");
    expect(failing?.unmet[0]?.context.join("\n")).toContain("tool check_availability(");
    expect(scenarios.find((s) => s.scenario === "spanish-persona-over-websocket")?.status).toBe("passed");
    expect(agentOf(result.plan, "support")?.behaviour).toEqual({
      previewed: false,
      reason: "`name` changes: a conversation cannot override it",
    });
    expect(agentOf(result.plan, "callback")?.behaviour).toEqual({
      previewed: false,
      reason: "new agent: nothing is deployed to call yet",
    });
    expect(result.plan?.behave).toMatchObject({ previewed: ["booking"], scenarios: 2, passed: 1, failed: 1 });

    // Markdown: the scenario and its unmet expectation under booking's diff, the reasons for the others.
    const md = result.markdown;
    const bookingSection = md.slice(md.indexOf("### `booking`"));
    expect(bookingSection).toContain(`**Behaviour with the proposed config** (against \`${versions.booking}\``);
    expect(bookingSection).toContain("- ✗ `checks-availability-and-books`");
    expect(bookingSection).toContain(`  - ${TOOL_EXPECTATION}: book_appointment was never called`);
    expect(bookingSection).toContain("- ✓ `spanish-persona-over-websocket`");
    expect(md).toContain("- `support`: `name` changes: a conversation cannot override it");
    expect(md).toContain("- `callback`: new agent: nothing is deployed to call yet");
    expect(md).toContain("1 passed, 1 failed.");

    // The calls: test calls on the deployed version, with the proposed tools sent whole.
    const { data } = await simulatorCall<{ data: { agent_id: string; livemode: boolean }[] }>(
      sim,
      "GET",
      "/conversations",
    );
    // A conversation names the version that handled it, or (the variant profile) its bare agent id.
    const previewCalls = data.filter((c) => [versions.booking, versions.booking?.split("@")[0]].includes(c.agent_id));
    expect(previewCalls.length).toBeGreaterThanOrEqual(2);
    expect(previewCalls.every((c) => c.livemode === false)).toBe(true);

    // The v2 report of kind behave: every call, pinned, livemode false, the failure with context.
    expect(result.report).toMatchObject({ kind: "behave", stack: "test", versions: { booking: versions.booking } });
    expect(result.report?.results.map((r) => [r.scenario, r.status, r.version_id, r.livemode])).toEqual([
      ["checks-availability-and-books", "failed", versions.booking, false],
      ["spanish-persona-over-websocket", "passed", versions.booking, false],
    ]);
    expect(result.report?.notes).toContain("callback: not previewed: new agent: nothing is deployed to call yet");
  });

  it("behaves as before without --behave: exit 0, no behaviour section, no request to the service", async () => {
    await edit("booking", (doc) =>
      doc.setIn(["config", "tool", "tools"], [{ ns: "syscall", name: "check_availability" }]),
    );
    const result = await plan();
    expect(result.code, result.stderr).toBe(0);
    expect(result.stderr).toBe("");
    expect(result.requests).toBe(0);
    expect(result.markdown).not.toContain("Behaviour");
    expect(result.plan?.behave).toBeUndefined();
    expect(agentOf(result.plan, "booking")?.behaviour).toBeUndefined();
  });

  it("flips an expectation with the persona: the greeting follows the proposed persona name", async () => {
    await edit("booking", (doc) => doc.setIn(["config", "personas", 0, "name"], "Max"));
    const result = await plan("--behave");
    expect(result.code, result.stderr).toBe(1);
    expect(result.creates).toBe(0);
    const entry = agentOf(result.plan, "booking");
    const scenarios = entry?.behaviour?.previewed ? entry.behaviour.scenarios : [];
    expect(scenarios.find((s) => s.scenario === "checks-availability-and-books")?.unmet).toEqual([
      expect.objectContaining({
        description: 'says "this is Leo"',
        context: expect.arrayContaining([expect.stringContaining("this is Max")]),
      }),
    ]);
    // The scenario's own override_config (the Spanish persona) still goes on top of the proposed config.
    expect(scenarios.find((s) => s.scenario === "spanish-persona-over-websocket")?.status).toBe("passed");
  });

  it("passes a harmless change (exit 0) and says why a removed section cannot be previewed", async () => {
    await edit("booking", (doc) => doc.setIn(["config", "channel", "is_voicemail_enabled"], false));
    await edit("support", (doc) => doc.deleteIn(["config", "voice"]));
    const result = await plan("--behave");
    expect(result.code, result.stderr).toBe(0);
    expect(result.creates).toBe(0);
    expect(agentOf(result.plan, "booking")?.behaviour).toMatchObject({
      previewed: true,
      override_sections: ["channel"],
      passed: 2,
      failed: 0,
    });
    expect(agentOf(result.plan, "support")?.behaviour).toEqual({
      previewed: false,
      reason: "`config.voice` removed: override_config can add and change fields, not remove them",
    });
    expect(result.markdown).toContain("2 passed, 0 failed.");
  });

  it("a change the stack's policy pack blocks (mandatory): exit 1 as documented, its calls not run, none placed", async () => {
    // agent-iac's pack, linked into the project (a pack must be a folder of it), with one rule mandatory.
    await symlink(path.join(projectRoot, "policy"), path.join(project.dir, "policy")).catch(
      (error: NodeJS.ErrnoException) => {
        if (error.code !== "EEXIST") throw error;
      },
    );
    const rules = {
      all: "disabled",
      "agent-allowed-models": { enforcementLevel: "mandatory", allowed: ["anthropic/*"] },
    };
    await writeFile(path.join(project.dir, "policy-mandatory.json"), JSON.stringify(rules));
    await project.stack.setConfig("agents:policyPack", { value: "policy" });
    await project.stack.setConfig("agents:policyPackConfig", { value: "policy-mandatory.json" });
    try {
      await edit("booking", (doc) => doc.setIn(["config", "runtime", "model"], "openai/gpt-4o"));
      const result = await plan("--behave");
      expect(result.plan?.policy?.mandatory).toBeGreaterThan(0);
      expect(result.code, result.stderr).toBe(1);
      expect(result.stderr).toMatch(/mandatory policy violation/);
      expect(result.conversations).toBe(0);
      expect(result.report?.results.length).toBeGreaterThan(0);
      expect(result.report?.results.every((r) => r.outcome.kind === "not_run")).toBe(true);
    } finally {
      await project.stack.removeConfig("agents:policyPack");
      await project.stack.removeConfig("agents:policyPackConfig");
    }
  });

  it("refuses --behave-report without --behave (exit 2)", async () => {
    const result = await runInProcess(["plan", "--stack", "test", "--behave-report", "x.json"], {
      cwd: project.dir,
      env: { ...process.env, ...sandbox.env, AGENT_IAC_API_KEY: API_KEY },
    });
    expect(result.code).toBe(2);
    expect(result.stderr).toContain("--behave-report needs --behave");
  });

  it("puts neither the API key nor a stream token in any plan, report or output", () => {
    expect(printed.length).toBeGreaterThan(0);
    for (const text of printed) {
      expect(text).not.toContain(API_KEY);
      expect(text).not.toMatch(TOKEN_LIKE);
    }
  });
});
