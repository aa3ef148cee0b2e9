// A model-played call is evidence only when the caller played (issue 51), end to end: real Pulumi CLI,
// the simulator, and real HTTP stand-ins for the persona's model and the judge, all on port 0. A
// persona model that answers 500, hangs, says DONE at once or answers a judge's JSON is the caller's
// error (exit 3, fault caller), and no report calls the simulator's own turns the caller's; Ctrl+C
// during a hanging persona request ends the run at once; an agent that misses an expectation with a
// faithful persona is the agent's fault.
import { spawn } from "node:child_process";
import { readFile } from "node:fs/promises";
import { createServer, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type AgentsProject, addScenarios, agentsProject, deployStack } from "../../helpers/agents-project.ts";
import { CLI, runInProcess } from "../../helpers/cli.ts";
import { type JudgeAnswer, startTestJudge } from "../../helpers/judge-server.ts";
import { isKeyCheck } from "../../helpers/model-double.ts";
import { type PulumiSandbox, pulumiSandbox } from "../../helpers/pulumi.ts";
import { startTestSimulator } from "../../helpers/simulator.ts";

const API_KEY = "sk-caller-evidence-51";

type Mode = "line" | "500" | "hang" | "done" | "verdict";

type ModelServer = { url: string; mode: Mode; requests: number; close(): Promise<void> };

