// The traffic use cases (watchStack, auditStack) driven directly against a deployed stack: a temp
// project with one agent on a real file backend, deployed once to a real simulator on port 0, its
// traffic seeded through the simulator (POST /_simulator/traffic). What the command emits and exits
// with comes from the returned { report, notes, code }: checked here without it. The plain reads
// (openTraffic, auditTraffic, watchTraffic on a stack record) are traffic.test.ts's.
import { writeFile } from "node:fs/promises";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { InterruptedError } from "../../src/errors/index.ts";
import { auditStack, watchStack } from "../../src/usecases/index.ts";
import { stackOutputs } from "../helpers/agents-project.ts";
import { type BookingStack, bookingStack } from "../helpers/booking-stack.ts";
import { fakeRun } from "../helpers/run-io.ts";
import { simulatorCall } from "../helpers/simulator.ts";
import { createConversational } from "../simulator/helpers.ts";

const API_KEY = "sk-usecase-traffic-5e91a3";
const HOUR = 3600;

describe("watchStack and auditStack", { timeout: 180_000 }, () => {
  let stack: BookingStack;
  /** The version the stack holds: 20 of its 40 calls this hour failed. */
  let current: string;
  /** An agent the stack never held: 40 calls the hour before, none failed. */
  let stranger: { id: string; version_id: string };

  const window = { since: "1h" };
  const watch = ({ minCalls = 20, stopped = false } = {}) => {
    const run = fakeRun({ stopped });
    const outcome = watchStack(
      {
        project: stack.context(),
        stack: "test",
        window,
        baseline: "versions.json",
        baselineWindow: "previous",
        includeTestCalls: false,
        thresholds: { maxFailureRateIncrease: 0.05, maxNegativeFeedbackIncrease: 0.1, minCalls },
      },
      run.io,
    );
    return { run, outcome };
  };
  const audit = ({ failOnUnknown = false, stopped = false } = {}) => {
    const run = fakeRun({ stopped });
    const outcome = auditStack(
      { project: stack.context(), stack: "test", window: { since: "2h" }, failOnUnknown },
      run.io,
    );
    return { run, outcome };
  };

  beforeAll(async () => {
    stack = await bookingStack(API_KEY, { deploy: true });
    const versions = (await stackOutputs(stack.project.stack)).versions?.value as Record<string, string> | undefined;
    current = versions?.booking ?? "";
    expect(current).not.toBe("");
    stranger = await createConversational(stack.sim);
    const seed = (body: Record<string, unknown>) => simulatorCall(stack.sim, "POST", "/_simulator/traffic", body);
    await seed({ agent_id: stranger.version_id, count: 40, ago_s: 1.2 * HOUR, spread_s: 0.6 * HOUR });
    await seed({ agent_id: current, count: 40, failure_rate: 0.5, ago_s: 60, spread_s: 0.5 * HOUR });
    // The versions before the release, as `pulumi stack output versions --json` saved them.
    await writeFile(path.join(stack.project.dir, "versions.json"), JSON.stringify({ booking: stranger.version_id }));
  });
  afterAll(() => stack?.close());

  it("watch: a figure got worse: code 1, the note names it and how to roll back", async () => {
    const { run, outcome } = watch();
    const { report, notes, code } = await outcome;
    expect(code).toBe(1);
    expect(run.connections).toEqual([stack.sim.url]);
    expect(report.traffic?.agents.map((a) => [a.key, a.status])).toEqual([["booking", "regressed"]]);
    expect(notes).toHaveLength(1);
    expect(notes[0]).toMatch(
      new RegExp(
        `^agent-iac watch: booking: failure rate 50\\.0 % \\(20 of 40\\) on ${current} vs 0\\.0 % \\(0 of 40\\) on ${stranger.version_id}: up 50\\.0 points, more than the allowed 5\\.0 points\\n\\n`,
      ),
    );
    expect(notes[0]).toContain(`to roll back booking: send its calls to ${stranger.version_id} again`);
    expect(notes[0]?.endsWith("\n")).toBe(true);
  });

  it("watch: too little traffic for a verdict: code 0, the note warns", async () => {
    const { notes, code, report } = await watch({ minCalls: 100 }).outcome;
    expect(code).toBe(0);
    expect(report.traffic?.agents.map((a) => a.status)).toEqual(["not_enough_traffic"]);
    expect(notes).toEqual([
      `warning: booking: not enough traffic on ${current}: 40 finished call(s) in the window, fewer than --min-calls 100\n`,
    ]);
  });

  it("audit: an agent id the stack never held fails the run only with failOnUnknown, its note naming it", async () => {
    const failing = await audit({ failOnUnknown: true }).outcome;
    expect(failing.code).toBe(1);
    const unknown = failing.report.traffic?.versions.filter((row) => row.category === "unknown") ?? [];
    expect(unknown.map((row) => row.calls)).toEqual([40]);
    expect(unknown[0]?.agent_id).toContain(stranger.id);
    expect(failing.notes).toEqual([
      `agent-iac audit: agent ids this stack never held took calls: ${unknown[0]?.agent_id} (40 calls)\n`,
    ]);
    const told = await audit().outcome;
    expect(told.code).toBe(0);
    expect(told.notes).toEqual([]);
    expect(told.report.traffic?.versions.filter((row) => row.category === "unknown").map((r) => r.calls)).toEqual([40]);
  });

  it("stopped before the traffic was read: the interruption ends each use case without a report", async () => {
    for (const start of [() => watch({ stopped: true }), () => audit({ stopped: true })]) {
      const { run, outcome } = start();
      const error = await outcome.catch((e: unknown) => e);
      expect(error).toBeInstanceOf(InterruptedError);
      expect((error as InterruptedError).what).toBe("the traffic was not read to the end");
      // The stack was read and its connection said before the reads began.
      expect(run.connections).toEqual([stack.sim.url]);
    }
  });
});
