// The plan use case (planStack) driven directly: a temp project with one agent on a real file
// backend (the Pulumi CLI), deployed to a real simulator on port 0, then changed as a pull request
// would. What the command emits and exits with comes from the returned { report, notes, code }.
import { readFile, writeFile } from "node:fs/promises";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parseDocument } from "yaml";
import { planStack } from "../../src/usecases/index.ts";
import { type BookingStack, bookingStack } from "../helpers/booking-stack.ts";
import { commitBase } from "../helpers/pull-request.ts";
import { fakeRun } from "../helpers/run-io.ts";

const API_KEY = "sk-usecase-plan-51d9e8";

describe("planStack", { timeout: 180_000 }, () => {
  let stack: BookingStack;

  const request = (options: { behave?: boolean; offline?: boolean; base?: string }) => ({
    stack: "test",
    project: stack.context(),
    offline: false,
    behave: false,
    judgeCache: { read: true },
    ...options,
  });
  const edit = async (file: string, change: (doc: ReturnType<typeof parseDocument>) => void) => {
    const doc = parseDocument(await readFile(path.join(stack.project.dir, file), "utf8"));
    change(doc);
    await writeFile(path.join(stack.project.dir, file), doc.toString());
  };

  beforeAll(async () => {
    stack = await bookingStack(API_KEY, { failing: true, deploy: true });
  });
  afterAll(() => stack?.close());

  it("a config change played with --behave: the plan holds its behaviour report, a failing scenario's code 1", async () => {
    await edit("agents/booking.yaml", (doc) =>
      doc.setIn(["config", "runtime", "variables", 0, "default_value"], "Lakeside Dental"),
    );
    const run = fakeRun();
    const outcome = await planStack(request({ behave: true }), run.io);
    expect(outcome.report.agents.map((a) => `${a.agent}: ${a.action}`)).toEqual(["booking: replace"]);
    const behaviour = outcome.report.behave_report;
    expect(behaviour?.kind).toBe("behave");
    const statuses = behaviour?.results.map((r) => `${r.scenario}: ${r.status}`);
    expect(statuses).toEqual(expect.arrayContaining(["says-what-it-never-says: failed"]));
    expect(statuses).toEqual(expect.arrayContaining(["checks-availability-and-books: passed"]));
    expect(outcome.code).toBe(1);
    expect(outcome.notes).toEqual([]);
    expect(run.out()).toMatch(/behaviour preview: booking against ca_\S+@v1 with override_config runtime/);
    expect(run.connections).toEqual([stack.sim.url]);
  });

  it("offline, in a pull request that changes a guarded setting: the partial plan, the note, code 1", async () => {
    await commitBase(stack.project.dir);
    await edit("Pulumi.test.yaml", (doc) => doc.setIn(["config", "agents:judgeModel"], "another-judge"));
    const outcome = await planStack(request({ offline: true, base: "origin/main" }), fakeRun().io);
    expect(outcome.report.limits?.length).toBeGreaterThan(0);
    expect(outcome.report.settings?.changes).toEqual([
      expect.objectContaining({ key: "agents:judgeModel", guarded: true }),
    ]);
    expect(outcome.notes).toEqual([
      "plan for test: the pull request changes agents:judgeModel (read from origin/main for this preview): a human must review the change\n",
    ]);
    expect(outcome.code).toBe(1);
  });
});
