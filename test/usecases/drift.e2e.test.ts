// `baseline bless`'s use case against a real stack (the Pulumi CLI, a file backend; initialised,
// not deployed, so it holds no agent): a report of a version the stack does not hold is refused,
// naming the file, the agent, both sides and what to do, and nothing is written. Blessing the held
// versions is driven end to end in test/drift.e2e.test.ts; drift.test.ts holds what needs no stack.
import { access, writeFile } from "node:fs/promises";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { InvalidInputError } from "../../src/errors/index.ts";
import { projectContext } from "../../src/settings/index.ts";
import { blessReports } from "../../src/usecases/drift.ts";
import { type AgentsProject, agentsProject } from "../helpers/agents-project.ts";
import { type PulumiSandbox, pulumiSandbox } from "../helpers/pulumi.ts";
import { startTestSimulator } from "../helpers/simulator.ts";

const API_KEY = "sk-bless-usecase-3a1f";
const SLOW = 300_000;
const SCENARIO = "checks-availability-and-books";
let sandbox: PulumiSandbox;
let sim: Awaited<ReturnType<typeof startTestSimulator>>;
let project: AgentsProject;

/** A smoke report (as `smoke --json` writes it) of two passing calls of booking's scenario on `version`. */
async function smokeReport(file: string, version: string): Promise<string> {
  const call = (iteration: number) => ({
    agent: "booking",
    scenario: SCENARIO,
    iteration,
    status: "passed",
    version_id: version,
    outcome: { kind: "passed" },
    fault: null,
    latency: { first_response_ms: 10, response_ms: [100], tool_ms: [] },
    timings: { duration_ms: 200 },
    assertions: [
      { kind: "tool_calls", key: "check_availability", description: "calls check_availability", passed: true },
    ],
  });
  const target = path.join(project.dir, file);
  await writeFile(
    target,
    JSON.stringify({
      format: "agent-iac-report",
      version: 4,
      kind: "smoke",
      stack: "test",
      created_at: "2026-11-29T08:00:00Z",
      results: [call(1), call(2)],
      scenarios: [],
    }),
  );
  return target;
}

const bless = (reports: string[]) =>
  blessReports(
    {
      stack: "test",
      project: projectContext({
        cwd: project.dir,
        env: { ...process.env, ...sandbox.env, AGENT_IAC_API_KEY: API_KEY },
      }),
      reports,
      now: "2026-11-29T09:00:00Z",
    },
    () => {},
  );

beforeAll(async () => {
  sandbox = await pulumiSandbox();
  sim = await startTestSimulator({ apiKey: API_KEY });
  project = await agentsProject(sandbox, { baseUrl: sim.url, apiKey: API_KEY });
}, SLOW);
afterAll(async () => {
  await project?.cleanup();
  await sim?.close();
  await sandbox?.cleanup();
});

describe("blessReports", { timeout: SLOW }, () => {
  it("a report of a version the stack does not hold is refused before anything is written", async () => {
    const other = await smokeReport("other.json", "ca_other@v9");
    const error = await bless([other]).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(InvalidInputError);
    expect((error as Error).message).toBe(
      'other.json: agent "booking" was called on ca_other@v9, but the stack holds no such agent: bless reports of the versions the stack holds (run smoke again)',
    );
    await expect(access(path.join(project.dir, "baselines"))).rejects.toThrow();
  });
});
