// Pinned-version smoke calls after a real `pulumi up`, through the `agent-iac smoke` command.
import { spawn } from "node:child_process";
import { appendFile, readFile, writeFile } from "node:fs/promises";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parseDocument } from "yaml";
import { type AgentsProject, agentsProject, deployStack, stackOutputs } from "../../helpers/agents-project.ts";
import { CLI, runInProcess } from "../../helpers/cli.ts";
import { type PulumiSandbox, pulumiSandbox } from "../../helpers/pulumi.ts";
import { requestCounts, simulatorCall, startTestSimulator } from "../../helpers/simulator.ts";

const API_KEY = "sk-smoke-e2e-5d81c0a7b2";
/** The simulator's stream tokens look like this; none may ever be printed or reported. */
const TOKEN_PATTERN = /tok_[A-Za-z0-9_-]{24}/;

type Report = {
  summary: { passed: number; failed: number; errors: number };
  results: {
    agent: string;
    scenario: string;
    status: string;
    version_id: string;
    conversation_id: string;
    transport: string;
    assertions: { passed: boolean }[];
  }[];
};

describe("agent-iac smoke", () => {
  let sandbox: PulumiSandbox;
  let sim: Awaited<ReturnType<typeof startTestSimulator>>;
  let project: AgentsProject;
  const printed: string[] = [];

  const smoke = async (...args: string[]) => {
    const junit = path.join(project.dir, `smoke-${printed.length}.xml`);
    const json = path.join(project.dir, `smoke-${printed.length}.json`);
    const result = await runInProcess(["smoke", "--stack", "test", "--junit", junit, "--json", json, ...args], {
      cwd: project.dir,
      env: { ...process.env, ...sandbox.env, AGENT_IAC_API_KEY: API_KEY },
    });
    const junitText = await readFile(junit, "utf8").catch(() => "");
    const jsonText = await readFile(json, "utf8").catch(() => "");
    printed.push(result.stdout, result.stderr, junitText, jsonText);
    return { ...result, junit: junitText, report: jsonText ? (JSON.parse(jsonText) as Report) : undefined };
  };

  const editAgent = async (key: string, edit: (doc: ReturnType<typeof parseDocument>) => void) => {
    const file = path.join(project.dir, "agents", `${key}.yaml`);
    const doc = parseDocument(await readFile(file, "utf8"));
    edit(doc);
    await writeFile(file, doc.toString());
  };

  beforeAll(async () => {
    sandbox = await pulumiSandbox();
    sim = await startTestSimulator({ port: 0, apiKey: API_KEY, eventDelayMs: 1, quiet: true });
    project = await agentsProject(sandbox, { baseUrl: sim.url, apiKey: API_KEY });
    await deployStack(project.stack);
  });
  afterAll(async () => {
    await project?.cleanup();
    await sim?.close();
    await sandbox?.cleanup();
  });

  it("passes every example scenario against the pinned versions, each with at least one assertion", async () => {
    const run = await smoke();
    expect(run.stderr).toBe("");
    expect(run.code).toBe(0);
    expect(run.stdout.trim().split("\n").at(-1)).toMatch(/^\d+ passed, 0 failed$/);
    expect(run.junit).toMatch(/<testsuites name="agent-iac smoke" tests="\d+" failures="0" errors="0"/);
    const assertions = [...run.junit.matchAll(/<testcase [^>]*assertions="(\d+)"/g)].map((m) => Number(m[1]));
    expect(assertions.length).toBeGreaterThanOrEqual(2);
    for (const count of assertions) expect(count).toBeGreaterThanOrEqual(1);
    const versions = (await stackOutputs(project.stack)).versions?.value as Record<string, string>;
    for (const result of run.report?.results ?? []) {
      expect(result.version_id).toBe(versions[result.agent]);
      expect(result.version_id).toMatch(/@v\d+$/);
    }
  });

  it("fails with exit 1 and names the phrase when the agent never says it", async () => {
    await editAgent("support", (doc) => {
      doc.addIn(
        ["smoke"],
        doc.createNode({
          name: "promises-submarines",
          channel: { callee_no: "+15550100100" },
          expect: { says: ["we sell submarines"] },
        }),
      );
    });
    const run = await smoke("--agent", "support", "--scenario", "promises-submarines");
    expect(run.code).toBe(1);
    expect(run.junit).toContain("we sell submarines");
    expect(run.junit).toMatch(/<failure message="says &quot;we sell submarines&quot;"/);
    expect(run.stdout.trim().split("\n").at(-1)).toBe("0 passed, 1 failed — calls 1 failed: 1 agent");
  });

  it("checks procedures against the simulator's: the right status passes, a wrong one fails", async () => {
    await editAgent("support", (doc) => {
      doc.addIn(
        ["smoke"],
        doc.createNode({
          name: "summary-fails",
          channel: { callee_no: "+15550100100" },
          // The wait for a status that never comes lasts until the scenario's timeout.
          timeout: 5,
          expect: { procedures: { "call-summary": "failed" } },
        }),
      );
    });
    const wrong = await smoke("--agent", "support", "--scenario", "summary-fails");
    expect(wrong.code).toBe(1);
    expect(wrong.junit).toMatch(/procedure call-summary ends failed: procedure call-summary is completed/);
    const right = await smoke("--agent", "support", "--scenario", "greets-and-summarizes");
    expect(right.code).toBe(0);
  });

  it("passes the same scenarios over the WebSocket session", async () => {
    for (const key of ["support", "booking"]) {
      await editAgent(key, (doc) => {
        const scenarios = doc.get("smoke") as { items: { set(k: string, v: unknown): void }[] } | undefined;
        for (const scenario of scenarios?.items ?? []) scenario.set("transport", "ws");
      });
    }
    const run = await smoke("--scenario", "greets-and-summarizes", "--scenario", "checks-availability-and-books");
    expect(run.code).toBe(0);
    expect(run.report?.results.length).toBeGreaterThanOrEqual(2);
    for (const result of run.report?.results ?? []) expect(result.transport).toBe("ws");
  });

  it("calls an older version with --version-id after its linked procedural agent was replaced", async () => {
    const before = (await stackOutputs(project.stack)).versions?.value as Record<string, string>;
    const supportPrompt = path.join(project.dir, "prompts", "support.md");
    await appendFile(supportPrompt, "\nMention the spring promotion.\n");
    // call-summary is replaced too: the old support version links the old call-summary agent.
    await appendFile(path.join(project.dir, "prompts", "call-summary.md"), "\nKeep it under 80 words.\n");
    await deployStack(project.stack);
    const after = (await stackOutputs(project.stack)).versions?.value as Record<string, string>;
    expect(after.support).not.toBe(before.support);
    expect(after["call-summary"]).not.toBe(before["call-summary"]);

    const run = await smoke(
      "--agent",
      "support",
      "--scenario",
      "greets-and-summarizes",
      "--version-id",
      before.support as string,
    );
    expect(run.code, run.stdout).toBe(0);
    expect(run.report?.results[0]?.version_id).toBe(before.support);
    const first = run.report?.results[0] as unknown as { procedures: { key: string; matchedBy: string }[] } | undefined;
    const procedures = first?.procedures ?? [];
    expect(procedures.map((p) => `${p.key} ${p.matchedBy}`)).toEqual(["call-summary name", "qa-scorer name"]);
    expect(run.stdout).toContain("procedures matched by name: this is not the stack's current version");
    const conversations = await simulatorCall<{ data: { id: string; agent_id: string }[] }>(
      sim,
      "GET",
      "/conversations",
    );
    const placed = conversations.data.find((c) => c.id === run.report?.results[0]?.conversation_id);
    expect(placed?.agent_id.split("@")[0]).toBe(before.support?.split("@")[0]);
  });

  it("refuses a bare agent id unless --allow-unpinned, and unknown agents, with exit 2", async () => {
    const versions = (await stackOutputs(project.stack)).versions?.value as Record<string, string>;
    const bare = (versions.support as string).split("@")[0] as string;
    const refused = await smoke("--agent", "support", "--scenario", "greets-and-summarizes", "--version-id", bare);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toMatch(/not pinned/);
    const allowed = await smoke(
      "--agent",
      "support",
      "--scenario",
      "greets-and-summarizes",
      "--version-id",
      bare,
      "--allow-unpinned",
    );
    expect(allowed.code).toBe(0);
    expect((await smoke("--agent", "nobody")).code).toBe(2);
  });

  it("--version-id with a version the stack does not pin says so and what smoke did, without `pulumi up --replace`", async () => {
    const versions = (await stackOutputs(project.stack)).versions?.value as Record<string, string>;
    const typo = await smoke("--agent", "support", "--scenario", "greets-and-summarizes", "--version-id", "ca_typo@v1");
    expect(typo.code).toBe(3);
    expect(typo.stderr).toContain(
      `ca_typo@v1 is not one of the versions stack test pins (it pins support at ${versions.support})`,
    );
    expect(typo.stderr).toMatch(/smoke called it as given \(--version-id\) and the service answered 404/);
    expect(typo.stderr).not.toMatch(/--replace|the service does not know a version that stack/);
  });

  it("Ctrl+C stops the calls, exits 130 and still writes both reports with every planned call", async () => {
    await simulatorCall(sim, "POST", "/_simulator/faults", { route: "POST /conversations", latency_ms: 4000 });
    const junit = path.join(project.dir, "interrupted.xml");
    // A bare name: written under reports/, and the interrupted line says so (it once named the bare file).
    const json = "interrupted.json";
    const placed = async () => (await requestCounts(sim)).by_route["POST /conversations"] ?? 0;
    const before = await placed();
    try {
      const child = spawn(process.execPath, [CLI, "smoke", "--stack", "test", "--junit", junit, "--json", json], {
        cwd: project.dir,
        env: { ...process.env, ...sandbox.env, AGENT_IAC_API_KEY: API_KEY, NO_COLOR: "1" },
        stdio: ["ignore", "pipe", "pipe"],
      });
      let stderr = "";
      child.stderr.on("data", (chunk) => {
        stderr += chunk;
      });
      const exited = new Promise<number | null>((resolve) => child.once("exit", resolve));
      // Interrupt once the first conversation has been asked for (it waits 4 s on the fault).
      const deadline = Date.now() + 60_000;
      while ((await placed()) <= before && Date.now() < deadline) {
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
      child.kill("SIGINT");
      expect(await exited).toBe(130);
      // One line ends the run: how many calls finished and where the reports are.
      expect(stderr.trimEnd().split("\n").at(-1)).toMatch(
        /^interrupted: \d+ of \d+ calls finished; reports in interrupted\.xml, reports\/interrupted\.json$/,
      );
      const report = JSON.parse(await readFile(path.join(project.dir, "reports", json), "utf8")) as Report;
      const statuses = report.results.map((r) => r.status);
      expect(statuses.length).toBeGreaterThanOrEqual(2);
      expect(statuses).not.toContain("passed");
      expect(await readFile(junit, "utf8")).toMatch(/<testsuites /);
    } finally {
      await simulatorCall(sim, "DELETE", "/_simulator/faults");
    }
  });

  it("resumes a dropped stream with Last-Event-ID: the scenario passes with no duplicated transcript text", async () => {
    await simulatorCall(sim, "POST", "/_simulator/faults", {
      route: "GET /conversations/{conversation_id}/events",
      count: 1,
      drop_stream_after_events: 3,
    });
    const run = await smoke("--agent", "support", "--scenario", "greets-and-summarizes");
    await simulatorCall(sim, "DELETE", "/_simulator/faults");
    expect(run.code).toBe(0);
    const counts = await simulatorCall<{ by_route: Record<string, number> }>(sim, "GET", "/_simulator/requests");
    expect(counts.by_route["GET /conversations/{conversation_id}/events"]).toBeGreaterThanOrEqual(2);
    const transcript = (run.report?.results[0] as unknown as { transcript: string[] } | undefined)?.transcript ?? [];
    expect(transcript.length).toBeGreaterThan(0);
    expect(transcript.filter((line) => line.startsWith("agent: Hello, this is Maya."))).toEqual([
      "agent: Hello, this is Maya. How can I help you today?",
    ]);
    expect(new Set(transcript).size).toBe(transcript.length);
  });

  it("fails a stalled stream with a timeout (exit 3) within its timeout plus a few seconds", async () => {
    await editAgent("support", (doc) => {
      doc.addIn(
        ["smoke"],
        doc.createNode({
          name: "stalls",
          channel: { callee_no: "+15550100100" },
          timeout: 4,
          expect: { says: ["this is Maya"] },
        }),
      );
    });
    await simulatorCall(sim, "POST", "/_simulator/faults", {
      route: "GET /conversations/{conversation_id}/events",
      count: 1,
      stall_stream_after_events: 3,
    });
    const run = await smoke("--agent", "support", "--scenario", "stalls");
    await simulatorCall(sim, "DELETE", "/_simulator/faults");
    expect(run.code).toBe(3);
    expect(run.junit).toMatch(/<error message="timed out after 4 s/);
    // The call itself, as the report times it: it lasted until the scenario's deadline (the stall did
    // not end it early); the deadline's own words above say what ended it. No upper bound on time: a
    // loaded machine is slow, not wrong.
    const callMs = (run.report?.results[0] as unknown as { timings: { duration_ms: number } } | undefined)?.timings
      .duration_ms;
    expect(callMs).toBeGreaterThanOrEqual(3900);
  });

  it("never prints or reports a stream token", () => {
    expect(printed.length).toBeGreaterThan(0);
    for (const text of printed) expect(text).not.toMatch(TOKEN_PATTERN);
    for (const text of printed) expect(text).not.toContain(API_KEY);
  });
});
