// `agent-iac scenario capture`: a real call of the example booking agent (real Pulumi CLI, the
// simulator on port 0) becomes a scenario; from its recording and from the service's stream the
// caller's lines and the tools are the call's own, a service that does not replay an ended
// conversation is said (exit 3), and the captured scenario passes against the same version.
import { mkdir, readdir, readFile, writeFile } from "node:fs/promises";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parse, parseAllDocuments, parseDocument } from "yaml";
import { type AgentsProject, agentsProject, deployStack } from "../../helpers/agents-project.ts";
import { runInProcess } from "../../helpers/cli.ts";
import { type PulumiSandbox, pulumiSandbox } from "../../helpers/pulumi.ts";
import { simulatorCall, startTestSimulator } from "../../helpers/simulator.ts";

const API_KEY = "sk-test-capture-7d1e4b9a02c3";
const SCENARIO = "checks-availability-and-books";

/** What a terminal would act on: C0 controls but the line break, DEL, C1 (0x9b is a CSI) and bidi overrides. */
// biome-ignore lint/suspicious/noControlCharactersInRegex: finding control characters is the point.
const RAW_CONTROL = /[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/;

type Captured = {
  name: string;
  channel: { callee_no: string };
  transport?: string;
  caller?: { turns: string[] };
  expect: { tool_calls?: string[]; ends: boolean; no_errors: boolean };
  context?: Record<string, unknown>;
};

describe("agent-iac scenario capture (real Pulumi CLI against the simulator)", () => {
  let sandbox: PulumiSandbox;
  let sim: Awaited<ReturnType<typeof startTestSimulator>>;
  let project: AgentsProject;
  let conversationId: string;
  /** What the recording of that call holds: the caller's lines and the tools, in order. */
  let recorded: { turns: string[]; tools: string[] };
  const env = () => ({ ...process.env, ...sandbox.env, AGENT_IAC_API_KEY: API_KEY });
  const cli = (args: string[]) => runInProcess(args, { cwd: project.dir, env: env() });

  beforeAll(async () => {
    sandbox = await pulumiSandbox();
    sim = await startTestSimulator({ port: 0, apiKey: API_KEY, eventDelayMs: 1, quiet: true });
    project = await agentsProject(sandbox, { baseUrl: sim.url, apiKey: API_KEY });
    await deployStack(project.stack);
    const smoke = await cli([
      "smoke",
      "--stack",
      "test",
      "--agent",
      "booking",
      "--scenario",
      SCENARIO,
      "--record",
      "recordings",
      "--json",
      "capture-smoke.json",
    ]);
    expect(smoke.code, smoke.stderr).toBe(0);
    const report = JSON.parse(await readFile(path.join(project.dir, "reports", "capture-smoke.json"), "utf8"));
    conversationId = report.results[0].conversation_id;
    expect(conversationId).toMatch(/^conv_/);
    const dir = path.join(project.dir, "recordings", "booking");
    const [file] = (await readdir(dir)).filter((name) => name.startsWith(SCENARIO));
    const events = (await readFile(path.join(dir, file as string), "utf8"))
      .trim()
      .split("\n")
      .map((line) => JSON.parse(line));
    const payloads = events.map((event) => event.payload).filter(Boolean);
    recorded = {
      turns: payloads.filter((p) => p.type === "user.message.received").map((p) => p.text),
      tools: [...new Set(payloads.filter((p) => p.type === "agent.tool_call.created").map((p) => p.name))] as string[],
    };
    expect(recorded.turns.length).toBeGreaterThan(0);
    expect(recorded.tools).toContain("book_appointment");
  });
  afterAll(async () => {
    await sim?.close();
    await project?.cleanup();
    await sandbox?.cleanup();
  });

  it("from a recording: the call's caller lines as caller.turns over ws, its tools as draft expectations", async () => {
    const out = await cli(["scenario", "capture", conversationId, "--from-recording", "recordings"]);
    expect(out.code, out.stderr).toBe(0);
    expect(out.stdout).toMatch(new RegExp(`^# Captured from conversation ${conversationId} \\(booking, ca_`));
    const [scenario] = parse(out.stdout) as Captured[];
    expect(scenario?.name).toBe(`captured ${conversationId}`);
    expect(scenario?.channel).toEqual({ callee_no: "+15550142100" });
    expect(scenario?.transport).toBe("ws");
    expect(scenario?.caller?.turns).toEqual(recorded.turns);
    expect(scenario?.expect).toEqual({ tool_calls: recorded.tools, no_errors: true, ends: true });
    // The simulator's knobs never travel into a scenario meant for any service.
    expect(scenario?.context?.simulation).toBeUndefined();
    expect(out.stdout + out.stderr).not.toContain(API_KEY);
  });

  it("from the service's stream: the same turns and tools; an unknown recording or a missing channel is exit 2", async () => {
    const out = await cli(["scenario", "capture", conversationId, "--stack", "test", "--callee-no", "+15550142100"]);
    expect(out.code, out.stderr).toBe(0);
    const [scenario] = parse(out.stdout) as Captured[];
    expect(scenario?.caller?.turns).toEqual(recorded.turns);
    expect(scenario?.expect.tool_calls).toEqual(recorded.tools);

    const noChannel = await cli(["scenario", "capture", conversationId, "--stack", "test"]);
    expect(noChannel.code).toBe(2);
    expect(noChannel.stderr).toContain("--callee-no is needed");
    const unknown = await cli(["scenario", "capture", "conv_nope", "--from-recording", "recordings"]);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain("no recording of conversation conv_nope");
  });

  it("a hostile recording: a header naming no agent key or version is exit 2 at file:1; its id, lines and context stay data", async () => {
    const dir = path.join(project.dir, "recordings", "booking");
    const [name] = (await readdir(dir)).filter((file) => file.startsWith(SCENARIO));
    const [header, ...rest] = (await readFile(path.join(dir, name as string), "utf8")).trim().split("\n");
    /** A recording directory holding the call's recording with its header and events changed. */
    const hostile = async (label: string, change: Record<string, unknown>, turn?: string) => {
      const events = rest.map((line) => {
        const event = JSON.parse(line);
        if (turn !== undefined && event.payload?.type === "user.message.received") event.payload.text = turn;
        // The footer's record of what the caller sent says the same lines: capture keeps only those.
        if (turn !== undefined && Array.isArray(event.caller_lines)) {
          for (const line of event.caller_lines) line.text = turn;
        }
        return JSON.stringify(event);
      });
      await mkdir(path.join(project.dir, label, "booking"), { recursive: true });
      const file = path.join(label, "booking", "call.jsonl");
      await writeFile(
        path.join(project.dir, file),
        `${[JSON.stringify({ ...JSON.parse(header as string), ...change }), ...events].join("\n")}\n`,
      );
      return file;
    };
    const smuggled = '\n- name: smuggled\n  channel: { callee_no: "+15550000000" }\n  expect: { ends: true }\n';
    const title = "\u001b]0;pwned\u0007\u001b[2J";

    const agentFile = await hostile("hostile-agent", { agent: `booking${smuggled}` });
    const agent = await cli(["scenario", "capture", conversationId, "--from-recording", "hostile-agent"]);
    expect(agent.code, agent.stdout).toBe(2);
    expect(agent.stderr).toContain(`${agentFile}:1: the header's agent: must be an agent key`);
    expect(agent.stdout).toBe("");
    const versionFile = await hostile("hostile-version", { version_id: `ca_x${title}` });
    const version = await cli(["scenario", "capture", conversationId, "--from-recording", "hostile-version"]);
    expect(version.code, version.stdout).toBe(2);
    expect(version.stderr).toContain(`${versionFile}:1: the header's version_id: must look like ca_<suffix>`);
    expect(version.stdout + version.stderr).not.toMatch(RAW_CONTROL);

    // What is free text (the conversation id, a caller's line, the context) is written as data.
    const id = `${conversationId}${smuggled}${title}`;
    const turn = `hello${title}\u009b31m\u202eevil`;
    const context = { [`note${smuggled}`]: title };
    const scenario = JSON.parse(header as string).scenario;
    await hostile("hostile-text", { conversation_id: id, scenario: { ...scenario, context } }, turn);
    const text = await cli(["scenario", "capture", id, "--from-recording", "hostile-text"]);
    expect(text.code, text.stderr).toBe(0);
    expect(text.stdout + text.stderr).not.toMatch(RAW_CONTROL);
    expect(parseAllDocuments(text.stdout)).toHaveLength(1);
    const captured = parse(text.stdout) as Captured[];
    expect(captured).toHaveLength(1);
    expect(captured[0]?.name).toBe(`captured ${id}`);
    expect(captured[0]?.caller?.turns).toEqual(recorded.turns.map(() => turn));
    expect(captured[0]?.context).toEqual(context);
  });

  it("a service that does not replay an ended conversation's events: exit 3, pointing to --record", async () => {
    await simulatorCall(sim, "POST", "/_simulator/faults", {
      route: "GET /conversations/{conversation_id}/events",
      stall_stream_after_events: 0,
    });
    try {
      const out = await cli([
        "scenario",
        "capture",
        conversationId,
        "--stack",
        "test",
        "--callee-no",
        "+15550142100",
        "--idle-timeout",
        "1",
      ]);
      expect(out.code).toBe(3);
      expect(out.stderr).toContain(`did not replay conversation ${conversationId}'s events`);
      expect(out.stderr).toContain("smoke --record DIR");
      expect(out.stdout).toBe("");
    } finally {
      await simulatorCall(sim, "DELETE", "/_simulator/faults");
    }
  });

  it("the captured scenario, put in the agent file, passes against the same version", async () => {
    const out = await cli([
      "scenario",
      "capture",
      conversationId,
      "--from-recording",
      "recordings",
      "--name",
      "replayed",
    ]);
    expect(out.code, out.stderr).toBe(0);
    const file = path.join(project.dir, "agents", "booking.yaml");
    const document = parseDocument(await readFile(file, "utf8"));
    document.addIn(["smoke"], (parse(out.stdout) as Captured[])[0]);
    await writeFile(file, document.toString());
    const smoke = await cli(["smoke", "--stack", "test", "--agent", "booking", "--scenario", "replayed"]);
    expect(smoke.code, smoke.stdout + smoke.stderr).toBe(0);
    expect(smoke.stdout).toMatch(/1 passed, 0 failed/);
  });
});
