// Old versus new end to end: `agent-iac start` deploys the example agents (a first deploy: plain
// smoke, said so), then deploys a change to booking's tools and compares the new versions with the
// ones from before the deploy; `smoke --compare` does the same from a saved versions file or report.
import { cp, readFile, writeFile } from "node:fs/promises";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parseDocument } from "yaml";
import { type Report, reportSchema } from "../../../src/results/index.ts";
import { type AgentsProject, agentsProject, stackOutputs } from "../../helpers/agents-project.ts";
import { runInProcess } from "../../helpers/cli.ts";
import { type PulumiSandbox, pulumiSandbox } from "../../helpers/pulumi.ts";
import { requestCounts, simulatorCall, startTestSimulator } from "../../helpers/simulator.ts";

const API_KEY = "sk-compare-e2e-3fa9d1c07e";
const TOKEN_LIKE = /tok_[A-Za-z0-9_-]{8,}/;
const TOOL_EXPECTATION = 'calls tool book_appointment with {"request":"/tuesday at 10am/i"}';
const BOOKS = "booking/checks-availability-and-books";

// Each step runs the real Pulumi CLI (and `start` a whole deploy): on a shared 2-core machine a
// step can take well over the default 120 s.
const SLOW = 300_000;

describe("old versus new: start and smoke --compare (real Pulumi CLI against the simulator)", { timeout: SLOW }, () => {
  let sandbox: PulumiSandbox;
  let sim: Awaited<ReturnType<typeof startTestSimulator>>;
  let project: AgentsProject;
  let oldVersions: Record<string, string>;
  let newVersions: Record<string, string>;
  const printed: string[] = [];
  const env = () => ({ ...process.env, ...sandbox.env, AGENT_IAC_API_KEY: API_KEY });
  const reports = (file: string) => path.join(project.dir, "reports", file);

  async function cli(args: string[]) {
    const result = await runInProcess(args, { cwd: project.dir, env: env() });
    printed.push(result.stdout, result.stderr);
    return result;
  }

  async function compare(...args: string[]) {
    const n = printed.length;
    const json = path.join(project.dir, `compare-${n}.json`);
    const junit = path.join(project.dir, `compare-${n}.xml`);
    const result = await cli(["smoke", "--stack", "test", "--json", json, "--junit", junit, ...args]);
    const jsonText = await readFile(json, "utf8").catch(() => "");
    const junitText = await readFile(junit, "utf8").catch(() => "");
    printed.push(jsonText, junitText);
    return { ...result, report: jsonText ? reportSchema.parse(JSON.parse(jsonText)) : undefined, junit: junitText };
  }

  const scenario = (report: Report | undefined, agent: string, name: string) =>
    report?.scenarios.find((s) => s.agent === agent && s.scenario === name);

  beforeAll(async () => {
    sandbox = await pulumiSandbox();
    sim = await startTestSimulator({ port: 0, apiKey: API_KEY, eventDelayMs: 1, quiet: true });
    project = await agentsProject(sandbox, { baseUrl: sim.url, apiKey: API_KEY });
  }, SLOW);
  afterAll(async () => {
    await project?.cleanup();
    await sim?.close();
    await sandbox?.cleanup();
  });

  it("start: a first deploy has nothing to compare with and runs plain smoke, saying so", async () => {
    const first = await cli(["start", "--stack", "test"]);
    expect(first.code, first.stderr).toBe(0);
    expect(first.stdout).toContain("(first deploy: no versions before it to compare with, plain smoke)");
    expect(JSON.parse(await readFile(reports("old-versions.json"), "utf8"))).toEqual({});
    oldVersions = (await stackOutputs(project.stack)).versions?.value as Record<string, string>;
    await cp(reports("smoke.json"), path.join(project.dir, "first-smoke.json"));
  });

  it("start: after a change to booking's tools, the comparison names the regression (exit 1)", async () => {
    const file = path.join(project.dir, "agents", "booking.yaml");
    const doc = parseDocument(await readFile(file, "utf8"));
    doc.setIn(["config", "tool", "tools"], [{ ns: "syscall", name: "check_availability" }]);
    await writeFile(file, doc.toString());
    // A scenario that fails on every version (scenarios are not inputs: support is not replaced).
    const support = path.join(project.dir, "agents", "support.yaml");
    const supportDoc = parseDocument(await readFile(support, "utf8"));
    supportDoc.addIn(["smoke"], {
      name: "never-right",
      channel: { callee_no: "+15550100100" },
      expect: { says: ["this is nobody"] },
    });
    await writeFile(support, supportDoc.toString());

    const second = await cli(["start", "--stack", "test"]);
    expect(second.code, second.stderr).toBe(1);
    expect(second.stdout).toContain("compared with the versions before this deploy");
    // The versions before the deploy were captured before `up`.
    expect(JSON.parse(await readFile(reports("old-versions.json"), "utf8"))).toEqual(oldVersions);
    newVersions = (await stackOutputs(project.stack)).versions?.value as Record<string, string>;
    expect(newVersions.booking).not.toBe(oldVersions.booking);
    expect(newVersions.support).toBe(oldVersions.support);
    expect(second.stdout).toContain(`✗ regression ${BOOKS} (${oldVersions.booking} → ${newVersions.booking})`);
    expect(second.stdout).toContain(`= unchanged support/greets-and-summarizes (same version ${newVersions.support})`);
    expect(second.stdout).toContain("~ still failing support/never-right");
    const report = reportSchema.parse(JSON.parse(await readFile(reports("smoke.json"), "utf8")));
    expect(report.kind).toBe("compare");
    expect(report.summary.regressions).toBe(1);
  });

  it("smoke --compare OLD-VERSIONS: the regression with its expectation and transcript diff; the unrelated agent unchanged", async () => {
    const run = await compare("--compare", reports("old-versions.json"));
    expect(run.code, run.stderr).toBe(1);
    const report = run.report as Report;
    expect(report.kind).toBe("compare");
    expect(report.old_versions).toEqual({ booking: oldVersions.booking, support: oldVersions.support });
    expect(report.versions).toMatchObject({ booking: newVersions.booking, support: newVersions.support });
    expect(report.summary.regressions).toBe(1);

    const books = scenario(report, "booking", "checks-availability-and-books")?.comparison;
    expect(books).toMatchObject({
      old_version_id: oldVersions.booking,
      new_version_id: newVersions.booking,
      old_verdict: "passed",
      new_verdict: "failed",
      outcome: "regression",
    });
    expect(books?.expectations.find((e) => e.description === TOOL_EXPECTATION)).toEqual({
      kind: "tool_calls",
      key: 'book_appointment {"request":"/tuesday at 10am/i"}',
      description: TOOL_EXPECTATION,
      old: true,
      new: false,
      outcome: "regression",
    });
    expect(books?.expectations.find((e) => e.description === "calls tool check_availability")?.outcome).toBe(
      "unchanged",
    );
    // The transcript diff: the old version's tool call is gone, the new version only talks.
    expect(books?.transcript_diff).toContain("  agent: Hello, this is Leo. How can I help you today?");
    expect(books?.transcript_diff).toEqual(
      expect.arrayContaining([
        expect.stringMatching(/^- tool book_appointment\(\{"request":"Great, please book appointment/),
        "+ agent: I understand: Great, please book appointment for Tuesday at 10am.",
      ]),
    );
    expect(books?.duration_delta_ms).toEqual(expect.any(Number));
    // One response-latency delta per user turn both versions answered (from the events' timestamps).
    expect(books?.response_latency_delta_ms).toHaveLength(3);
    expect(scenario(report, "booking", "spanish-persona-over-websocket")?.comparison?.outcome).toBe("unchanged");
    expect(scenario(report, "support", "greets-and-summarizes")?.comparison).toMatchObject({
      old_version_id: newVersions.support,
      outcome: "unchanged",
      procedure_differences: [],
    });
    expect(scenario(report, "support", "never-right")?.comparison?.outcome).toBe("still_failing");

    // Both sides' calls: booking on both versions, support once (its version did not change).
    const sides = report.results.map((r) => `${r.side} ${r.agent}/${r.scenario} ${r.version_id}`);
    expect(sides).toContain(`new ${BOOKS} ${newVersions.booking}`);
    expect(sides).toContain(`old ${BOOKS} ${oldVersions.booking}`);
    expect(sides.filter((s) => s.includes("support/greets-and-summarizes"))).toEqual([
      `new support/greets-and-summarizes ${newVersions.support}`,
    ]);
    // The JSON summary's calls are the ones its passed/failed figures count (the new side); the old side apart.
    const counted = report.summary;
    expect(counted.calls).toBe(
      counted.calls_passed + counted.calls_failed + counted.calls_errors + counted.calls_interrupted,
    );
    expect(counted.calls).toBe(report.results.filter((r) => r.side !== "old").length);
    expect(counted.calls_old).toBe(report.results.filter((r) => r.side === "old").length);
    expect(counted.calls_old).toBeGreaterThan(0);

    // JUnit: the regression is a failure naming the flipped expectation; the comparison in system-out.
    expect(run.junit).toContain(
      `<failure message="regression: ${TOOL_EXPECTATION.replaceAll('"', "&quot;")} passed on ${oldVersions.booking}, fails on ${newVersions.booking}" type="regression">`,
    );
    expect(run.junit).toContain("transcript (- old, + new):");
    expect(run.junit).toContain("- tool book_appointment(");
    // The closing line ends with whose fault the failed calls are.
    expect(run.stdout.trim().split("\n").at(-1)).toMatch(/^\d+ passed, [1-9]\d* failed — calls \d+ failed: \d+ agent$/);
  });

  it("smoke --compare a previous smoke JSON report finds the same regression", async () => {
    const run = await compare("--compare", path.join(project.dir, "first-smoke.json"), "--agent", "booking");
    expect(run.code, run.stderr).toBe(1);
    expect(run.report?.old_versions).toEqual({ booking: oldVersions.booking });
    expect(scenario(run.report, "booking", "checks-availability-and-books")?.comparison?.outcome).toBe("regression");
  });

  it("--fail-on regression: a scenario that failed on both versions is reported still failing and exits 0", async () => {
    const lenient = await compare(
      "--compare",
      reports("old-versions.json"),
      "--agent",
      "support",
      "--fail-on",
      "regression",
    );
    expect(lenient.code, lenient.stderr).toBe(0);
    expect(lenient.stdout).toContain("~ still failing support/never-right");
    expect(lenient.stdout).toContain("does not fail the run: --fail-on regression");
    expect(scenario(lenient.report, "support", "never-right")?.comparison?.outcome).toBe("still_failing");
    expect(lenient.junit).toMatch(/failures="0"/);
    // The default (failure) fails on it.
    const strict = await compare("--compare", reports("old-versions.json"), "--agent", "support");
    expect(strict.code).toBe(1);
    expect(strict.junit).toMatch(/<failure message="says &quot;this is nobody&quot; \(also failed on /);
  });

  it("an agent with no old version runs as plain smoke and says so", async () => {
    const partial = path.join(project.dir, "partial.json");
    await writeFile(partial, JSON.stringify({ booking: oldVersions.booking }));
    const run = await compare("--compare", partial, "--agent", "support", "--fail-on", "regression");
    expect(run.stdout).toContain("no old version of support (new agent): plain smoke");
    expect(run.report?.notes).toContain("no old version of support (new agent): plain smoke");
    expect(scenario(run.report, "support", "greets-and-summarizes")?.comparison).toBeUndefined();
    // Without a baseline a failing scenario fails even under --fail-on regression.
    expect(run.code).toBe(1);
  });

  it("an old version the service does not know is no baseline, never counted as a call or a comparison; --require-baseline makes it exit 3", async () => {
    const unknown = path.join(project.dir, "unknown.json");
    await writeFile(unknown, JSON.stringify({ booking: "ca_gone@v1" }));
    const spanish = ["--compare", unknown, "--agent", "booking", "--scenario", "spanish-persona-over-websocket"];
    const run = await compare(...spanish);
    // The new version passes; the old side's failure is said, not hidden, and it is no baseline.
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toContain(
      'booking/spanish-persona-over-websocket: the baseline was not found: the service does not know the old version "ca_gone@v1" (404), no comparison (passed)',
    );
    expect(scenario(run.report, "booking", "spanish-persona-over-websocket")?.comparison).toBeUndefined();
    expect(run.report?.notes).toContain(
      `no comparison for booking/spanish-persona-over-websocket: the baseline was not found, the service does not know the old version "ca_gone@v1" (404); the verdict is the new side's`,
    );
    const old = run.report?.results.find((r) => r.side === "old");
    expect(old).toMatchObject({ status: "error", version_id: "ca_gone@v1", conversation_id: null });
    // A call never placed is not counted, and nothing compared is not a tally of zeros.
    expect(run.report?.summary).toMatchObject({ calls_old: 0, no_baseline: 1, regressions: 0 });
    expect(run.stdout).not.toContain("on the old versions");
    expect(run.stdout).not.toMatch(/\d+ regression\(s\)/);
    expect(run.stdout).toContain(
      "no comparison: the baseline of 1 scenario(s) was not found or could not run (--require-baseline makes a missing baseline an error)",
    );
    // Required, a missing baseline is an error: exit 3, said.
    const required = await compare(...spanish, "--require-baseline");
    expect(required.code, required.stdout).toBe(3);
    expect(required.report?.require_baseline).toBe(true);
    expect(required.stdout).toContain("(--require-baseline: the run fails (exit 3))");
    const without = await cli(["smoke", "--stack", "test", "--require-baseline"]);
    expect(without.code).toBe(2);
    expect(without.stderr).toContain("--require-baseline needs --compare OLD");
    // A failing scenario against an old side that could not run fails the run, even under --fail-on regression.
    await writeFile(unknown, JSON.stringify({ support: "ca_gone@v1" }));
    const failing = await compare(
      "--compare",
      unknown,
      "--agent",
      "support",
      "--scenario",
      "never-right",
      "--fail-on",
      "regression",
    );
    expect(failing.code, failing.stdout).toBe(1);
    expect(scenario(failing.report, "support", "never-right")).toMatchObject({ verdict: "failed" });
    expect(scenario(failing.report, "support", "never-right")?.comparison).toBeUndefined();
    expect(failing.stdout).not.toContain("still failing support/never-right");
    expect(failing.junit).toMatch(/failures="1"/);
  });

  it("--shard 1/2 and 2/2 of a comparison place exactly the unsharded comparison's calls, and its dry run counts both sides", async () => {
    const old = reports("old-versions.json");
    const placed = async () => (await requestCounts(sim)).by_route["POST /conversations"] ?? 0;
    const dry = await compare("--compare", old, "--agent", "booking", "--dry-run");
    expect(dry.code, dry.stderr).toBe(0);
    // Both sides of every scenario, each on its own version.
    expect(dry.stdout).toContain(`booking ${oldVersions.booking} `);
    expect(dry.stdout).toContain(`booking ${newVersions.booking} `);
    const worstCase = Number(/worst case: (\d+) call\(s\)/.exec(dry.stdout)?.[1]);
    let before = await placed();
    const whole = await compare("--compare", old, "--agent", "booking");
    const unsharded = (await placed()) - before;
    expect(whole.report?.results.length).toBe(unsharded);
    expect(unsharded).toBe(worstCase);
    const shards: number[] = [];
    for (const shard of ["1/2", "2/2"]) {
      before = await placed();
      const run = await compare("--compare", old, "--agent", "booking", "--shard", shard);
      shards.push((await placed()) - before);
      // Each shard's calls, on both sides: none of another shard's.
      expect(run.report?.results.length).toBe(shards.at(-1));
    }
    expect(shards.reduce((a, b) => a + b, 0)).toBe(unsharded);
  });

  it("refuses an unreadable OLD file and a bad --fail-on (exit 2)", async () => {
    const bad = path.join(project.dir, "bad.json");
    await writeFile(bad, "[1, 2]");
    const unreadable = await compare("--compare", bad);
    expect(unreadable.code).toBe(2);
    expect(unreadable.stderr).toContain(`--compare ${bad}: neither a versions output`);
    const flag = await compare("--compare", reports("old-versions.json"), "--fail-on", "sometimes");
    expect(flag.code).toBe(2);
    expect(flag.stderr).toContain("--fail-on must be regression or failure");
  });

  it("with 10 calls a side: 1 of 10 failing against 0 of 10 is not enough evidence; 10 of 10 against 0 of 10 is a regression with its adjusted p-value", async () => {
    const file = path.join(project.dir, "agents", "booking.yaml");
    const doc = parseDocument(await readFile(file, "utf8"));
    // failure_rate 0.05 fails the 20th, 40th, … call of a series (one series per version).
    const oneInTen = { simulation: { failure_rate: 0.05, series: "one-in-ten" } };
    doc.addIn(["smoke"], {
      name: "rate-one-in-ten",
      iterations: 10,
      channel: { callee_no: "+15550100100" },
      context: oneInTen,
    });
    const turns = ["Great, please book appointment for Tuesday at 10am.", "That's all, thank you."];
    doc.addIn(["smoke"], {
      name: "rate-tool-ten",
      iterations: 10,
      channel: { callee_no: "+15550100100" },
      context: { simulation: { user_turns: turns } },
      expect: { tool_calls: ["book_appointment"] },
    });
    await writeFile(file, doc.toString());
    // Ten earlier calls of the new version's series: its calls in the comparison are the 11th–20th.
    for (let i = 0; i < 10; i++) {
      await simulatorCall(sim, "POST", "/conversations", {
        agent_id: newVersions.booking,
        channel: { type: "phone", callee_no: "+15550100100" },
        livemode: false,
        context: oneInTen,
      });
    }
    const run = await compare(
      "--compare",
      reports("old-versions.json"),
      "--agent",
      "booking",
      "--scenario",
      "rate-one-in-ten",
      "--scenario",
      "rate-tool-ten",
      "--fail-on",
      "regression",
    );
    const one = scenario(run.report, "booking", "rate-one-in-ten")?.comparison;
    expect(one).toMatchObject({ old_verdict: "passed", new_verdict: "failed", outcome: "not_enough_evidence" });
    // Fisher: P(X ≤ 9) = C(19,9)/C(20,10) = 1/2; Holm over the two scenarios keeps it at 1/2.
    expect(one?.evidence).toMatchObject({
      method: "exact",
      old_rate: { passes: 10, calls: 10 },
      new_rate: { passes: 9, calls: 10 },
      p_value: 0.5,
      adjusted_p_value: 0.5,
      significant: false,
    });
    const ten = scenario(run.report, "booking", "rate-tool-ten")?.comparison;
    expect(ten).toMatchObject({
      outcome: "regression",
      evidence: { new_rate: { passes: 0, calls: 10 }, significant: true },
    });
    // P = 1/C(20,10); Holm doubles the smaller of two.
    expect(ten?.evidence?.adjusted_p_value).toBeCloseTo(2 / 184756, 8);
    expect(ten?.evidence?.latency?.shift_ms).toEqual(expect.any(Number));
    expect(run.report?.summary.regressions).toBe(1);
    expect(run.stdout).toMatch(/≟ not enough evidence booking\/rate-one-in-ten/);
    expect(run.stdout).toMatch(
      /pass rate old 10\/10 \(100 %\) → new 9\/10 \(90 %\), −10 points .*adjusted p 0\.5000 .*: not enough evidence/,
    );
    expect(run.stdout).toMatch(/✗ regression booking\/rate-tool-ten/);
    expect(run.stdout).toMatch(
      /pass rate old 10\/10 \(100 %\) → new 0\/10 \(0 %\), −100 points .*adjusted p 1\.1e-5 .*: significant/,
    );
    expect(run.junit).toMatch(
      /<failure message="regression: pass rate 10\/10 on [^"]* → 0\/10 on [^"]*, adjusted p 0\.0000108\d" type="regression">/,
    );
    // --fail-on regression: the significant regression fails the run, the flip without evidence does not.
    expect(run.code).toBe(1);
    expect(run.junit).toMatch(/<testsuite name="booking" tests="2" failures="1"/);
  });

  it("puts neither the API key nor a stream token in any report or output", async () => {
    for (const file of ["smoke.json", "smoke.junit.xml", "old-versions.json"]) {
      printed.push(await readFile(reports(file), "utf8"));
    }
    for (const text of printed) {
      expect(text).not.toContain(API_KEY);
      expect(text).not.toMatch(TOKEN_LIKE);
    }
  });
});
