// The caller end to end, on both simulator profiles (real Pulumi CLI, real simulator on port 0):
// the booking example's scripted caller passes with the profile's agents:callerMessage, fails as
// "the caller's turn 1 was not delivered" (exit 1) with the other profile's shape, is refused over
// SSE at its file:line, and a non-loopback service without agents:callerMessage stops with exit 2
// before any call.
import { readFile, writeFile } from "node:fs/promises";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parseDocument } from "yaml";
import type { ProfileName } from "../../../src/simulator/index.ts";
import { type AgentsProject, agentsProject, deployStack } from "../../helpers/agents-project.ts";
import { SIMULATOR_SHAPES } from "../../helpers/caller.ts";
import { runInProcess } from "../../helpers/cli.ts";
import { type PulumiSandbox, pulumiSandbox } from "../../helpers/pulumi.ts";
import { requestCounts, startTestSimulator } from "../../helpers/simulator.ts";

const API_KEY = "sk-caller-e2e-7c1f02";

type Report = {
  results: {
    status: string;
    outcome: { kind: string; code: string | null };
    error: string | null;
    transcript: string[];
    assertions: { description: string; passed: boolean; detail: string | null }[];
  }[];
};

describe.each(["default", "variant"] as ProfileName[])("a scripted caller on the %s profile", (profile) => {
  let sandbox: PulumiSandbox;
  let sim: Awaited<ReturnType<typeof startTestSimulator>>;
  let project: AgentsProject;
  const shapes = SIMULATOR_SHAPES[profile].config;
  const other = SIMULATOR_SHAPES[profile === "default" ? "variant" : "default"].config;

  const cli = (...args: string[]) =>
    runInProcess(args, { cwd: project.dir, env: { ...process.env, ...sandbox.env, AGENT_IAC_API_KEY: API_KEY } });
  const smoke = async (...args: string[]) => {
    const json = path.join(project.dir, `caller-${Date.now()}.json`);
    const junit = path.join(project.dir, `caller-${Date.now()}.xml`);
    const run = await cli("smoke", "--stack", "test", "--agent", "booking", "--json", json, "--junit", junit, ...args);
    const report = JSON.parse(await readFile(json, "utf8").catch(() => "null")) as Report | null;
    return { ...run, report, junit: await readFile(junit, "utf8").catch(() => "") };
  };
  const setShape = async (shape: { callerMessage: string; callerEnd: string }) => {
    await project.stack.setConfig("agents:callerMessage", { value: shape.callerMessage });
    await project.stack.setConfig("agents:callerEnd", { value: shape.callerEnd });
  };

  beforeAll(async () => {
    sandbox = await pulumiSandbox();
    sim = await startTestSimulator({ apiKey: API_KEY, profile });
    project = await agentsProject(sandbox, { baseUrl: sim.url, apiKey: API_KEY });
    await setShape(shapes);
    await deployStack(project.stack);
  });
  afterAll(async () => {
    await project?.cleanup();
    await sim?.close();
    await sandbox?.cleanup();
  });

  it("passes the booking example with its scripted caller, no context.simulation anywhere", async () => {
    for (const file of ["booking.yaml", "booking.prod.yaml", "support.yaml"]) {
      expect(await readFile(path.join(project.dir, "agents", file), "utf8")).not.toContain("simulation");
    }
    const run = await smoke("--scenario", "checks-availability-and-books");
    expect(run.code, run.stdout + run.stderr).toBe(0);
    const result = run.report?.results[0];
    expect(result?.status).toBe("passed");
    expect(result?.assertions[0]).toMatchObject({ description: "the caller's 3 lines were heard", passed: true });
    const callerLines = result?.transcript.filter((line) => line.startsWith("caller: ")) ?? [];
    expect(callerLines).toHaveLength(3);
    expect(callerLines[1]).toMatch(/^caller: Great, please book appointment for Tuesday at 10am\. \(at \d+\.\d\d s\)$/);
    expect(run.junit).toContain("caller: Can you check availability");
    expect(run.stdout).not.toContain(API_KEY);
  });

  it("captures a recorded call as a scenario that passes against the same version", async () => {
    const recorded = await smoke("--scenario", "checks-availability-and-books", "--record", "rec");
    expect(recorded.code, recorded.stdout + recorded.stderr).toBe(0);
    const conversation = (recorded.report?.results[0] as { conversation_id?: string } | undefined)?.conversation_id;
    expect(conversation).toMatch(/^conv_/);
    const captured = await cli("scenario", "capture", String(conversation), "--from-recording", "rec");
    expect(captured.code, captured.stderr).toBe(0);
    expect(captured.stdout).toContain("Can you check availability for a cleaning on Tuesday morning?");
    expect(captured.stdout).toMatch(/tool_calls:\n\s+- check_availability\n\s+- book_appointment/);
    // The service replays an ended conversation's stream here: the same scenario.
    const fromService = await cli(
      "scenario",
      "capture",
      String(conversation),
      "--stack",
      "test",
      "--callee-no",
      "+15550142100",
    );
    expect(fromService.code, fromService.stderr).toBe(0);
    expect(fromService.stdout).toContain("caller:");
    const file = path.join(project.dir, "agents", "booking.yaml");
    const text = await readFile(file, "utf8");
    const doc = parseDocument(text);
    const scenario = parseDocument(captured.stdout).toJS()[0];
    doc.addIn(["smoke"], doc.createNode(scenario));
    await writeFile(file, doc.toString());
    try {
      const run = await smoke("--scenario", scenario.name);
      expect(run.code, run.stdout + run.stderr).toBe(0);
      expect(run.report?.results[0]?.status).toBe("passed");
    } finally {
      await writeFile(file, text);
    }
  });

  it("fails as 'turn 1 was not delivered' (exit 1) with the other profile's message shape", async () => {
    await setShape(other);
    try {
      const run = await smoke("--scenario", "checks-availability-and-books");
      expect(run.code, run.stdout + run.stderr).toBe(1);
      const result = run.report?.results[0];
      expect(result?.status).toBe("failed");
      expect(result?.outcome).toMatchObject({ kind: "failed", code: "caller_not_heard" });
      expect(result?.error).toMatch(/^the caller's turn 1 was not delivered: the service answered with server\.error/);
      expect(run.stdout).toMatch(/the caller's turn 1 was not delivered/);
      expect(run.junit).toMatch(/the caller&apos;s turn 1 was not delivered|the caller's turn 1 was not delivered/);
    } finally {
      await setShape(shapes);
    }
  });

  it("stops with exit 2 before any call on a non-loopback service without agents:callerMessage", async () => {
    // No message shape at all: an end message alone is its own configuration error (the next case).
    await project.stack.removeConfig("agents:callerMessage");
    await project.stack.removeConfig("agents:callerEnd");
    await project.stack.setConfig("agents:baseUrl", { value: "https://agents.invalid" });
    const before = (await requestCounts(sim)).count;
    // A simulator fault knob in a scenario: a real service would get it as data.
    const file = path.join(project.dir, "agents", "booking.yaml");
    const text = await readFile(file, "utf8");
    const doc = parseDocument(text);
    doc.setIn(["smoke", 0, "context"], doc.createNode({ simulation: { response_delay_ms: 5 } }));
    await writeFile(file, doc.toString());
    const knobLine =
      doc
        .toString()
        .split("\n")
        .findIndex((line) => line.trim() === "simulation:") + 1;
    try {
      const validate = await cli("validate", "--stack", "test");
      expect(validate.code, validate.stderr).toBe(0);
      expect(validate.stderr).toMatch(
        new RegExp(
          `booking\\.yaml:${knobLine + 1}:\\d+: smoke\\[0\\]\\.context\\.simulation: warning: .*caller\\.turns`,
        ),
      );
      const run = await smoke("--scenario", "checks-availability-and-books");
      expect(run.code, run.stdout + run.stderr).toBe(2);
      expect(run.stderr).toMatch(/agents:callerMessage is not set .*does not show the shape/);
      expect(run.stderr).toContain("smoke[0].context.simulation: warning:");
    } finally {
      await writeFile(file, text);
      await project.stack.setConfig("agents:baseUrl", { value: sim.url });
      await setShape(shapes);
    }
    // Not even the access check reached a service.
    expect((await requestCounts(sim)).count).toBe(before);
  });

  it("stops with exit 2 before any call when agents:callerEnd is set without agents:callerMessage (issue 49)", async () => {
    // On loopback the simulator's shapes apply without agents:callerMessage: an end message of the
    // team's was dropped silently and never even parsed.
    await project.stack.removeConfig("agents:callerMessage");
    await project.stack.setConfig("agents:callerEnd", { value: "{not json" });
    const before = (await requestCounts(sim)).count;
    try {
      const run = await smoke("--scenario", "checks-availability-and-books");
      expect(run.code, run.stdout + run.stderr).toBe(2);
      expect(run.stderr).toContain(
        "agents:callerEnd (or AGENT_IAC_CALLER_END) is set on stack test but agents:callerMessage is not",
      );
    } finally {
      await setShape(shapes);
    }
    expect((await requestCounts(sim)).count).toBe(before);
  });

  it("refuses the caller over SSE at its file:line", async () => {
    const file = path.join(project.dir, "agents", "booking.yaml");
    const text = await readFile(file, "utf8");
    const doc = parseDocument(text);
    doc.setIn(["smoke", 0, "transport"], "sse");
    await writeFile(file, doc.toString());
    try {
      const run = await cli("validate");
      expect(run.code).toBe(1);
      // At the caller's value: the line after `caller:`.
      const callerLine =
        doc
          .toString()
          .split("\n")
          .findIndex((line) => line.trim() === "caller:") + 1;
      expect(run.stderr).toContain(`booking.yaml:${callerLine + 1}:`);
      expect(run.stderr).toMatch(/smoke\[0\]\.caller: .*transport: ws/);
    } finally {
      await writeFile(file, text);
    }
  });
});