/** The persona's model: a caller who wants a Tuesday appointment, or one of the ways a model fails. */
async function modelServer(): Promise<ModelServer> {
  const hanging = new Set<ServerResponse>();
  const model: ModelServer = { url: "", mode: "line", requests: 0, close: async () => {} };
  const server: Server = createServer(async (request, response) => {
    let text = "";
    for await (const chunk of request) text += chunk;
    const body = JSON.parse(text) as { messages: { role: string; content: string }[]; response_format?: unknown };
    const transcript = body.messages.find((m) => m.role === "user")?.content ?? "";
    const answer = (content: string) => {
      response.setHeader("content-type", "application/json");
      response.end(JSON.stringify({ model: "test-caller", choices: [{ index: 0, message: { content } }] }));
    };
    // The model port's key check before the calls: answered whatever the mode, not counted.
    if (isKeyCheck(body)) return answer("OK");
    model.requests++;
    // Asked as a judge (the run's judge is this endpoint too): every rubric passes on line 1.
    if (body.response_format) return answer(JSON.stringify({ verdict: "pass", reason: "in persona", lines: [1] }));
    switch (model.mode) {
      case "500":
        response.statusCode = 500;
        response.end(JSON.stringify({ error: { message: "the model is down" } }));
        return;
      case "hang":
        hanging.add(response);
        return;
      case "done":
        return answer("DONE");
      case "verdict":
        return answer(JSON.stringify({ verdict: "pass", reason: "the agent greets", lines: [1] }));
      case "line":
        return answer(
          transcript.includes("check_availability")
            ? "DONE"
            : "Could you check availability for a cleaning on Tuesday morning?",
        );
    }
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  model.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
  model.close = async () => {
    for (const response of hanging) response.destroy();
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  };
  return model;
}

type Call = {
  status: string;
  fault: string | null;
  outcome: { kind: string; code: string | null };
  error: string | null;
  transcript: string[];
  entries: { kind: string; text?: string; by?: string }[];
};
type Report = { results: Call[] };

describe("a persona caller's evidence", () => {
  let sandbox: PulumiSandbox;
  let sim: Awaited<ReturnType<typeof startTestSimulator>>;
  let project: AgentsProject;
  let model: ModelServer;
  let runs = 0;
  const env = () => ({ ...process.env, ...sandbox.env, AGENT_IAC_API_KEY: API_KEY });

  const smoke = async (scenario: string, ...extra: string[]) => {
    const base = path.join(project.dir, `evidence-${runs++}`);
    const reports = ["--json", `${base}.json`, "--junit", `${base}.xml`, "--html", `${base}.html`];
    const args = [..."smoke --stack test --agent booking --scenario".split(" "), scenario, ...reports, ...extra];
    const run = await runInProcess(args, { cwd: project.dir, env: env() });
    const read = (ext: string) => readFile(`${base}.${ext}`, "utf8").catch(() => "");
    const json = await read("json");
    return {
      ...run,
      report: json ? (JSON.parse(json) as Report) : undefined,
      junit: await read("xml"),
      html: await read("html"),
    };
  };

  beforeAll(async () => {
    sandbox = await pulumiSandbox();
    sim = await startTestSimulator({ apiKey: API_KEY, profile: "default" });
    model = await modelServer();
    project = await agentsProject(sandbox, { baseUrl: sim.url, apiKey: API_KEY });
    const persona = { persona: "A patient who wants a cleaning", goal: "an appointment on Tuesday morning" };
    await addScenarios(
      project.dir,
      "booking",
      {
        name: "persona-books",
        channel: { callee_no: "+15550142100" },
        transport: "ws",
        timeout: 20,
        caller: { ...persona, max_turns: 3 },
        expect: { tool_calls: ["check_availability"] },
      },
      {
        name: "persona-unchecked",
        channel: { callee_no: "+15550142100" },
        transport: "ws",
        timeout: 20,
        caller: { ...persona, max_turns: 3, check: false },
        expect: { tool_calls: ["check_availability"] },
      },
      {
        name: "persona-impatient",
        channel: { callee_no: "+15550142100" },
        transport: "ws",
        timeout: 20,
        context: { simulation: { caller_wait_ms: 0 } },
        caller: { ...persona, max_turns: 3 },
        expect: { tool_calls: ["check_availability"] },
      },
      {
        name: "persona-expects-too-much",
        channel: { callee_no: "+15550142100" },
        transport: "ws",
        timeout: 20,
        caller: { ...persona, max_turns: 3 },
        expect: { tool_calls: ["check_availability", "transfer_to_human"] },
      },
    );
    await project.stack.setConfig("agents:callerBaseUrl", { value: model.url });
    await project.stack.setConfig("agents:callerModel", { value: "test-caller-2026-01-01" });
    await deployStack(project.stack);
  });
  afterAll(async () => {
    await Promise.all([project?.cleanup(), model?.close(), sim?.close()]);
    await sandbox?.cleanup();
  });

  it.each([
    ["500", /^caller_model_failed$/],
    ["hang", /^caller_model_failed$/],
    ["done", /^caller_silent$/],
    ["verdict", /^caller_not_a_line$/],
  ] as const)(
    "a persona model that answers %s is the caller's error, and no report says the caller spoke",
    async (mode, code) => {
      model.mode = mode;
      const run = await smoke("persona-books");
      expect(run.code, run.stdout + run.stderr).toBe(3);
      const call = run.report?.results[0] as Call;
      expect(call.status).toBe("error");
      expect(call.outcome.code).toMatch(code);
      expect(call.fault).toBe("caller");
      // The simulator waited for the caller's first line (agent-iac told it to: caller_wait_ms), so
      // it played none of its own turns; any user line would be labelled not the caller's.
      const users = call.entries.filter((e) => e.kind === "user");
      if (mode === "500" || mode === "hang") expect(users).toEqual([]);
      if (mode === "500") expect(call.error).toMatch(/500/);
      for (const entry of users) expect(entry.by).toBe("not_caller");
      expect(call.transcript.filter((line) => line.startsWith("user (not the caller): ")).length).toBe(users.length);
      expect(call.transcript.filter((line) => line.startsWith("caller:"))).toEqual([]);
      expect(run.junit).not.toMatch(/^caller:/m);
      expect(run.html).not.toMatch(/class="[^"]*\bcaller\b/);
      expect(run.stdout).not.toMatch(/caller: /);
      expect(run.stdout).toMatch(/1 could not complete: 1 caller/);
    },
  );

  it("scenario capture of a recorded call takes only the lines its caller sent", async () => {
    model.mode = "500";
    // This scenario's simulator plays its own turns at once (caller_wait_ms 0): lines the caller did not send.
    const run = await smoke("persona-impatient", "--record", "rec-500");
    const call = run.report?.results[0] as Call & { conversation_id: string };
    const capture = await runInProcess(
      ["scenario", "capture", call.conversation_id, "--from-recording", path.join(project.dir, "rec-500")],
      { cwd: project.dir, env: env() },
    );
    expect(capture.code, capture.stderr).toBe(0);
    expect(capture.stdout).not.toMatch(/turns:/);
    expect(capture.stderr).toMatch(/user line\(s\) the caller did not send .* left out of caller\.turns/);
    expect(capture.stderr).toMatch(/captured 0 caller turn\(s\)/);
  });

  it("an agent that misses an expectation with a faithful persona is the agent's fault", async () => {
    model.mode = "line";
    const run = await smoke("persona-expects-too-much");
    expect(run.code, run.stdout + run.stderr).toBe(1);
    const call = run.report?.results[0] as Call;
    expect(call.status).toBe("failed");
    expect(call.fault).toBe("agent");
    expect(call.transcript.filter((line) => line.startsWith("caller:")).length).toBe(1);
    expect(run.junit).toMatch(/fault: agent/);
    expect(run.stdout).toMatch(/1 failed: 1 agent/);
  });

  describe("checked by the judge", () => {
    const STRAYED: JudgeAnswer = { verdict: "fail", reason: "the caller talks about the weather", lines: [2] };
    const FAITHFUL: JudgeAnswer = { verdict: "pass", reason: "the caller asks for Tuesday", lines: [2] };
    const withJudge = async (answers: JudgeAnswer[], ...scenarios: string[]) => {
      const judge = await startTestJudge({ "the caller (the lines marked caller:)": answers });
      process.env.AGENT_IAC_JUDGE_BASE_URL = judge.url;
      process.env.AGENT_IAC_JUDGE_MODEL = "test-judge-2026-01-01";
      try {
        const [first = "", ...more] = scenarios.filter((name) => !name.startsWith("--"));
        const flags = scenarios.filter((name) => name.startsWith("--"));
        const run = await smoke(first, ...more.flatMap((name) => ["--scenario", name]), "--no-judge-cache", ...flags);
        return { ...run, judged: judge.requests.length };
      } finally {
        delete process.env.AGENT_IAC_JUDGE_BASE_URL;
        delete process.env.AGENT_IAC_JUDGE_MODEL;
        await judge.close();
      }
    };

    it("a persona that left its goal makes the call inconclusive, the caller's fault, and it is placed again", async () => {
      model.mode = "line";
      const run = await withJudge([STRAYED, STRAYED, STRAYED, FAITHFUL], "persona-books");
      expect(run.code, run.stdout + run.stderr).toBe(0);
      const [strayed, again] = run.report?.results ?? [];
      expect(strayed).toMatchObject({ status: "inconclusive", fault: "caller", outcome: { code: "caller_strayed" } });
      expect(again).toMatchObject({ iteration: 2, status: "passed", fault: null });
      expect(run.judged).toBe(6);
      expect(run.stdout).toMatch(/calls 1 inconclusive: 1 caller/);
    });

    it("a caller that strays every time leaves the scenario inconclusive (exit 1), never a pass or the agent's failure", async () => {
      model.mode = "line";
      const run = await withJudge([STRAYED], "persona-books");
      expect(run.code, run.stdout + run.stderr).toBe(1);
      expect(run.report?.results.map((r) => [r.status, r.fault])).toEqual([
        ["inconclusive", "caller"],
        ["inconclusive", "caller"],
      ]);
      expect(run.junit).toMatch(/fault: caller/);
    });

    it("the dry run counts the check's votes and the call placed again", async () => {
      const run = await withJudge([STRAYED], "persona-books", "persona-unchecked", "--dry-run");
      expect(run.code, run.stdout + run.stderr).toBe(0);
      expect(run.judged).toBe(0);
      expect(run.stdout).toMatch(/persona-books: .*3 judge request\(s\) per call; the judge checks the caller/);
      expect(run.stdout).not.toMatch(/persona-unchecked: .*judge request/);
      // persona-books placed twice at most, persona-unchecked once; 3 votes for each persona-books call.
      expect(run.stdout).toMatch(/worst case: 3 call\(s\), 1 call minutes .*at most 6 judge request\(s\)/);
    });

    it("caller.check: false asks the judge nothing", async () => {
      model.mode = "line";
      const run = await withJudge([STRAYED], "persona-unchecked");
      expect(run.code, run.stdout + run.stderr).toBe(0);
      expect(run.judged).toBe(0);
    });
  });

  it("says once per run that the judge's model plays the persona when no caller model is set", async () => {
    model.mode = "line";
    await project.stack.removeConfig("agents:callerBaseUrl");
    await project.stack.removeConfig("agents:callerModel");
    process.env.AGENT_IAC_JUDGE_BASE_URL = model.url;
    process.env.AGENT_IAC_JUDGE_MODEL = "test-judge-2026-01-01";
    try {
      const run = await smoke("persona-books", "--scenario", "persona-expects-too-much");
      expect(run.report?.results.length).toBe(2);
      expect(
        run.stdout.match(/note: the persona caller is played by the judge's model \(test-judge-2026-01-01\)/g),
      ).toHaveLength(1);
    } finally {
      delete process.env.AGENT_IAC_JUDGE_BASE_URL;
      delete process.env.AGENT_IAC_JUDGE_MODEL;
      await project.stack.setConfig("agents:callerBaseUrl", { value: model.url });
      await project.stack.setConfig("agents:callerModel", { value: "test-caller-2026-01-01" });
    }
  });

  it("Ctrl+C while the persona's request hangs ends the run with 130 at once", async () => {
    model.mode = "hang";
    const before = model.requests;
    const child = spawn(
      process.execPath,
      [CLI, "smoke", "--stack", "test", "--agent", "booking", "--scenario", "persona-books"],
      { cwd: project.dir, env: { ...env(), NO_COLOR: "1" }, stdio: ["ignore", "pipe", "pipe"] },
    );
    const exited = new Promise<number | null>((resolve) => child.once("exit", resolve));
    const deadline = Date.now() + 60_000;
    while (model.requests <= before && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    expect(model.requests).toBeGreaterThan(before);
    const asked = model.requests;
    let stderr = "";
    child.stderr?.on("data", (chunk) => {
      stderr += chunk;
    });
    child.kill("SIGINT");
    // Ended by the signal while the persona's request still hung (it never answers, and its own
    // timeout would name the model): nothing asked after it, no timeout reported.
    expect(await exited).toBe(130);
    expect(model.requests).toBe(asked);
    expect(stderr).not.toMatch(/timed out|did not answer/);
  });
});
