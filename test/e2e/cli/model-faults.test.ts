// Model errors named right and faults on whom they belong (issues 59 and 60), end to end: the real
// Pulumi CLI, the simulator and a model double (a real HTTP server) on port 0. A model that refuses
// its key stops the run before any conversation, exit 2, naming that model's key setting (never the
// service's agents:apiKey); a caller whose model hangs, fails or is slow is the caller's fault (or
// plays); an agent that never ends the call is the agent's, a server.error that ends it the service's.
import { readFile } from "node:fs/promises";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { CallResult } from "../../../src/results/index.ts";
import { type AgentsProject, addScenarios, agentsProject, deployStack } from "../../helpers/agents-project.ts";
import { runInProcess } from "../../helpers/cli.ts";
import { startTestJudge } from "../../helpers/judge-server.ts";
import { type ModelBody, type ModelDouble, type ModelReply, startModelDouble } from "../../helpers/model-double.ts";
import { type PulumiSandbox, pulumiSandbox } from "../../helpers/pulumi.ts";
import { requestCounts, startTestSimulator } from "../../helpers/simulator.ts";

const API_KEY = "sk-model-faults-service-5521";
const CALLER_KEY = "sk-model-faults-caller-77a1";
const JUDGE_KEY = "sk-model-faults-judge-19c2";
const WRONG_KEY = "sk-model-faults-wrong-0003";

type Mode = "line" | "slow" | "hang" | "hang-after-first" | "500";

const LINE = "Could you check availability for a cleaning on Tuesday morning?";

/** The caller's model as each test scripts it. */
function answer(mode: Mode, body: ModelBody, n: number): ModelReply {
  const asked = body.messages.find((m) => m.role === "user")?.content ?? "";
  const line = { content: asked.includes("check_availability") ? "DONE" : LINE };
  switch (mode) {
    case "line":
      return line;
    case "slow":
      // Slower than the simulator's default wait for a session's first line (1.5 s).
      return { ...line, delayMs: 2500 };
    case "hang":
      return { hang: true };
    case "hang-after-first":
      return n === 1 ? line : { hang: true };
    case "500":
      return { status: 500 };
  }
}

/** A call of the JSON report, as the report's schema types it. */
type Call = CallResult;

