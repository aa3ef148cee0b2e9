// The one command lifecycle, end to end with real processes: `start` (smoke and compare phases),
// `plan --behave`, `watch` and `events` stopped by SIGINT or SIGTERM exit 130 with one line, and
// the reports of the run are this run's (a green report planted from an "earlier run" is replaced
// or removed, never left). The simulator's latency faults hold the calls open long enough.
import { execFile, spawn } from "node:child_process";
import { randomUUID } from "node:crypto";
import { mkdir, readdir, readFile, stat, writeFile } from "node:fs/promises";
import path from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { promisify } from "node:util";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { parseDocument } from "yaml";
import { reportSchema } from "../../../src/results/index.ts";
import { type AgentsProject, agentsProject, stackOutputs } from "../../helpers/agents-project.ts";
import { CLI } from "../../helpers/cli.ts";
import { describeLeaks, leftBehind } from "../../helpers/leaks.ts";
import { type PulumiSandbox, pulumiSandbox } from "../../helpers/pulumi.ts";
import { requestCounts, simulatorCall, startTestSimulator } from "../../helpers/simulator.ts";

const API_KEY = "sk-lifecycle-e2e-5d0a7c3e91";
const SLOW = 300_000;
const EARLIER = "earlier-green-run-3f9c";
const SMOKE_REPORTS = ["smoke.junit.xml", "smoke.json", "smoke.html"];
// Marks the environment of an interrupted run, so that whatever it started can be found after it exits.
const STARTED_BY = "AGENT_IAC_INTERRUPTED_RUN";

type Run = { code: number | null; stdout: string; stderr: string };

