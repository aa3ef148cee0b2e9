// A prompt change that breaks the booking, caught with a caller (real Pulumi CLI, real simulator on
// port 0): `plan --behave` plays the booking example's caller.turns against the deployed version
// with the proposed prompt and fails the preview; after the deploy, `smoke --compare OLD` plays the
// same turns on the old and the new version and names the regression (exit 1, even under
// --fail-on regression). Both versions hear the same caller lines, in the same order.
import { appendFile, readFile, writeFile } from "node:fs/promises";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Plan } from "../../../src/plan/index.ts";
import { type CallResult, type Report, reportSchema } from "../../../src/results/index.ts";
import { type AgentsProject, agentsProject, deployStack, stackOutputs } from "../../helpers/agents-project.ts";
import { runInProcess } from "../../helpers/cli.ts";
import { type PulumiSandbox, pulumiSandbox } from "../../helpers/pulumi.ts";
import { requestCounts, startTestSimulator } from "../../helpers/simulator.ts";

const API_KEY = "sk-caller-regression-e2e-51d0c2";
const TOKEN_LIKE = /tok_[A-Za-z0-9_-]{8,}/;
const BOOKS = "checks-availability-and-books";
const TOOL_EXPECTATION = 'calls tool book_appointment with {"request":"/tuesday at 10am/i"}';
/** The booking example's caller.turns (agents/booking.yaml), as the caller says them. */
const TURNS = [
  "Can you check availability for a cleaning on Tuesday morning?",
  "Great, please book appointment for Tuesday at 10am.",
  "That's all, thank you.",
];
/** The change under review: the desk stops booking directly (the simulated agent honours "never use <tool>"). */
const PROMPT_CHANGE =
  "\nNever use book_appointment: take the caller's name and number, and say the front desk will call back to confirm.\n";
const CREATES = ["POST /conversational_agents", "POST /procedural_agents"];
const SLOW = 300_000;

const escapeRegExp = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");

/** The caller's lines of a call, without their times: `caller: <text> (at 1.23 s)` → `<text>`. */
const callerLines = (call: CallResult | undefined) =>
  (call?.transcript ?? [])
    .filter((l) => l.startsWith("caller: "))
    .map((l) => l.replace(/^caller: | \(at [^)]*\)$/g, ""));

