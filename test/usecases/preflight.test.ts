// What `start` checks before it deploys (preflight.ts), in its order: the reused simulator, the
// pending comparison base (with or without smoke), then — only with smoke — that scenarios with
// judged expectations have a judge, said before anything is created. A real stack (the Pulumi CLI,
// a file backend; initialised, not deployed) of the example agents against the simulator on port 0.
import { mkdir, rm, writeFile } from "node:fs/promises";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ConfigError } from "../../src/errors/index.ts";
import { projectContext } from "../../src/settings/index.ts";
import { type LocalService, localService } from "../../src/usecases/local-service.ts";
import { checkBeforeDeploy } from "../../src/usecases/preflight.ts";
import { openSession, type StackSession } from "../../src/usecases/session.ts";
import { type AgentsProject, addScenarios, agentsProject } from "../helpers/agents-project.ts";
import { type PulumiSandbox, pulumiSandbox } from "../helpers/pulumi.ts";
import { rejectedWith } from "../helpers/rejection.ts";
import { requestCounts, startTestSimulator } from "../helpers/simulator.ts";

const API_KEY = "sk-preflight-7d21";
const SLOW = 300_000;
let sandbox: PulumiSandbox;
let sim: Awaited<ReturnType<typeof startTestSimulator>>;
let project: AgentsProject;
let service: LocalService;

/** The environment of the run without any judge of the machine's. */
const baseEnv = () =>
  Object.fromEntries(Object.entries(process.env).filter(([key]) => !key.startsWith("AGENT_IAC_JUDGE")));

async function session(env: Record<string, string> = {}): Promise<StackSession> {
  const context = projectContext({
    cwd: project.dir,
    env: { ...baseEnv(), ...sandbox.env, AGENT_IAC_API_KEY: API_KEY, ...env },
  });
  return openSession("test", { project: context });
}

const refusal = (promise: Promise<unknown>) => rejectedWith(promise, ConfigError);

beforeAll(async () => {
  sandbox = await pulumiSandbox();
  sim = await startTestSimulator({ apiKey: API_KEY });
  project = await agentsProject(sandbox, { baseUrl: sim.url, apiKey: API_KEY });
  const judged = (name: string) => ({
    name,
    channel: { callee_no: "+15550100100" },
    expect: { judge: ["offers a slot"] },
  });
  await addScenarios(project.dir, "booking", judged("j1"), judged("j2"), judged("j3"), judged("j4"));
  const opened = await session();
  service = await localService(opened.project, opened.connection, "test", () => {});
}, SLOW);
afterAll(async () => {
  await service?.close();
  await project?.cleanup();
  await sim?.close();
  await sandbox?.cleanup();
});

describe("checkBeforeDeploy", { timeout: SLOW }, () => {
  it("judged scenarios without a judge stop a deploy with smoke, naming them; without smoke they need none", async () => {
    const before = await requestCounts(sim);
    const opened = await session();
    expect(service.reused).toBeDefined();
    await expect(checkBeforeDeploy(opened, service, { smoke: false })).resolves.toBeUndefined();
    const error = await refusal(checkBeforeDeploy(opened, service, { smoke: true }));
    expect(error.message).toMatch(
      /^scenario\(s\) booking\/j1, booking\/j2, booking\/j3 and 1 more have judged expectations \(expect\.judge\); nothing was deployed, but no judge is configured for stack test: /,
    );
    // Nothing was created on the service.
    const after = await requestCounts(sim);
    expect(after.by_route["POST /conversational_agents"] ?? 0).toBe(
      before.by_route["POST /conversational_agents"] ?? 0,
    );
  });

  it("with a judge configured, the judged scenarios pass the check and the judge is not asked yet", async () => {
    const opened = await session({
      AGENT_IAC_JUDGE_BASE_URL: "http://127.0.0.1:9/v1",
      AGENT_IAC_JUDGE_MODEL: "judge-1",
    });
    // Port 9 answers nothing: a request to the judge here would fail the check.
    await expect(checkBeforeDeploy(opened, service, { smoke: true })).resolves.toBeUndefined();
  });

  it("a damaged pending comparison base stops the deploy, smoke or not, before the judge is looked for", async () => {
    const file = path.join(project.dir, ".agent-iac", "comparison-base.test.json");
    await mkdir(path.dirname(file), { recursive: true });
    await writeFile(file, '{"stack": "test", "versions": ');
    try {
      const opened = await session();
      const quiet = await refusal(checkBeforeDeploy(opened, service, { smoke: false }));
      expect(quiet.message).toMatch(
        /comparison-base\.test\.json: the pending comparison base is damaged: it is not JSON/,
      );
      // With smoke and no judge: the base is said first (the order start checks in).
      const first = await refusal(checkBeforeDeploy(opened, service, { smoke: true }));
      expect(first.message).toBe(quiet.message);
    } finally {
      await rm(file);
    }
  });
});
