// Drift end to end (issue 61): the real Pulumi CLI deploys the agents, the simulator serves them on
// port 0 and a scripted judge (a real HTTP server) judges. Two smoke runs are blessed into
// baselines/test.json; an unchanged re-run holds; the simulator's degrade control drops half of
// booking's tool calls and drift says drifted early (exit 1), naming the scenario, the expectation,
// baseline against now and the calls it used; a judge that answers as another model is named as the
// judge's change (inconclusive, fault judge), never the agent's drift; a stack whose versions moved
// is refused (exit 2) with the re-bless advice; Ctrl+C writes the reports and exits 130.
import { spawn } from "node:child_process";
import { readFile, writeFile } from "node:fs/promises";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parseDocument } from "yaml";
import { type Report, reportSchema } from "../../../src/results/index.ts";
import {
  type AgentsProject,
  addScenarios,
  agentsProject,
  deployStack,
  stackOutputs,
} from "../../helpers/agents-project.ts";
import { CLI, runInProcess } from "../../helpers/cli.ts";
import { startTestJudge, type TestJudge } from "../../helpers/judge-server.ts";
import { type PulumiSandbox, pulumiSandbox } from "../../helpers/pulumi.ts";
import { requestCounts, simulatorCall, startTestSimulator } from "../../helpers/simulator.ts";

const API_KEY = "sk-drift-e2e-4f09b1";
const SLOW = 600_000;
const TOOL_SCENARIO = "drift-checks-availability";
const JUDGED_SCENARIO = "drift-judged";

