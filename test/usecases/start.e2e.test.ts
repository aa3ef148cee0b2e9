// The start use case (deployAndSmoke) driven directly: a temp project with one agent on a real
// file backend (the Pulumi CLI), its stack pointed at a real simulator on port 0. What the command
// emits and exits with comes from the returned { report, notes, code }: checked here without it.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Report } from "../../src/results/index.ts";
import { deployAndSmoke } from "../../src/usecases/index.ts";
import { addScenarios, stackOutputs } from "../helpers/agents-project.ts";
import { type BookingStack, bookingStack, NEVER_SAID } from "../helpers/booking-stack.ts";
import { type FakeRun, fakeRun } from "../helpers/run-io.ts";

const API_KEY = "sk-usecase-start-3e9a51";

/** Each case runs `pulumi up` (or stops before it): tens of seconds on a busy 2-core machine. */
describe("deployAndSmoke", { timeout: 240_000 }, () => {
  let stack: BookingStack;

  const request = (smoke: boolean) => ({
    stack: "test",
    project: stack.context(),
    smoke,
    compare: { allowInconclusive: false },
  });
  const scenarioNames = (report: Report | undefined) => report?.results.map((r) => `${r.scenario}: ${r.status}`);

  beforeAll(async () => {
    stack = await bookingStack(API_KEY);
  });
  afterAll(() => stack?.close());

  it("stopped before `pulumi up`: every scenario not run, in which phase, code 130, nothing deployed", async () => {
    const run: FakeRun = fakeRun({ stopped: true });
    const outcome = await deployAndSmoke(request(true), run.io);
    expect(outcome.code).toBe(130);
    expect(outcome).toMatchObject({ deployed: false, stopped: "the Pulumi run was not started", notes: [] });
    expect(outcome.report?.interrupted).toBe(true);
    const results = outcome.report?.results ?? [];
    expect(results.length).toBeGreaterThan(0);
    expect(results.every((r) => r.outcome.kind === "not_run")).toBe(true);
    expect(run.out()).not.toContain("pulumi up --yes");
    expect((await stackOutputs(stack.project.stack)).versions).toBeUndefined();
  });

  it("without smoke: the agents deployed, no report, code 0", async () => {
    const run = fakeRun();
    const outcome = await deployAndSmoke(request(false), run.io);
    expect(outcome).toEqual({ report: undefined, notes: [], code: 0, deployed: true });
    expect(run.out()).toContain("Changes applied.");
    expect(run.out()).toMatch(/^booking\s+conversational\s+ca_\S+@v1\s/m);
    expect(run.connections).toEqual([stack.sim.url]);
  });

  it("a failing expectation in the smoke phase: the report says which, code 1", async () => {
    await addScenarios(stack.project.dir, "booking", NEVER_SAID);
    const run = fakeRun();
    const outcome = await deployAndSmoke(request(true), run.io);
    expect(outcome.code).toBe(1);
    expect(outcome.deployed).toBe(true);
    expect(outcome.stopped).toBeUndefined();
    expect(outcome.notes).toEqual([]);
    expect(outcome.report?.kind).toBe("smoke");
    expect(scenarioNames(outcome.report)).toEqual(
      expect.arrayContaining(["checks-availability-and-books: passed", "says-what-it-never-says: failed"]),
    );
    expect(run.out()).toContain("No changes.");
  });
});
