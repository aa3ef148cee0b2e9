// The plan use case (planStack) driven directly: a temp project with one agent on a real file
// backend (the Pulumi CLI), deployed to a real simulator on port 0, then changed as a pull request
// would. What the command emits and exits with comes from the returned { report, notes, code }.
import { cp, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parseDocument } from "yaml";
import { projectContext } from "../../src/settings/index.ts";
import { planStack } from "../../src/usecases/index.ts";
import { projectRoot } from "../../src/workspace/index.ts";
import { type AgentsProject, addScenarios, agentsProject, deployStack } from "../helpers/agents-project.ts";
import { commitBase } from "../helpers/pull-request.ts";
import { type PulumiSandbox, pulumiSandbox } from "../helpers/pulumi.ts";
import { fakeRun } from "../helpers/run-io.ts";
import { startTestSimulator } from "../helpers/simulator.ts";

const API_KEY = "sk-usecase-plan-51d9e8";

describe("planStack", { timeout: 180_000 }, () => {
  let sandbox: PulumiSandbox;
  let sim: Awaited<ReturnType<typeof startTestSimulator>>;
  let project: AgentsProject;
  let agentsDir: string;

  const request = (options: { behave?: boolean; offline?: boolean; base?: string }) => ({
    stack: "test",
    project: projectContext({ cwd: project.dir, env: { ...process.env, ...sandbox.env } }),
    offline: false,
    behave: false,
    judgeCache: { read: true },
    ...options,
  });
  const edit = async (file: string, change: (doc: ReturnType<typeof parseDocument>) => void) => {
    const doc = parseDocument(await readFile(path.join(project.dir, file), "utf8"));
    change(doc);
    await writeFile(path.join(project.dir, file), doc.toString());
  };

  beforeAll(async () => {
    sandbox = await pulumiSandbox();
    sim = await startTestSimulator({ port: 0, apiKey: API_KEY, eventDelayMs: 1, quiet: true });
    agentsDir = await mkdtemp(path.join(os.tmpdir(), "usecase-plan-agents-"));
    await cp(path.join(projectRoot, "agents", "booking.yaml"), path.join(agentsDir, "booking.yaml"));
    // The key as the stack's secret: the provider reads it from the stack, not from this process.
    project = await agentsProject(sandbox, {
      baseUrl: sim.url,
      apiKey: API_KEY,
      secretKey: true,
      agentsFrom: agentsDir,
    });
    await addScenarios(project.dir, "booking", {
      name: "says-what-it-never-says",
      channel: { callee_no: "+15550142100" },
      expect: { says: ["a sentence this agent never says"] },
    });
    await deployStack(project.stack);
  });
  afterAll(async () => {
    await project?.cleanup();
    await sim?.close();
    await sandbox?.cleanup();
    if (agentsDir) await rm(agentsDir, { recursive: true, force: true });
  });

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
    expect(run.connections).toEqual([sim.url]);
  });

  it("offline, in a pull request that changes a guarded setting: the partial plan, the note, code 1", async () => {
    await commitBase(project.dir);
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
