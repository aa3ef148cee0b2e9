// A persona caller end to end (real Pulumi CLI, real simulator and a real scripted Chat Completions
// server, both on port 0): no model configured stops the run with exit 2 before any call; with one,
// the conversation holds the model's lines, no report or recording holds its key, and `--replay`
// with the model stopped reaches the same verdict.
import { readdir, readFile, writeFile } from "node:fs/promises";
import { createServer, type IncomingMessage, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parseDocument } from "yaml";
import { type AgentsProject, agentsProject, deployStack } from "../../helpers/agents-project.ts";
import { runInProcess } from "../../helpers/cli.ts";
import { isKeyCheck } from "../../helpers/model-double.ts";
import { type PulumiSandbox, pulumiSandbox } from "../../helpers/pulumi.ts";
import { requestCounts, startTestSimulator } from "../../helpers/simulator.ts";

const API_KEY = "sk-persona-e2e-service-4411";
const MODEL_KEY = "sk-persona-model-key-93be1f";

type ModelServer = { url: string; requests: { authorization?: string; transcript: string }[]; close(): Promise<void> };

/** Answers as a caller who wants a Tuesday appointment: ask, then leave once availability was checked. */
async function modelServer(): Promise<ModelServer> {
  const requests: ModelServer["requests"] = [];
  const server: Server = createServer(async (request: IncomingMessage, response) => {
    let text = "";
    for await (const chunk of request) text += chunk;
    const body = JSON.parse(text) as { messages: { role: string; content: string }[] };
    const transcript = body.messages.find((m) => m.role === "user")?.content ?? "";
    if (!isKeyCheck(body)) requests.push({ authorization: request.headers.authorization, transcript });
    const line = transcript.includes("check_availability")
      ? "That's all, thank you."
      : "Could you check availability for a cleaning on Tuesday morning?";
    response.setHeader("content-type", "application/json");
    response.end(
      JSON.stringify({ choices: [{ index: 0, finish_reason: "stop", message: { role: "assistant", content: line } }] }),
    );
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}/v1`,
    requests,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

type Report = {
  results: { status: string; transcript: string[]; assertions: { description: string; passed: boolean }[] }[];
};

describe("a persona caller", () => {
  let sandbox: PulumiSandbox;
  let sim: Awaited<ReturnType<typeof startTestSimulator>>;
  let project: AgentsProject;
  let model: ModelServer;
  const everything: string[] = [];

  const smoke = async (...args: string[]) => {
    const json = path.join(project.dir, `persona-${everything.length}.json`);
    const run = await runInProcess(
      ["smoke", "--stack", "test", "--agent", "booking", "--scenario", "persona-books", "--json", json, ...args],
      { cwd: project.dir, env: { ...process.env, ...sandbox.env, AGENT_IAC_API_KEY: API_KEY } },
    );
    const text = await readFile(json, "utf8").catch(() => "");
    everything.push(run.stdout, run.stderr, text);
    return { ...run, report: text ? (JSON.parse(text) as Report) : undefined };
  };

  beforeAll(async () => {
    sandbox = await pulumiSandbox();
    sim = await startTestSimulator({ apiKey: API_KEY, profile: "default" });
    model = await modelServer();
    project = await agentsProject(sandbox, { baseUrl: sim.url, apiKey: API_KEY });
    const file = path.join(project.dir, "agents", "booking.yaml");
    const doc = parseDocument(await readFile(file, "utf8"));
    doc.addIn(
      ["smoke"],
      doc.createNode({
        name: "persona-books",
        channel: { callee_no: "+15550142100" },
        transport: "ws",
        caller: { persona: "A patient who wants a cleaning", goal: "an appointment on Tuesday morning", max_turns: 4 },
        expect: { tool_calls: ["check_availability"] },
      }),
    );
    await writeFile(file, doc.toString());
    await deployStack(project.stack);
  });
  afterAll(async () => {
    await project?.cleanup();
    await model?.close();
    await sim?.close();
    await sandbox?.cleanup();
  });

  it("stops with exit 2 before any call when no model is configured, naming the settings", async () => {
    const before = (await requestCounts(sim)).count;
    const run = await smoke();
    expect(run.code, run.stdout + run.stderr).toBe(2);
    expect(run.stderr).toMatch(/persona caller, but no model is configured .*agents:callerBaseUrl.*agents:callerModel/);
    expect((await requestCounts(sim)).count).toBe(before);
  });

  it("plays the persona with the model's lines, keeps its key out of every output, and replays with the model stopped", async () => {
    await project.stack.setConfig("agents:callerBaseUrl", { value: model.url });
    await project.stack.setConfig("agents:callerModel", { value: "test-caller" });
    await project.stack.setConfig("agents:callerApiKey", { value: MODEL_KEY, secret: true });
    const recorded = await smoke("--record", "rec");
    expect(recorded.code, recorded.stdout + recorded.stderr).toBe(0);
    const result = recorded.report?.results[0];
    expect(result?.status).toBe("passed");
    const lines = result?.transcript.filter((line) => line.startsWith("caller: ")) ?? [];
    expect(lines.map((line) => line.replace(/ \(at .*\)$/, ""))).toEqual([
      "caller: Could you check availability for a cleaning on Tuesday morning?",
      "caller: That's all, thank you.",
    ]);
    expect(model.requests.length).toBe(2);
    expect(model.requests[0]?.authorization).toBe(`Bearer ${MODEL_KEY}`);
    expect(model.requests[1]?.transcript).toContain("agent: I have used check_availability for you.");

    await model.close();
    const replay = await smoke("--replay", "rec");
    expect(replay.code, replay.stdout + replay.stderr).toBe(0);
    expect(replay.report?.results[0]?.status).toBe("passed");
    // The recorded lines are the caller's in the replayed transcript too.
    expect(replay.report?.results[0]?.transcript.filter((line) => line.startsWith("caller: ")).length).toBe(2);

    for (const dir of await readdir(path.join(project.dir, "rec"), { recursive: true })) {
      const full = path.join(project.dir, "rec", dir);
      everything.push(await readFile(full, "utf8").catch(() => ""));
    }
    for (const text of everything) expect(text).not.toContain(MODEL_KEY);
  });
});