describe("model errors and faults, named right", () => {
  let sandbox: PulumiSandbox;
  let sim: Awaited<ReturnType<typeof startTestSimulator>>;
  let project: AgentsProject;
  let model: ModelDouble;
  let mode: Mode = "line";
  /** The model's requests before the test: a test's n-th request is n after it. */
  let base = 0;
  let runs = 0;
  const env = (extra: NodeJS.ProcessEnv = {}) => ({
    ...process.env,
    ...sandbox.env,
    AGENT_IAC_API_KEY: API_KEY,
    ...extra,
  });
  const conversations = async () => (await requestCounts(sim)).by_route["POST /conversations"] ?? 0;

  const smoke = async (scenario: string, extra: NodeJS.ProcessEnv = {}) => {
    const json = path.join(project.dir, `faults-${runs++}.json`);
    const args = [..."smoke --stack test --agent booking --scenario".split(" "), scenario, "--json", json];
    args.push("--no-judge-cache");
    const run = await runInProcess(args, { cwd: project.dir, env: env(extra) });
    const text = await readFile(json, "utf8").catch(() => "");
    return { ...run, call: text ? ((JSON.parse(text) as { results: Call[] }).results[0] as Call) : undefined };
  };

  beforeAll(async () => {
    sandbox = await pulumiSandbox();
    sim = await startTestSimulator({ apiKey: API_KEY, profile: "default" });
    model = await startModelDouble((body, n) => answer(mode, body, n - base), { apiKey: CALLER_KEY });
    project = await agentsProject(sandbox, { baseUrl: sim.url, apiKey: API_KEY });
    const persona = { persona: "A patient who wants a cleaning", goal: "an appointment on Tuesday morning" };
    const channel = { callee_no: "+15550142100" };
    await addScenarios(
      project.dir,
      "booking",
      {
        name: "persona",
        channel,
        transport: "ws",
        timeout: 8,
        caller: { ...persona, max_turns: 3, check: false },
        expect: { tool_calls: ["check_availability"] },
      },
      {
        name: "varied",
        channel,
        transport: "ws",
        timeout: 8,
        caller: { turns: ["Is Tuesday free?", "That's all, thank you."], variations: 2 },
        expect: { ends: true },
      },
      { name: "judged", channel, timeout: 8, expect: { judge: ['the agent greets: "How can I help"'] } },
      {
        name: "never-ends",
        channel,
        timeout: 3,
        context: { simulation: { user_turns: ["Hello"], wait_for_user: true } },
        expect: { says: ["I understand"] },
      },
      {
        name: "service-error",
        channel,
        timeout: 8,
        context: { simulation: { outcome: "failed" } },
        expect: { ends: true },
      },
    );
    await project.stack.setConfig("agents:callerBaseUrl", { value: model.url });
    await project.stack.setConfig("agents:callerModel", { value: "test-caller-2026-01-01" });
    await project.stack.setConfig("agents:callerApiKey", { value: CALLER_KEY, secret: true });
    await deployStack(project.stack);
  });
  afterAll(async () => {
    await Promise.all([project?.cleanup(), model?.close(), sim?.close()]);
    await sandbox?.cleanup();
  });

  describe("a model that refuses its key stops the run before any conversation (exit 2), naming its setting", () => {
    it("the judge's", async () => {
      const judge = await startTestJudge({ "How can I help": [{ verdict: "pass" }] }, { apiKey: JUDGE_KEY });
      try {
        const before = await conversations();
        const run = await smoke("judged", {
          AGENT_IAC_JUDGE_BASE_URL: judge.url,
          AGENT_IAC_JUDGE_MODEL: "test-judge-2026-01-01",
          AGENT_IAC_JUDGE_API_KEY: WRONG_KEY,
        });
        expect(run.code, run.stdout + run.stderr).toBe(2);
        expect(run.stderr).toContain(`the judge (test-judge-2026-01-01 at ${judge.url}) refused its API key`);
        expect(run.stderr).toContain("agents:judgeApiKey");
        expect(run.stderr).not.toMatch(/the service refused|check the stack's secret agents:apiKey/);
        expect(run.stderr + run.stdout).not.toContain(WRONG_KEY);
        expect(judge.keyChecks).toEqual([{ authorization: `Bearer ${WRONG_KEY}` }]);
        expect(judge.requests).toEqual([]);
        expect(await conversations()).toBe(before);
      } finally {
        await judge.close();
      }
    });

    it("the judge's, in judge check", async () => {
      const judge = await startTestJudge({ "How can I help": [{ verdict: "pass" }] }, { apiKey: JUDGE_KEY });
      try {
        const file = path.join(project.dir, "labels.yaml");
        const { writeFile } = await import("node:fs/promises");
        await writeFile(
          file,
          'items:\n  - rubric: the agent greets "How can I help"\n    transcript: ["agent: Hello. How can I help you today?"]\n    human: pass\n',
        );
        const run = await runInProcess(["judge", "check", file, "--stack", "test", "--no-judge-cache"], {
          cwd: project.dir,
          env: env({
            AGENT_IAC_JUDGE_BASE_URL: judge.url,
            AGENT_IAC_JUDGE_MODEL: "test-judge-2026-01-01",
            AGENT_IAC_JUDGE_API_KEY: WRONG_KEY,
          }),
        });
        expect(run.code, run.stdout + run.stderr).toBe(2);
        expect(run.stderr).toContain("agents:judgeApiKey");
        expect(judge.requests).toEqual([]);
      } finally {
        await judge.close();
      }
    });

    it("the caller's", async () => {
      await project.stack.setConfig("agents:callerApiKey", { value: WRONG_KEY, secret: true });
      try {
        mode = "line";
        const before = await conversations();
        const run = await smoke("persona");
        expect(run.code, run.stdout + run.stderr).toBe(2);
        expect(run.stderr).toContain(`the persona model (test-caller-2026-01-01 at ${model.url}) refused its API key`);
        expect(run.stderr).toContain("agents:callerApiKey");
        expect(run.stderr).not.toMatch(/the service refused|check the stack's secret agents:apiKey/);
        expect(run.stderr + run.stdout).not.toContain(WRONG_KEY);
        expect(await conversations()).toBe(before);
      } finally {
        await project.stack.setConfig("agents:callerApiKey", { value: CALLER_KEY, secret: true });
      }
    });
  });

  it("scenario derive from the service: the model's refused key is the model's (exit 2), not the service's (issue 60)", async () => {
    const placed = await smoke("service-error");
    const id = placed.call?.conversation_id ?? "";
    await project.stack.setConfig("agents:callerApiKey", { value: WRONG_KEY, secret: true });
    try {
      const args = ["scenario", "derive", id, "--agent", "booking", "--stack", "test", "--callee-no", "+15550142100"];
      const run = await runInProcess(args, { cwd: project.dir, env: env() });
      expect(run.code, run.stdout + run.stderr).toBe(2);
      expect(run.stderr).toContain(`the model (test-caller-2026-01-01 at ${model.url}) refused its API key`);
      expect(run.stderr).toContain("agents:callerApiKey");
      expect(run.stderr).not.toMatch(/the service refused|agents:apiKey or AGENT_IAC_API_KEY/);
    } finally {
      await project.stack.setConfig("agents:callerApiKey", { value: CALLER_KEY, secret: true });
    }
  });

  describe("a caller whose model fails is the caller's fault", () => {
    it("a caller.variations model that hangs: caller_model_failed, never the agent's caller_not_said", async () => {
      mode = "hang";
      const run = await smoke("varied");
      expect(run.code, run.stdout + run.stderr).toBe(3);
      expect(run.call).toMatchObject({ status: "error", fault: "caller", outcome: { code: "caller_model_failed" } });
      expect(run.call?.error).toMatch(/the caller's model had not answered/);
    });

    it("a persona whose model hangs after its first line does not pass", async () => {
      mode = "hang-after-first";
      base = model.requests.length;
      const run = await smoke("persona");
      expect(model.requests.length - base).toBe(2);
      expect(run.code, run.stdout + run.stderr).toBe(3);
      expect(run.call).toMatchObject({ status: "error", fault: "caller", outcome: { code: "caller_model_failed" } });
      expect(run.call?.transcript.filter((line) => line.startsWith("caller:"))).toHaveLength(1);
    });

    it("a persona model answering 500 every time is named as such, not as a conversation that ended first", async () => {
      mode = "500";
      const run = await smoke("persona");
      expect(run.code, run.stdout + run.stderr).toBe(3);
      expect(run.call).toMatchObject({ status: "error", fault: "caller", outcome: { code: "caller_model_failed" } });
      expect(run.call?.error).toMatch(/500/);
      expect(run.call?.error).not.toMatch(/had not answered/);
    });
  });

  it("a persona model slower than the simulator's default wait still plays the caller", async () => {
    mode = "slow";
    const run = await smoke("persona");
    expect(run.code, run.stdout + run.stderr).toBe(0);
    expect(run.call?.status).toBe("passed");
    expect(run.call?.transcript.some((line) => line.startsWith("caller: Could you check availability"))).toBe(true);
    expect(run.call?.transcript.some((line) => line.startsWith("user (not the caller)"))).toBe(false);
  });

  it("an agent that never ends the call is the agent's fault", async () => {
    const run = await smoke("never-ends");
    expect(run.code, run.stdout + run.stderr).toBe(3);
    expect(run.call).toMatchObject({ status: "error", fault: "agent", outcome: { code: "timeout" } });
  });

  it("a server.error that ends the call is the service's fault", async () => {
    const run = await smoke("service-error");
    expect(run.code, run.stdout + run.stderr).toBe(1);
    expect(run.call).toMatchObject({ status: "failed", fault: "service", outcome: { code: "service_error" } });
  });
});
