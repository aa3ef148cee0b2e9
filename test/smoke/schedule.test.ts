// Which call goes next: fixed repeats stop once their verdict cannot change, sequential tests run
// in rounds of `concurrency` and stop at a boundary; calls in flight always finish; calls not
// needed are never placed and never counted as not run.
import { describe, expect, it } from "vitest";
import type { SmokeScenario } from "../../src/definitions/index.ts";
import type { PlannedCall } from "../../src/smoke/call.ts";
import { Schedule } from "../../src/smoke/schedule.ts";

const scenario = (fields: Partial<SmokeScenario>): SmokeScenario =>
  ({
    name: "s",
    channel: { callee_no: "+15550100100" },
    livemode: false,
    transport: "sse",
    timeout: 120,
    iterations: 1,
    expect: { no_errors: true, ends: true },
    ...fields,
  }) as SmokeScenario;

const plan = (s: SmokeScenario, name = s.name): PlannedCall[] =>
  Array.from({ length: s.iterations }, (_, i) => ({
    agent: "support",
    scenario: { ...s, name },
    iteration: i + 1,
    versionId: "ca_1@v1",
    procedural: {},
    live: false,
  }));

/** Drives a schedule like the runner: `concurrency` workers, each call finishing in placement order. */
async function drive(calls: PlannedCall[], concurrency: number, outcome: (call: PlannedCall, n: number) => boolean) {
  const schedule = new Schedule(calls, { concurrency });
  const placed: number[] = [];
  const inFlight: number[] = [];
  // A worker's request for its next call, kept while it waits for a round to end.
  let waiting: Promise<number | undefined> | undefined;
  const fill = async () => {
    while (inFlight.length < concurrency) {
      waiting ??= schedule.next();
      const next = await Promise.race([waiting, new Promise<"blocked">((r) => setTimeout(() => r("blocked"), 20))]);
      if (next === "blocked") break;
      waiting = undefined;
      if (next === undefined) break;
      placed.push(next);
      inFlight.push(next);
    }
  };
  for (;;) {
    await fill();
    if (inFlight.length === 0) break;
    const done = inFlight.shift() as number;
    schedule.finished(done, outcome(calls[done] as PlannedCall, placed.indexOf(done) + 1) ? "passed" : "failed");
  }
  return { placed, notNeeded: [...schedule.notNeeded], unplaced: schedule.unplaced() };
}

describe("Schedule", () => {
  it("iterations 10, min_pass 8, always passing, one at a time: 8 calls, 2 not needed", async () => {
    const run = await drive(plan(scenario({ iterations: 10, min_pass: 8 })), 1, () => true);
    expect(run.placed).toEqual([0, 1, 2, 3, 4, 5, 6, 7]);
    expect(run.notNeeded.sort()).toEqual([8, 9]);
    expect(run.unplaced).toEqual([]);
  });

  it("always failing: 3 calls decide (more than 10 − 8 failed); with 2 at a time at most one more is in flight", async () => {
    expect((await drive(plan(scenario({ iterations: 10, min_pass: 8 })), 1, () => false)).placed).toHaveLength(3);
    const two = await drive(plan(scenario({ iterations: 10, min_pass: 8 })), 2, () => false);
    expect(two.placed.length).toBeLessThanOrEqual(4);
    expect(two.placed.length).toBeGreaterThanOrEqual(3);
  });

  it("a pass^k requirement places every call of a passing scenario", async () => {
    const run = await drive(plan(scenario({ iterations: 6, min_pass: 4, pass_k: { k: 3, min: 0.5 } })), 1, () => true);
    expect(run.placed).toHaveLength(6);
  });

  it("a sequential test places rounds of `concurrency` and stops at the boundary: θ 0.7 ± 0.1 needs 11 passes → 3 rounds of 4", async () => {
    const s = scenario({ iterations: 20, pass_rate: 0.7, confidence: 0.95, margin: 0.1, max_iterations: 20 });
    const run = await drive(plan(s), 4, () => true);
    expect(run.placed).toHaveLength(12);
    expect(run.notNeeded).toHaveLength(8);
  });

  it("at the cap a sequential test has placed every call (inconclusive is decided by the verdict, not here)", async () => {
    const s = scenario({ iterations: 20, pass_rate: 0.7, confidence: 0.95, margin: 0.1, max_iterations: 20 });
    // Every third-or-so call fails (3 of every 10): the log-likelihood ratio stays near 0.
    const run = await drive(plan(s), 4, (_, n) => Math.floor(n * 0.3) === Math.floor((n - 1) * 0.3));
    expect(run.placed).toHaveLength(20);
  });

  it("a sequential test looks only between rounds: a boundary crossed mid-round and left again does not stop it", async () => {
    const s = scenario({ iterations: 40, pass_rate: 0.7, confidence: 0.95, margin: 0.1, max_iterations: 40 });
    // Rounds 1–2 alternate (Λ −1.62 after 8); round 3 finishes fail, fail (4:6, Λ −3.01, below ln 0.05)
    // then pass, pass (6:6, Λ −2.43): undecided at the look; round 4 all fail (6:10) → failed at 16.
    const outcome = (_: PlannedCall, n: number) => (n <= 8 ? n % 2 === 1 : n === 11 || n === 12);
    const run = await drive(plan(s), 4, outcome);
    expect(run.placed).toHaveLength(16);
  });

  it("a call the stop cut short settles nothing: the calls after it are not run, never 'not needed'", async () => {
    const calls = plan(scenario({ iterations: 3, min_pass: 3 }));
    const stop = new AbortController();
    const schedule = new Schedule(calls, { concurrency: 1, signal: stop.signal });
    const first = await schedule.next();
    expect(first).toBe(0);
    // The run is stopped while call 0 is in flight; it ends interrupted (it would have been a failure).
    stop.abort();
    schedule.finished(0, "interrupted");
    expect(await schedule.next()).toBeUndefined();
    expect(schedule.unplaced()).toEqual([1, 2]);
    expect([...schedule.notNeeded]).toEqual([]);
    // The same call ending in an error of its own settles min_pass 3 of 3: the rest are not needed.
    const settled = new Schedule(calls, { concurrency: 1 });
    await settled.next();
    settled.finished(0, "error");
    expect(await settled.next()).toBeUndefined();
    expect([...settled.notNeeded]).toEqual([1, 2]);
  });

  it("scenarios are independent: one settled early does not hold back another", async () => {
    const a = plan(scenario({ iterations: 5, min_pass: 5 }), "a");
    const b = plan(scenario({ iterations: 3 }), "b");
    const run = await drive([...a, ...b], 1, (call) => call.scenario.name === "b");
    // a fails at its first call; its other 4 calls are not needed; b places all 3.
    expect(run.placed).toEqual([0, 5, 6, 7]);
  });
});
