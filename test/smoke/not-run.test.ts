// A run that placed nothing (stopped before it started, a failed deploy) gets its report from its
// plan: every planned call not run, with why, on every surface; never counted as passed, never as
// "not needed", and its exit code says the run did not complete. Nothing is placed: the plan's
// agents point at a service that does not exist.
import { tmpdir } from "node:os";
import path from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { type AgentDefinition, loadAgents } from "../../src/definitions/index.ts";
import type { HeldAgent } from "../../src/provider/index.ts";
import { emitReport, htmlReport, jobSummary, junitXml, reportJson, terminalSummary } from "../../src/report/index.ts";
import { exitCode, finishedCalls, reportSchema } from "../../src/results/index.ts";
import { notRunReport, planSmoke } from "../../src/smoke/index.ts";

let agents: AgentDefinition[];
let outputs: Record<string, HeldAgent>;

beforeAll(async () => {
  agents = (await loadAgents(path.resolve(import.meta.dirname, "../../agents"), { stack: "dev", from: process.cwd() }))
    .agents;
  outputs = Object.fromEntries(
    agents.map((a): [string, HeldAgent] => [
      a.key,
      {
        key: a.key,
        id: `id_${a.key}`,
        version_id: `ca_${a.key}@v1`,
        kind: a.kind,
        name: a.name,
        urn: "",
        postprocess_agents: [],
      },
    ]),
  );
});

describe("notRunReport", () => {
  it("holds every planned call as not run, with the reason, from the plan alone", () => {
    const plan = planSmoke(agents, outputs, { live: true });
    expect(plan.calls.length).toBeGreaterThan(1);
    const report = notRunReport(plan, { reason: "`pulumi up` failed", code: "up_failed", stack: "dev" });
    expect(report.results).toHaveLength(plan.calls.length);
    expect(report.results.map((c) => [c.status, c.outcome.kind, c.outcome.code, c.error])).toEqual(
      plan.calls.map(() => ["not_run", "not_run", "up_failed", "not run: `pulumi up` failed"]),
    );
    expect(report.results.every((c) => c.timings.duration_ms === 0 && c.conversation_id === null)).toBe(true);
    // Every planned scenario, none passed, none "not needed", no call placed.
    expect(report.scenarios).toHaveLength(plan.gates.size);
    expect(report.scenarios.every((s) => s.verdict === "not_run" && s.passes === 0 && !s.calls_saved)).toBe(true);
    expect(report.summary).toMatchObject({
      scenarios: plan.gates.size,
      passed: 0,
      failed: 0,
      not_run: plan.gates.size,
      calls: 0,
      calls_not_run: plan.calls.length,
      calls_saved: 0,
    });
    expect(finishedCalls(report.results)).toBe(0);
    // A run that did not complete: 3, or 130 when it was stopped.
    expect(exitCode(report)).toBe(3);
    expect(exitCode(notRunReport(plan, { reason: "interrupted before it started", interrupted: true }))).toBe(130);
  });

  it("keeps a shard's plan: only its calls, every scenario's gate", () => {
    const whole = planSmoke(agents, outputs, { live: true });
    const shard = planSmoke(agents, outputs, { live: true }, { index: 1, count: 2 });
    const report = notRunReport(shard, { reason: "stopped" });
    expect(report.shard).toEqual({ index: 1, count: 2 });
    expect(report.results).toHaveLength(shard.calls.length);
    expect(report.scenarios).toHaveLength(whole.gates.size);
  });

  it("is shown as not run on the terminal, in the job summary, JUnit, HTML and JSON", async () => {
    const plan = planSmoke(agents, outputs, { live: true });
    const report = notRunReport(plan, { reason: "`pulumi up` failed" });
    const n = plan.calls.length;
    const scenarios = plan.gates.size;
    const first = report.results[0];

    const terminal = terminalSummary(report);
    expect(terminal).toContain(`${first?.agent}/${first?.scenario}: 0/1 passed, its calls were never placed → not_run`);
    expect(terminal).toContain(`calls: 0 of ${n} passed, 0 failed, 0 could not complete, ${n} not run`);
    expect(terminal.trim().split("\n").at(-1)).toBe(`0 passed, 0 failed, ${scenarios} not run`);

    const summary = jobSummary(report);
    expect(
      summary.startsWith(`### ❌ agent-iac smoke: ${scenarios} scenarios: 0 passed, 0 failed, ${scenarios} not run`),
    ).toBe(true);
    expect(summary).toContain(`| 0 / 0 / 0 · ${n} not run |`);
    expect(summary).toContain("**Not run** (planned, never placed: neither passed nor failed)");
    expect(summary).toContain("○ not run: not run: \\`pulumi up\\` failed");

    const junit = junitXml(report);
    expect(junit).toContain(`skipped="${scenarios}"`);
    expect(junit.match(/<skipped message="not run: `pulumi up` failed"\/>/g)).toHaveLength(scenarios);
    expect(junit).toContain("iteration 1: not run\nversion:");
    expect(junit).not.toMatch(/<failure|<error /);

    const html = htmlReport(report);
    expect(html.match(/data-outcome="not_run"/g)).toHaveLength(n);
    expect(html).toContain(`data-summary="calls_not_run">${n}<`);
    expect(html).toContain("<strong>Not run:</strong>");
    expect(html).toMatch(/<p class="headline" data-exit-code="3" data-mark="❌">/);

    const json = reportSchema.parse(JSON.parse(reportJson(report)));
    expect(json.results.map((c) => c.outcome.kind)).toEqual(plan.calls.map(() => "not_run"));
    expect(await emitReport(report, { within: tmpdir(), env: {} })).toBe(3);
  });
});