describe("drift against a blessed baseline (real Pulumi CLI, simulator on port 0)", { timeout: SLOW }, () => {
  let sandbox: PulumiSandbox;
  let sim: Awaited<ReturnType<typeof startTestSimulator>>;
  let judge: TestJudge;
  let project: AgentsProject;
  let versions: Record<string, string>;
  const env = () => ({
    ...process.env,
    ...sandbox.env,
    AGENT_IAC_API_KEY: API_KEY,
    AGENT_IAC_JUDGE_BASE_URL: judge.url,
    AGENT_IAC_JUDGE_MODEL: "test-model",
    AGENT_IAC_JUDGE_API_KEY: "sk-judge-drift-e2e",
    AGENT_IAC_JUDGE_CACHE_KEY: "drift-e2e-cache-key",
  });
  const cli = (args: string[]) => runInProcess(args, { cwd: project.dir, env: env() });
  let runs = 0;
  const drift = async (...args: string[]) => {
    const n = ++runs;
    const files = { json: `drift-${n}.json`, junit: `drift-${n}.xml`, html: `drift-${n}.html` };
    const summary = path.join(project.dir, `summary-${n}.md`);
    const result = await runInProcess(
      [
        "drift",
        "--stack",
        "test",
        "--no-judge-cache",
        "--concurrency",
        "4",
        "--margin",
        "0.2",
        "--max-calls",
        "24",
      ].concat(["--json", files.json, "--junit", files.junit, "--html", files.html], args),
      { cwd: project.dir, env: { ...env(), GITHUB_STEP_SUMMARY: summary } },
    );
    const read = (file: string) => readFile(path.join(project.dir, "reports", file), "utf8").catch(() => "");
    const json = await read(files.json);
    return {
      ...result,
      report: json ? reportSchema.parse(JSON.parse(json)) : undefined,
      junit: await read(files.junit),
      html: await read(files.html),
      summary: await readFile(summary, "utf8").catch(() => ""),
    };
  };
  const scenarioOf = (report: Report | undefined, name: string) =>
    report?.drift?.scenarios.find((s) => s.agent === "booking" && s.scenario === name);

  beforeAll(async () => {
    sandbox = await pulumiSandbox();
    sim = await startTestSimulator({ port: 0, apiKey: API_KEY, eventDelayMs: 0, quiet: true });
    judge = await startTestJudge({ "the agent offers to check": [{ verdict: "pass" }] });
    project = await agentsProject(sandbox, { baseUrl: sim.url, apiKey: API_KEY });
    const turns = ["Please check availability for a cleaning on Tuesday."];
    await addScenarios(
      project.dir,
      "booking",
      {
        name: TOOL_SCENARIO,
        channel: { callee_no: "+15550142100" },
        context: { simulation: { user_turns: turns } },
        iterations: 20,
        expect: { tool_calls: ["check_availability"] },
      },
      {
        name: JUDGED_SCENARIO,
        channel: { callee_no: "+15550142100" },
        context: { simulation: { user_turns: turns } },
        iterations: 20,
        expect: { judge: ["the agent offers to check availability"] },
      },
    );
    await deployStack(project.stack);
    versions = (await stackOutputs(project.stack)).versions?.value as Record<string, string>;
    // Two smoke runs of the same versions: one baseline, 80 calls of evidence.
    for (const file of ["bless-1.json", "bless-2.json"]) {
      const smoke = await cli(
        ["smoke", "--stack", "test", "--agent", "booking", "--json", file, "--concurrency", "8"].concat([
          "--scenario",
          TOOL_SCENARIO,
          "--scenario",
          JUDGED_SCENARIO,
        ]),
      );
      expect(smoke.code, smoke.stdout + smoke.stderr).toBe(0);
    }
    const bless = await cli(["baseline", "bless", "reports/bless-1.json", "reports/bless-2.json", "--stack", "test"]);
    expect(bless.code, bless.stderr).toBe(0);
    expect(bless.stdout).toContain(`blessed baselines/test.json: 2 scenario(s) of booking ${versions.booking}`);
  });
  afterAll(async () => {
    await project?.cleanup();
    await sim?.close();
    await judge?.close();
    await sandbox?.cleanup();
  });

  it("blesses both runs into one strict baseline with the judge's model as answered and the tool's version", async () => {
    const baseline = JSON.parse(await readFile(path.join(project.dir, "baselines", "test.json"), "utf8"));
    const tool = baseline.agents.booking.scenarios[TOOL_SCENARIO];
    expect(baseline.agents.booking.version_id).toBe(versions.booking);
    expect(baseline.reports.map((r: { file: string }) => r.file)).toEqual(["bless-1.json", "bless-2.json"]);
    expect([tool.calls, tool.passes]).toEqual([40, 40]);
    expect(tool.expectations).toContainEqual(
      expect.objectContaining({ kind: "tool_calls", key: "check_availability", calls: 40, passes: 40, votes: null }),
    );
    expect(tool.scenario_hash).toMatch(/^sha256:[0-9a-f]{64}$/);
    expect(tool.latency.turns).toBe(40);
    const judged = baseline.agents.booking.scenarios[JUDGED_SCENARIO];
    expect(judged.judge_models).toEqual(["test-judge"]);
    const votes = judged.expectations.find((e: { kind: string }) => e.kind === "judge").votes;
    expect(votes.total).toBeGreaterThanOrEqual(40);
    const pkg = JSON.parse(
      await readFile(path.join(project.dir, "..", "..", "package.json"), "utf8").catch(() => "{}"),
    );
    expect(baseline.tool_version).toBe(pkg.version ?? baseline.tool_version);
  });

  it("an unchanged re-run holds on every surface (exit 0), each scenario stopped before its cap", async () => {
    const run = await drift();
    expect(run.code, run.stdout + run.stderr).toBe(0);
    for (const name of [TOOL_SCENARIO, JUDGED_SCENARIO]) {
      const s = scenarioOf(run.report, name);
      expect(s?.verdict).toBe("holding");
      expect(s?.calls_used).toBeLessThan(24);
      expect(s?.moved).toEqual([]);
    }
    expect(run.stdout).toMatch(/drift: 0 drifted, 2 holding, 0 inconclusive, 0 error\(s\), 0 not run \(exit 0\)/);
    expect(run.junit).toMatch(/<testsuites name="agent-iac drift" tests="2" failures="0" errors="0">/);
    expect(run.html).toContain("Drift: baseline against now");
    expect(run.html).toContain("<h1>agent-iac · Drift against the blessed baseline</h1>");
    expect(run.summary).toMatch(/\| ✅ holding \| booking\/drift-checks-availability \|/);
  });

  it("half the tool calls dropped: drifted early (exit 1), naming the scenario, expectation, baseline and now", async () => {
    await simulatorCall(sim, "POST", "/_simulator/degrade", {
      version_id: versions.booking,
      tool_call_drop_percent: 50,
    });
    try {
      const run = await drift();
      expect(run.code, run.stdout + run.stderr).toBe(1);
      const s = scenarioOf(run.report, TOOL_SCENARIO);
      expect(s?.verdict).toBe("drifted");
      expect(s?.fault).toBe("agent");
      expect(s?.calls_used).toBeLessThan(24);
      expect(s?.baseline).toMatchObject({ calls: 40, passes: 40 });
      expect(s?.now.rate).toBeLessThan(0.75);
      expect(s?.expectations.find((e) => e.kind === "tool_calls")?.dropped).toBe(true);
      const line = run.stdout.split("\n").find((l) => l.startsWith(`❌ booking/${TOOL_SCENARIO} on `)) ?? "";
      expect(line).toMatch(/drifted — the pass rate dropped beyond the margin; baseline 40\/40 \(100 %\)/);
      expect(line).toMatch(new RegExp(`now \\d+/${s?.now.calls} .*; ${s?.calls_used} of 24 calls used`));
      expect(run.stdout).toMatch(
        /expectation tool_calls check_availability: baseline 40\/40, now \d+\/\d+ \(dropped\)/,
      );
      expect(run.junit).toMatch(/<failure message="the pass rate dropped beyond the margin" type="drifted">/);
      expect(run.summary).toMatch(/\| ❌ drifted \| booking\/drift-checks-availability \|/);
      expect(run.report?.scenarios.find((x) => x.scenario === TOOL_SCENARIO)?.verdict).toBe("failed");
    } finally {
      await simulatorCall(sim, "DELETE", "/_simulator/degrade");
    }
  });

  it("answers slowed by 1 s: drifted on latency, the pass rate unchanged", async () => {
    await simulatorCall(sim, "POST", "/_simulator/degrade", { version_id: versions.booking, slow_ms: 1000 });
    try {
      const run = await drift();
      expect(run.code, run.stdout + run.stderr).toBe(1);
      const s = scenarioOf(run.report, TOOL_SCENARIO);
      expect(s?.verdict).toBe("drifted");
      expect(s?.reason).toMatch(/slower than the baseline's p95/);
      expect(s?.latency?.slower).toBe(true);
      expect(s?.now.passes).toBe(s?.now.calls);
      expect(run.stdout).toMatch(/latency: \d+ of \d+ turns over \d+ ms/);
    } finally {
      await simulatorCall(sim, "DELETE", "/_simulator/degrade");
    }
  });

  it("a judge answering as another model is the judge's change: inconclusive, fault judge, never drifted", async () => {
    judge.answeredModel = "test-judge-2025-06";
    try {
      const run = await drift();
      const s = scenarioOf(run.report, JUDGED_SCENARIO);
      expect(s?.verdict).toBe("inconclusive");
      expect(s?.fault).toBe("judge");
      expect(s?.moved).toContainEqual({ what: "judge_model", baseline: "test-judge", now: "test-judge-2025-06" });
      expect(run.stdout).toContain("moved: judge model: test-judge → test-judge-2025-06");
      expect(run.stdout).toMatch(/the judge's model changed since the baseline \(not the agent\)/);
      // The scenario no judge reads still holds; the run is not green (an inconclusive scenario).
      expect(scenarioOf(run.report, TOOL_SCENARIO)?.verdict).toBe("holding");
      expect(run.code).toBe(1);
      expect(run.stdout).not.toMatch(/drift-judged on \S+: drifted/);
    } finally {
      judge.answeredModel = undefined;
    }
  });

  it("Ctrl+C writes the reports and exits 130", async () => {
    await simulatorCall(sim, "POST", "/_simulator/faults", { route: "POST /conversations", latency_ms: 4000 });
    const placed = async () => (await requestCounts(sim)).by_route["POST /conversations"] ?? 0;
    const before = await placed();
    try {
      const child = spawn(
        process.execPath,
        [
          CLI,
          "drift",
          "--stack",
          "test",
          "--no-judge-cache",
          "--json",
          "interrupted.json",
          "--junit",
          "interrupted.xml",
        ],
        { cwd: project.dir, env: { ...env(), NO_COLOR: "1" }, stdio: ["ignore", "pipe", "pipe"] },
      );
      let stderr = "";
      child.stderr.on("data", (chunk) => {
        stderr += chunk;
      });
      const exited = new Promise<number | null>((resolve) => child.once("exit", resolve));
      const deadline = Date.now() + 60_000;
      while ((await placed()) <= before && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
      child.kill("SIGINT");
      expect(await exited).toBe(130);
      expect(stderr.trimEnd().split("\n").at(-1)).toMatch(/^interrupted: \d+ of \d+ calls finished; reports in /);
      const report = reportSchema.parse(
        JSON.parse(await readFile(path.join(project.dir, "reports", "interrupted.json"), "utf8")),
      );
      expect(report.kind).toBe("drift");
      expect(report.interrupted).toBe(true);
      expect(await readFile(path.join(project.dir, "reports", "interrupted.xml"), "utf8")).toMatch(/agent-iac drift/);
    } finally {
      await simulatorCall(sim, "DELETE", "/_simulator/faults");
    }
  });

  it("--dry-run counts each scenario to its cap and places nothing; --max-call-minutes refuses a worst case over it", async () => {
    const placed = async () => (await requestCounts(sim)).by_route["POST /conversations"] ?? 0;
    const before = await placed();
    const dry = await drift("--dry-run");
    expect(dry.code, dry.stderr).toBe(0);
    expect(dry.stdout).toMatch(
      new RegExp(`booking \\S+ ${TOOL_SCENARIO}: 24 iteration\\(s\\).*a sequential test stops once decided`),
    );
    expect(dry.report).toBeUndefined();
    const over = await drift("--max-call-minutes", "1");
    expect(over.code).toBe(2);
    expect(over.stderr).toMatch(/worst case is [\d.]+ call minutes.*over --max-call-minutes 1: no call was placed/);
    expect(await placed()).toBe(before);
  });

  it("refuses (exit 2) a stack whose versions are not the baseline's, with the re-bless advice, placing no call", async () => {
    const file = path.join(project.dir, "agents", "booking.yaml");
    const doc = parseDocument(await readFile(file, "utf8"));
    doc.set("description", "Books clinic appointments (a new version).");
    await writeFile(file, doc.toString());
    await deployStack(project.stack);
    const before = (await requestCounts(sim)).by_route["POST /conversations"] ?? 0;
    const run = await drift();
    expect(run.code).toBe(2);
    expect(run.stderr).toContain(`booking: baseline ${versions.booking}, stack `);
    expect(run.stderr).toMatch(/after a deploy, re-bless .*agent-iac baseline bless/);
    expect(run.stderr).toContain("smoke --compare OLD");
    expect((await requestCounts(sim)).by_route["POST /conversations"] ?? 0).toBe(before);
  });
});
