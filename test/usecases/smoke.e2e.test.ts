// The smoke use case (smokeStack) driven directly against a deployed stack: a temp project with one
// agent on a real file backend, deployed once to a real simulator on port 0. What the command emits
// and exits with comes from the returned { report, notes, code }: checked here without it.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type SmokeOutcome, smokeStack } from "../../src/usecases/index.ts";
import { stackOutputs } from "../helpers/agents-project.ts";
import { type BookingStack, bookingStack } from "../helpers/booking-stack.ts";
import { fakeRun } from "../helpers/run-io.ts";
import { requestCounts } from "../helpers/simulator.ts";

const API_KEY = "sk-usecase-smoke-7b2c04";

describe("smokeStack", { timeout: 180_000 }, () => {
  let stack: BookingStack;
  let pinned: string;

  const smoke = (
    selection: { scenarios?: string[]; agents?: string[]; versionId?: string },
    { dryRun = false, stopped = false } = {},
  ) =>
    smokeStack(
      {
        stack: "test",
        project: stack.context(),
        selection,
        concurrency: 2,
        dryRun,
        judgeCache: { read: true },
      },
      fakeRun({ stopped }).io,
    );
  const statuses = (outcome: SmokeOutcome) => outcome.report?.results.map((r) => `${r.scenario}: ${r.status}`);

  beforeAll(async () => {
    stack = await bookingStack(API_KEY, { failing: true, deploy: true });
    const versions = (await stackOutputs(stack.project.stack)).versions?.value as Record<string, string> | undefined;
    pinned = versions?.booking ?? "";
    expect(pinned).toMatch(/@v1$/);
  });
  afterAll(() => stack?.close());

  it("a passing scenario: its report, no notes, code 0", async () => {
    const outcome = await smoke({ scenarios: ["checks-availability-and-books"] });
    expect(outcome.code).toBe(0);
    expect(outcome.notes).toEqual([]);
    expect(statuses(outcome)).toEqual(["checks-availability-and-books: passed"]);
    expect(outcome.report?.results[0]?.version_id).toBe(pinned);
  });

  it("a failing expectation: code 1, the scenario failed in the report", async () => {
    const outcome = await smoke({ scenarios: ["says-what-it-never-says"] });
    expect(outcome.code).toBe(1);
    expect(outcome.notes).toEqual([]);
    expect(statuses(outcome)).toEqual(["says-what-it-never-says: failed"]);
  });

  it("a version the service does not know: the note after the report says so, code 3", async () => {
    const unknown = pinned.replace(/@v\d+$/, "@v99");
    const outcome = await smoke({ agents: ["booking"], scenarios: ["says-what-it-never-says"], versionId: unknown });
    expect(outcome.code).toBe(3);
    expect(outcome.notes).toHaveLength(1);
    expect(outcome.notes[0]).toContain(
      `${unknown} is not one of the versions stack test pins (it pins booking at ${pinned})`,
    );
  });

  it("a dry run places no call and ends without a report, code 0", async () => {
    const before = (await requestCounts(stack.sim)).count;
    const outcome = await smoke({}, { dryRun: true });
    expect(outcome).toEqual({ report: undefined, notes: [], code: 0 });
    expect((await requestCounts(stack.sim)).count).toBe(before);
  });

  it("stopped before its calls: every planned call not run, no notes, code 130", async () => {
    const outcome = await smoke({}, { stopped: true });
    expect(outcome.code).toBe(130);
    expect(outcome.notes).toEqual([]);
    expect(outcome.report?.interrupted).toBe(true);
    expect(outcome.report?.results.length).toBeGreaterThan(0);
    expect(outcome.report?.results.every((r) => r.outcome.kind === "not_run")).toBe(true);
  });
});
