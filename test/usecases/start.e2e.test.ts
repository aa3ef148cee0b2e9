// The start use case (deployAndSmoke) driven directly: a temp project with one agent on a real
// file backend (the Pulumi CLI), its stack pointed at a real simulator on port 0. What the command
// emits and exits with comes from the returned { report, notes, code }: checked here without it.
import { existsSync } from "node:fs";
import { readFile, writeFile } from "node:fs/promises";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parseDocument } from "yaml";
import { IoError } from "../../src/errors/index.ts";
import type { Report } from "../../src/results/index.ts";
import { deployAndSmoke, type StartIO } from "../../src/usecases/index.ts";
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
  /** The run's IO with a report writer that records what it was given (or fails, as a full disk would). */
  const withWriter = (run: FakeRun, fail = false) => {
    const written: { report: Report; shown: boolean }[] = [];
    const io: StartIO = {
      ...run.io,
      writeReport: async (report, shown) => {
        if (fail) throw new IoError("cannot write reports/smoke.json: ENOSPC");
        written.push({ report, shown });
      },
    };
    return { io, written };
  };
  const baseFile = () => path.join(stack.context().stateDir, "comparison-base.test.json");
  const scenarioNames = (report: Report | undefined) => report?.results.map((r) => `${r.scenario}: ${r.status}`);

  beforeAll(async () => {
    stack = await bookingStack(API_KEY);
  });
  afterAll(() => stack?.close());

  it("stopped before `pulumi up`: every scenario not run, in which phase, code 130, nothing deployed", async () => {
    const run: FakeRun = fakeRun({ stopped: true });
    const outcome = await deployAndSmoke(request(true), withWriter(run).io);
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
    const outcome = await deployAndSmoke(request(false), withWriter(run).io);
    expect(outcome).toEqual({ report: undefined, notes: [], code: 0, deployed: true });
    expect(run.out()).toContain("Changes applied.");
    expect(run.out()).toMatch(/^booking\s+conversational\s+ca_\S+@v1\s/m);
    expect(run.connections).toEqual([stack.sim.url]);
  });

  it("a failing expectation in the smoke phase: the report says which, code 1", async () => {
    await addScenarios(stack.project.dir, "booking", NEVER_SAID);
    const run = fakeRun();
    const outcome = await deployAndSmoke(request(true), withWriter(run).io);
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

  it("a changed agent compared with the version before: the report is written before the comparison base is consumed", async () => {
    const file = path.join(stack.project.dir, "agents", "booking.yaml");
    const doc = parseDocument(await readFile(file, "utf8"));
    doc.setIn(["config", "runtime", "variables", 0, "default_value"], "Lakeside Dental");
    await writeFile(file, doc.toString());
    // The report cannot be written: the run fails, and the base it compared against is still there.
    const failing = withWriter(fakeRun(), true);
    await expect(deployAndSmoke(request(true), failing.io)).rejects.toThrow(/ENOSPC/);
    expect(existsSync(baseFile())).toBe(true);
    // The next run compares against it again, writes its report, then consumes the base.
    const run = withWriter(fakeRun());
    const outcome = await deployAndSmoke(request(true), run.io);
    expect(outcome.report?.kind).toBe("compare");
    expect(run.written.map((w) => [w.report.kind, w.shown])).toEqual([["compare", true]]);
    expect(existsSync(baseFile())).toBe(false);
  });
});