describe("a prompt change that breaks the booking, heard by the same caller before and after", {
  timeout: SLOW,
}, () => {
  let sandbox: PulumiSandbox;
  let sim: Awaited<ReturnType<typeof startTestSimulator>>;
  let project: AgentsProject;
  let oldVersions: Record<string, string>;
  const printed: string[] = [];
  const file = (name: string) => path.join(project.dir, name);
  const read = (name: string) => readFile(file(name), "utf8").catch(() => "");

  async function cli(...args: string[]) {
    const result = await runInProcess(args, {
      cwd: project.dir,
      env: { ...process.env, ...sandbox.env, AGENT_IAC_API_KEY: API_KEY },
    });
    printed.push(result.stdout, result.stderr);
    return result;
  }

  beforeAll(async () => {
    sandbox = await pulumiSandbox();
    sim = await startTestSimulator({ apiKey: API_KEY });
    project = await agentsProject(sandbox, { baseUrl: sim.url, apiKey: API_KEY });
    await deployStack(project.stack);
    oldVersions = (await stackOutputs(project.stack)).versions?.value as Record<string, string>;
    await writeFile(file("old-versions.json"), JSON.stringify(oldVersions));
    await appendFile(file("prompts/booking.md"), PROMPT_CHANGE);
  }, SLOW);
  afterAll(async () => {
    await project?.cleanup();
    await sim?.close();
    await sandbox?.cleanup();
  });

  it("plan --behave: the proposed prompt fails the booking (exit 1), the caller's lines all heard, nothing created", async () => {
    const before = await requestCounts(sim);
    const run = await cli(
      "plan",
      "--stack",
      "test",
      "--behave",
      "--json",
      file("plan.json"),
      "--markdown",
      file("plan.md"),
      "--behave-report",
      file("behave.json"),
    );
    const after = await requestCounts(sim);
    const [planText, markdown, behaveText] = await Promise.all([
      read("plan.json"),
      read("plan.md"),
      read("behave.json"),
    ]);
    printed.push(planText, markdown, behaveText);
    expect(run.code, run.stdout + run.stderr).toBe(1);
    expect(CREATES.map((r) => (after.by_route[r] ?? 0) - (before.by_route[r] ?? 0))).toEqual([0, 0]);

    const plan = JSON.parse(planText) as Plan;
    const booking = plan.agents.find((a) => a.agent === "booking");
    expect(booking?.behaviour).toMatchObject({
      previewed: true,
      version_id: oldVersions.booking,
      override_sections: ["runtime"],
      failed: 1,
    });
    const scenarios = booking?.behaviour?.previewed ? booking.behaviour.scenarios : [];
    const books = scenarios.find((s) => s.scenario === BOOKS);
    expect(books?.status).toBe("failed");
    // Only the booking is lost: the caller was heard, availability still checked.
    expect(books?.unmet.map((u) => u.description)).toEqual([TOOL_EXPECTATION]);
    expect(books?.unmet[0]?.detail).toContain("book_appointment was never called");
    expect(markdown).toContain(`- ✗ \`${BOOKS}\``);
    expect(markdown).toContain(`  - ${TOOL_EXPECTATION}: book_appointment was never called`);

    const report = reportSchema.parse(JSON.parse(behaveText));
    const call = report.results.find((r) => r.scenario === BOOKS);
    expect(call?.version_id).toBe(oldVersions.booking);
    expect(callerLines(call)).toEqual(TURNS);
    expect(call?.assertions[0]).toMatchObject({
      kind: "caller",
      key: "caller",
      description: "the caller's 3 lines were heard",
      passed: true,
    });
    expect(call?.transcript).toContain("agent: I understand: Great, please book appointment for Tuesday at 10am.");
  });

  it("smoke --compare OLD after the deploy: both versions hear the same turns, the regression is named (exit 1)", async () => {
    await deployStack(project.stack);
    const newVersions = (await stackOutputs(project.stack)).versions?.value as Record<string, string>;
    expect(newVersions.booking).not.toBe(oldVersions.booking);

    const run = await cli(
      "smoke",
      "--stack",
      "test",
      "--agent",
      "booking",
      "--compare",
      file("old-versions.json"),
      "--fail-on",
      "regression",
      "--json",
      file("compare.json"),
      "--junit",
      file("compare.xml"),
      "--html",
      file("compare.html"),
    );
    const [jsonText, junit, page] = await Promise.all([
      read("compare.json"),
      read("compare.xml"),
      read("compare.html"),
    ]);
    printed.push(jsonText, junit, page);
    // A regression fails the run under either --fail-on.
    expect(run.code, run.stdout + run.stderr).toBe(1);
    const report = reportSchema.parse(JSON.parse(jsonText)) as Report;
    expect(report.summary.regressions).toBe(1);

    const side = (s: "old" | "new") => report.results.find((r) => r.scenario === BOOKS && r.side === s);
    expect(side("old")?.version_id).toBe(oldVersions.booking);
    expect(side("new")?.version_id).toBe(newVersions.booking);
    expect(callerLines(side("old"))).toEqual(TURNS);
    expect(callerLines(side("new"))).toEqual(TURNS);

    const comparison = report.scenarios.find((s) => s.agent === "booking" && s.scenario === BOOKS)?.comparison;
    expect(comparison).toMatchObject({ old_verdict: "passed", new_verdict: "failed", outcome: "regression" });
    expect(comparison?.expectations.find((e) => e.description === TOOL_EXPECTATION)).toMatchObject({
      old: true,
      new: false,
      outcome: "regression",
    });
    // Joined on identity: one row per expectation, the caller's included.
    expect(comparison?.expectations.find((e) => e.kind === "caller")).toMatchObject({
      description: "the caller's 3 lines were heard",
      outcome: "unchanged",
    });
    expect(comparison?.expectations.filter((e) => e.kind === "tool_calls").map((e) => e.description)).toContain(
      TOOL_EXPECTATION,
    );
    // The same caller line, answered two ways.
    expect(comparison?.transcript_diff).toEqual(
      expect.arrayContaining([
        expect.stringMatching(/^- tool book_appointment\(\{"request":"Great, please book appointment/),
        "+ agent: I understand: Great, please book appointment for Tuesday at 10am.",
      ]),
    );
    // Every caller line is the same line on both sides, compared without its time (shown beside it):
    // not removed and added again, in the JSON, on the terminal, in JUnit or in the HTML report.
    for (const turn of TURNS) {
      expect(comparison?.transcript_diff).toContainEqual(
        expect.stringMatching(
          new RegExp(`^  caller: ${escapeRegExp(turn)} \\(at \\d+\\.\\d\\d s( → \\d+\\.\\d\\d s)?\\)$`),
        ),
      );
    }
    const changedCallerLine = /^[-+] caller: /m;
    expect(comparison?.transcript_diff.filter((line) => changedCallerLine.test(line))).toEqual([]);
    expect(run.stdout).toContain("transcript (- old, + new):");
    expect(run.stdout).not.toMatch(changedCallerLine);
    expect(junit).not.toMatch(changedCallerLine);
    expect(page).toContain('<span class="diff-same">  caller: Can you check availability');
    expect(page).not.toMatch(/<span class="diff-(add|del)">[-+] caller: /);
    expect(report.scenarios.find((s) => s.scenario === "spanish-persona-over-websocket")?.comparison?.outcome).toBe(
      "unchanged",
    );

    // The terminal and JUnit name it.
    expect(run.stdout).toContain(`✗ regression booking/${BOOKS} (${oldVersions.booking} → ${newVersions.booking})`);
    expect(junit).toContain(
      `<failure message="regression: ${TOOL_EXPECTATION.replaceAll('"', "&quot;")} passed on ${oldVersions.booking}, fails on ${newVersions.booking}" type="regression">`,
    );
  });

  it("puts neither the API key nor a stream token in any plan, report or output", () => {
    expect(printed.length).toBeGreaterThan(4);
    for (const text of printed) {
      expect(text).not.toContain(API_KEY);
      expect(text).not.toMatch(TOKEN_LIKE);
    }
  });
});
