// Scripted turns against the real simulator (port 0), through smoke's call placement: a turn whose
// `after` the agent never says ends the call, failed, naming it; a script the agent hears passes
// with each line in the transcript as `caller:`; lines are JSON-escaped into the message template.
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { type Client, createClient } from "../../src/api/index.ts";
import { callerShape } from "../../src/caller/index.ts";
import { loadAgents } from "../../src/definitions/index.ts";
import { Judge, JudgeClient } from "../../src/judge/index.ts";
import { replaySmoke, runSmoke } from "../../src/smoke/index.ts";
import { type TempProject, tempProject } from "../definitions/helpers.ts";
import { startTestJudge } from "../helpers/judge-server.ts";
import { createAgents, startTestSimulator } from "../helpers/simulator.ts";

const agentFile = (scenario: string[]) =>
  [
    "kind: conversational",
    "name: Desk",
    "description: d",
    "config:",
    "  personas: [{ name: Leo, voice: { id: male-1, provider: service } }]",
    "  tool: { tools: [{ ns: syscall, name: check_availability }] }",
    "smoke:",
    "  - name: s",
    '    channel: { callee_no: "+15550100100" }',
    "    transport: ws",
    "    timeout: 20",
    ...scenario.map((line) => `    ${line}`),
  ].join("\n");

describe("scripted caller turns", () => {
  let sim: Awaited<ReturnType<typeof startTestSimulator>>;
  let client: Client;
  let project: TempProject | undefined;
  beforeAll(async () => {
    sim = await startTestSimulator({ profile: "default" });
    client = createClient({ baseUrl: sim.url, apiKey: sim.apiKey });
  });
  afterAll(async () => {
    await client?.close();
    await sim?.close();
  });
  afterEach(async () => {
    await project?.cleanup();
    project = undefined;
  });

  const run = async (scenario: string[], isTTY = false, recordDir?: string, judge?: Judge) => {
    project = await tempProject({ "agents/desk.yaml": agentFile(scenario) });
    const { agents, errors } = await loadAgents(project.agents, { from: process.cwd() });
    expect(errors).toEqual([]);
    const held = await createAgents(client, agents);
    let printed = "";
    const { results } = await runSmoke({
      definitions: agents,
      held,
      selection: {},
      connection: { baseUrl: sim.url, apiKey: sim.apiKey },
      concurrency: 1,
      out: { write: (text: string) => (printed += text), isTTY },
      caller: { callerShape: callerShape({ message: undefined, end: undefined }, sim.url) },
      ...(recordDir ? { recordDir: `${project.root}/${recordDir}` } : {}),
      ...(judge ? { judge } : {}),
    });
    return { result: results[0], printed, agents };
  };

  it("ends the call, failed, when the agent finished its turn without the turn's cue: a caller cause, not a missing conversation.ended", async () => {
    const { result, agents } = await run(
      [
        "caller:",
        "  turns:",
        '    - "Hello, is anyone there?"',
        '    - { say: "Tuesday at 10", after: "/which day/i" }',
        "expect: { says: [this is Leo] }",
      ],
      false,
      "rec",
    );
    expect(result?.status).toBe("failed");
    // The line was never sent: not "not heard", the script's cue that never came.
    expect(result?.outcome).toMatchObject({ kind: "failed", code: "caller_cue_missing" });
    expect(result?.error).toBe(
      "the caller's turn 2 waits for the agent to say /which day/i, and the agent finished its turn without it: the call was ended",
    );
    expect(result?.callerLines?.map((line) => line.text)).toEqual(["Hello, is anyone there?"]);
    // The literal expectations are still evaluated beside the caller's failure; the call agent-iac
    // ended itself is not also "no conversation.ended event within the timeout".
    const assertions = [
      ["the caller's turn 2 is said", false],
      ['says "this is Leo"', true],
      ["no server.error events", true],
    ];
    expect(result?.assertions.map((a) => [a.description, a.passed])).toEqual(assertions);
    // The service saw the call end: the caller's end message ended it.
    await vi.waitFor(async () => {
      const conversations = await client.conversations.list().toArray(1000);
      expect(conversations.find((c) => c.id === result?.conversationId)?.status).toBe("completed");
    });
    // Its replay fails it alike.
    const { report } = await replaySmoke({
      definitions: agents,
      dir: `${project?.root}/rec`,
      out: { write: () => true },
    });
    expect(report.results[0]?.outcome).toMatchObject({ kind: "failed", code: "caller_cue_missing" });
    expect(report.results[0]?.assertions.map((a) => [a.description, a.passed])).toEqual(assertions);
  });

  it("passes when every line is heard, quotes and backslashes included, and the cue was said", async () => {
    const { result, printed, agents } = await run(
      [
        "caller:",
        "  turns:",
        '    - "Please check availability, I said \\"Tuesday\\" \\\\ ok?"',
        '    - { say: "Thanks, that is all.", after: "check_availability" }',
        "expect: { tool_calls: [check_availability] }",
      ],
      true,
      "rec",
    );
    expect(result?.status, printed).toBe("passed");
    expect(result?.assertions[0]).toMatchObject({ description: "the caller's 2 lines were heard", passed: true });
    expect(
      result?.observation?.entries.filter((e) => e.kind === "user").map((e) => (e as { text: string }).text),
    ).toEqual(['Please check availability, I said "Tuesday" \\ ok?', "Thanks, that is all."]);
    expect(result?.callerLines?.every((line) => line.heardAt !== undefined)).toBe(true);
    // The live transcript says who spoke.
    expect(printed).toContain("│ caller: Thanks, that is all.");
    // Replayed, the call says its caller was heard, as it did live.
    const { report } = await replaySmoke({
      definitions: agents,
      dir: `${project?.root}/rec`,
      out: { write: () => true },
    });
    expect(report.results[0]?.status).toBe("passed");
    expect(report.results[0]?.assertions.map((a) => a.description)).toEqual(
      result?.assertions.map((a) => a.description),
    );
  });

  it("cites a judged expectation's caller lines as the transcript shows them: caller, with their time", async () => {
    const server = await startTestJudge({ "confirms the day": [{ verdict: "fail", cite: /Tuesday|day/ }] });
    try {
      const judge = new Judge(
        new JudgeClient({ baseUrl: server.url, model: "m", apiKey: "sk-test-judge-0001", timeoutSec: 5 }),
      );
      const { result } = await run(
        ["caller:", "  turns:", '    - "Is Tuesday free?"', 'expect: { judge: ["confirms the day"] }'],
        false,
        undefined,
        judge,
      );
      expect(result?.status).toBe("failed");
      const judged = result?.assertions.find((a) => a.description === "judge: confirms the day");
      expect(judged?.context).toContainEqual(expect.stringMatching(/^caller: Is Tuesday free\? \(at \d+\.\d\d s\)$/));
      expect(judged?.context?.some((line) => line.startsWith("user: "))).toBe(false);
    } finally {
      await server.close();
    }
  });
});