describe("one command lifecycle: interrupted runs (real processes, real Pulumi CLI)", { timeout: SLOW }, () => {
  let sandbox: PulumiSandbox;
  let sim: Awaited<ReturnType<typeof startTestSimulator>>;
  let project: AgentsProject;
  const printed: string[] = [];

  const env = () => ({ ...process.env, ...sandbox.env, AGENT_IAC_API_KEY: API_KEY, NO_COLOR: "1" });
  const routeCount = async (route: string) => (await requestCounts(sim)).by_route[route] ?? 0;

  /**
   * Runs the CLI, sends `signal` once `ready` holds (polled), and collects the exit and both streams.
   * `group`: to its whole process group, as a terminal's Ctrl+C (the Pulumi CLI gets it too).
   */
  async function interrupt(
    args: string[],
    signal: NodeJS.Signals,
    ready: () => Promise<boolean>,
    { group = false, mark }: { group?: boolean; mark?: string } = {},
  ): Promise<Run> {
    const child = spawn(process.execPath, [CLI, ...args], {
      cwd: project.dir,
      env: { ...env(), ...(mark ? { [STARTED_BY]: mark } : {}) },
      stdio: "pipe",
      detached: group,
    });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (chunk) => {
      stdout += chunk;
    });
    child.stderr.on("data", (chunk) => {
      stderr += chunk;
    });
    const exited = new Promise<number | null>((resolve) => child.once("exit", resolve));
    let done = false;
    void exited.then(() => {
      done = true;
    });
    const deadline = Date.now() + 240_000;
    while (!done && Date.now() < deadline && !(await ready())) await sleep(100);
    expect(done, `exited before the signal:\n${stdout}\n${stderr}`).toBe(false);
    if (group && child.pid) process.kill(-child.pid, signal);
    else child.kill(signal);
    const code = await exited;
    printed.push(stdout, stderr);
    return { code, stdout, stderr };
  }

  /** Once more requests of `route` than now have arrived. */
  const arrivalOf = async (route: string) => {
    const before = await routeCount(route);
    return async () => (await routeCount(route)) > before;
  };

  const reportsDir = () => path.join(project.dir, "reports");
  async function plantEarlierReports(names: string[]) {
    await mkdir(reportsDir(), { recursive: true });
    for (const name of names) await writeFile(path.join(reportsDir(), name), `${EARLIER}\n`);
  }
  const lastLine = (text: string) => text.trimEnd().split("\n").at(-1) ?? "";

  beforeAll(async () => {
    sandbox = await pulumiSandbox();
    sim = await startTestSimulator({ port: 0, apiKey: API_KEY, eventDelayMs: 1, quiet: true });
    project = await agentsProject(sandbox, { baseUrl: sim.url, apiKey: API_KEY });
  }, SLOW);
  afterEach(async () => {
    await simulatorCall(sim, "DELETE", "/_simulator/faults");
  });
  afterAll(async () => {
    await project?.cleanup();
    await sim?.close();
    await sandbox?.cleanup();
  });

  /** The smoke reports `start` wrote: this run's, with every call, the unfinished ones marked. */
  async function expectInterruptedSmokeReports(run: Run, phase: RegExp) {
    expect(run.code, `${run.stdout}\n${run.stderr}`).toBe(130);
    const line = lastLine(run.stderr);
    const match = /^interrupted: (\d+) of (\d+) calls finished \((.*)\); reports in (.*)$/.exec(line);
    expect(match, run.stderr).not.toBeNull();
    expect(match?.[3]).toMatch(phase);
    expect(match?.[4]).toBe(SMOKE_REPORTS.map((name) => `reports/${name}`).join(", "));
    // Exactly one line says it: no stack frames, no second message.
    expect(run.stderr.match(/interrupted/g)).toHaveLength(1);
    expect(run.stderr).not.toMatch(/^\s+at /m);
    for (const name of SMOKE_REPORTS) {
      expect(await readFile(path.join(reportsDir(), name), "utf8")).not.toContain(EARLIER);
    }
    const report = reportSchema.parse(JSON.parse(await readFile(path.join(reportsDir(), "smoke.json"), "utf8")));
    // Every call of the run, both sides of a comparison.
    const calls = report.results;
    expect(calls.length).toBe(Number(match?.[2]));
    const unfinished = calls.filter((r) => /^(interrupted|not run)\b/.test(r.error ?? ""));
    expect(calls.length - unfinished.length).toBe(Number(match?.[1]));
    expect(calls.filter((r) => /^interrupted\b/.test(r.error ?? "")).length).toBeGreaterThan(0);
    expect(calls.some((r) => r.status === "passed")).toBe(false);
    expect(await readFile(path.join(reportsDir(), "smoke.junit.xml"), "utf8")).toMatch(/interrupted/);
    expect(await readFile(path.join(reportsDir(), "smoke.html"), "utf8")).toMatch(/interrupted/);
  }

  it("`start` stopped by SIGINT in its smoke phase: exit 130, one line, this run's reports with the calls marked", async () => {
    await plantEarlierReports(SMOKE_REPORTS);
    // Every conversation waits 20 s before it is created: the signal lands with calls in flight.
    await simulatorCall(sim, "POST", "/_simulator/faults", { route: "POST /conversations", latency_ms: 20_000 });
    const run = await interrupt(["start", "--stack", "test"], "SIGINT", await arrivalOf("POST /conversations"));
    expect(run.stdout).toContain("Changes applied.");
    await expectInterruptedSmokeReports(run, /^after `pulumi up` completed/);
  });

  it("`start` stopped by SIGTERM in its compare phase: the same ending", async () => {
    // The run before was interrupted, so its base (a first deploy's: none) is still pending; one
    // completed run consumes it, and the next one compares with the versions before its deploy.
    // (Asynchronously: the simulator answers from this process.)
    const settled = await promisify(execFile)(process.execPath, [CLI, "start", "--stack", "test"], {
      cwd: project.dir,
      env: env(),
    });
    expect(settled.stdout).toMatch(/^[1-9]\d* passed, 0 failed$/m);
    await plantEarlierReports(SMOKE_REPORTS);
    await simulatorCall(sim, "POST", "/_simulator/faults", { route: "POST /conversations", latency_ms: 20_000 });
    const run = await interrupt(["start", "--stack", "test"], "SIGTERM", await arrivalOf("POST /conversations"));
    expect(run.stdout).toContain("No changes.");
    expect(run.stdout).toContain("compared with the versions before this deploy");
    await expectInterruptedSmokeReports(run, /^after `pulumi up` completed/);
  });

  it("`start` stopped by SIGINT during `pulumi up`: exit 130, one line, its reports list every call as not run", async () => {
    await plantEarlierReports(SMOKE_REPORTS);
    // A new stack on the same service: each create waits 3 s, so the signal lands mid-up.
    await writeFile(path.join(project.dir, "Pulumi.fresh.yaml"), `config:\n  agents:baseUrl: ${sim.url}\n`);
    await simulatorCall(sim, "POST", "/_simulator/faults", { route: "POST /procedural_agents", latency_ms: 3000 });
    const mark = randomUUID();
    const run = await interrupt(["start", "--stack", "fresh"], "SIGINT", await arrivalOf("POST /procedural_agents"), {
      mark,
    });
    expect(run.code, `${run.stdout}\n${run.stderr}`).toBe(130);
    // The cancelled up (its program run inline) stopped what it started: no CLI, no provider plugin.
    expect(describeLeaks(await leftBehind(mark, STARTED_BY))).toBe("");
    const line = lastLine(run.stderr);
    expect(line).toMatch(
      /^interrupted: 0 of [1-9]\d* calls finished \(the Pulumi run was cancelled; the stack is unlocked\); reports in reports\/smoke\.junit\.xml, reports\/smoke\.json, reports\/smoke\.html$/,
    );
    for (const name of SMOKE_REPORTS) {
      expect(await readFile(path.join(reportsDir(), name), "utf8")).not.toContain(EARLIER);
    }
    const report = reportSchema.parse(JSON.parse(await readFile(path.join(reportsDir(), "smoke.json"), "utf8")));
    expect(report.results.length).toBe(Number(/of (\d+) calls/.exec(line)?.[1]));
    expect(report.results.every((r) => r.status === "not_run" && r.outcome.kind === "not_run")).toBe(true);
  });

  it("`plan --behave` stopped by SIGINT: exit 130, one line, the behaviour report is this run's with every call", async () => {
    const file = path.join(project.dir, "agents", "booking.yaml");
    const original = await readFile(file, "utf8");
    const doc = parseDocument(original);
    doc.setIn(["config", "tool", "tools"], [{ ns: "syscall", name: "check_availability" }]);
    await writeFile(file, doc.toString());
    try {
      await plantEarlierReports(["behave.json", "plan.md"]);
      await simulatorCall(sim, "POST", "/_simulator/faults", { route: "POST /conversations", latency_ms: 20_000 });
      const args = ["plan", "--stack", "test", "--behave", "--behave-report", "behave.json", "--markdown", "plan.md"];
      const run = await interrupt(args, "SIGINT", await arrivalOf("POST /conversations"));
      expect(run.code, run.stderr).toBe(130);
      const match = /^interrupted: (\d+) of (\d+) calls finished; reports in (.*)$/.exec(lastLine(run.stderr));
      expect(match, run.stderr).not.toBeNull();
      expect(match?.[3]).toBe("reports/plan.md, reports/behave.json");
      const report = reportSchema.parse(JSON.parse(await readFile(path.join(reportsDir(), "behave.json"), "utf8")));
      expect(report.results.length).toBe(Number(match?.[2]));
      expect(report.results.filter((r) => /^interrupted\b/.test(r.error ?? "")).length).toBeGreaterThan(0);
      // The report says the preview was stopped (issue 41: it said "interrupted": false).
      expect(report.interrupted).toBe(true);
      const markdown = await readFile(path.join(reportsDir(), "plan.md"), "utf8");
      expect(markdown).not.toContain(EARLIER);
      expect(markdown).toContain("booking");
    } finally {
      await writeFile(file, original);
    }
  });

  it("`watch` stopped by SIGTERM: exit 130, one line, and no report of an earlier run is left", async () => {
    await plantEarlierReports(["watch.json"]);
    await simulatorCall(sim, "POST", "/_simulator/faults", { route: "GET /conversations", latency_ms: 20_000 });
    const args = ["watch", "--stack", "test", "--json", "watch.json"];
    const run = await interrupt(args, "SIGTERM", await arrivalOf("GET /conversations"));
    expect(run.code, run.stderr).toBe(130);
    expect(lastLine(run.stderr)).toBe(
      "interrupted: the traffic was not read to the end; no report written (reports/watch.json removed: not this run's)",
    );
    await expect(stat(path.join(reportsDir(), "watch.json"))).rejects.toMatchObject({ code: "ENOENT" });
  });

  for (const signal of ["SIGINT", "SIGTERM"] as const) {
    it(`\`events\` stopped by ${signal}: exit 130 and one line`, async () => {
      const versions = (await stackOutputs(project.stack)).versions?.value as Record<string, string>;
      const conversation = await simulatorCall<{ id: string }>(sim, "POST", "/conversations", {
        agent_id: versions.support,
        livemode: false,
        channel: { type: "phone", callee_no: "+15550100" },
      });
      const route = "GET /conversations/{conversation_id}/events";
      await simulatorCall(sim, "POST", "/_simulator/faults", { route, latency_ms: 20_000 });
      const run = await interrupt(["events", conversation.id, "--stack", "test"], signal, await arrivalOf(route));
      expect(run.code, run.stderr).toBe(130);
      expect(run.stderr.trim()).toBe("interrupted: the stream was closed after 0 events");
    });
  }

  it("`start` stopped by a Ctrl+C during its create step (a replace): exit 130, its reports say so, no call placed", async () => {
    // A stack deployed once (so the next start compares new with old), then a prompt change: the
    // next up replaces the support agent, whose create waits 3 s on the service.
    await writeFile(path.join(project.dir, "Pulumi.replace.yaml"), `config:\n  agents:baseUrl: ${sim.url}\n`);
    const settled = await promisify(execFile)(process.execPath, [CLI, "start", "--stack", "replace"], {
      cwd: project.dir,
      env: env(),
    });
    expect(settled.stdout).toMatch(/^[1-9]\d* passed, 0 failed$/m);
    const prompt = path.join(project.dir, "prompts", "support.md");
    const original = await readFile(prompt, "utf8");
    await writeFile(prompt, `${original}\nAlways give the caller a ticket number.\n`);
    try {
      await plantEarlierReports(SMOKE_REPORTS);
      await simulatorCall(sim, "POST", "/_simulator/faults", {
        route: "POST /conversational_agents",
        latency_ms: 3000,
      });
      const created = await arrivalOf("POST /conversational_agents");
      let callsAtSignal = -1;
      const ready = async () => {
        if (!(await created())) return false;
        callsAtSignal = await routeCount("POST /conversations");
        return true;
      };
      const mark = randomUUID();
      const run = await interrupt(["start", "--stack", "replace"], "SIGINT", ready, { group: true, mark });
      // A terminal's Ctrl+C leaves nothing running: the Pulumi CLI stopped its plugins before it exited.
      expect(describeLeaks(await leftBehind(mark, STARTED_BY))).toBe("");
      expect(run.stdout).toMatch(/support creating replacement/);
      expect(run.code, `${run.stdout}\n${run.stderr}`).toBe(130);
      expect(lastLine(run.stderr)).toMatch(
        /^interrupted: 0 of [1-9]\d* calls finished \(the Pulumi run was cancelled; the stack is unlocked\); reports in reports\/smoke\.junit\.xml, reports\/smoke\.json, reports\/smoke\.html$/,
      );
      // No smoke call, new or old, after the signal.
      expect(await routeCount("POST /conversations")).toBe(callsAtSignal);
      const report = reportSchema.parse(JSON.parse(await readFile(path.join(reportsDir(), "smoke.json"), "utf8")));
      expect(report.interrupted).toBe(true);
      expect(report.results.length).toBeGreaterThan(0);
      expect(report.results.every((r) => r.outcome.kind === "not_run")).toBe(true);
      for (const name of SMOKE_REPORTS) {
        expect(await readFile(path.join(reportsDir(), name), "utf8")).not.toContain(EARLIER);
      }
      // "the stack is unlocked" is true: the file backend holds no lock of the stack.
      const locks = path.join(sandbox.backendDir, ".pulumi", "locks");
      const held = await readdir(locks, { recursive: true }).catch(() => [] as string[]);
      expect(held.filter((entry) => entry.endsWith(".json"))).toEqual([]);
    } finally {
      await writeFile(prompt, original);
    }
  });
});
