// Response latency with a caller runs from the caller's line leaving this machine to the agent's
// first word arriving here (what the caller waited), not from the service's own timestamps; a turn
// no caller played keeps the service's `user.message.received` → next agent message. Checked on the
// events alone, then on the real simulator (port 0) with `response_delay_ms`, live and replayed.
import { readdir, readFile } from "node:fs/promises";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { EventEnvelope } from "../../src/api/index.ts";
import { callerShape } from "../../src/caller/index.ts";
import { replaySmoke, runSmoke } from "../../src/smoke/index.ts";
import { observeEvents } from "../../src/smoke/observe.ts";
import { type ProjectService, projectService } from "../helpers/simulator.ts";

const at = (ms: number) => new Date(Date.UTC(2026, 0, 1, 9, 0, 0, ms)).toISOString();
let n = 0;
const event = (ms: number, payload: Record<string, unknown>): EventEnvelope =>
  ({ id: `evt_${++n}`, created_at: at(ms), payload }) as EventEnvelope;

describe("response latency from the events and the caller's lines", () => {
  // Service clock: turn heard at 1000, answered at 1100 (100 ms); a second turn at 2000 → 2050.
  const envelopes = [
    event(0, { type: "conversation.started" }),
    event(10, { type: "agent.message.delta", generation_id: "g1", text_delta: "Hello" }),
    event(20, { type: "agent.message.completed", generation_id: "g1", text: "Hello" }),
    event(1000, { type: "user.message.received", text: "Check  availability please" }),
    event(1100, { type: "agent.message.delta", generation_id: "g2", text_delta: "Sure" }),
    event(1110, { type: "agent.message.completed", generation_id: "g2", text: "Sure" }),
    event(2000, { type: "user.message.received", text: "Something the service played" }),
    event(2050, { type: "agent.message.delta", generation_id: "g3", text_delta: "Ok" }),
    event(2060, { type: "agent.message.completed", generation_id: "g3", text: "Ok" }),
  ];

  it("takes the service's timestamps when no caller played the turns", () => {
    expect(observeEvents(envelopes).latency).toMatchObject({ first_response_ms: 10, response_ms: [100, 50] });
  });

  it("takes the caller's send and the agent's first word for the caller's turn, the service's for the other", () => {
    const lines = [
      { turn: 1, text: "check availability please", sentAt: 50_000, heardAt: 50_300, firstWordAt: 50_420 },
    ];
    expect(observeEvents(envelopes, lines).latency.response_ms).toEqual([420, 50]);
  });

  it("falls back to the service's timestamps for a caller's line whose answer it did not see arrive", () => {
    const lines = [{ turn: 1, text: "Check availability please", sentAt: 50_000, heardAt: 50_300 }];
    expect(observeEvents(envelopes, lines).latency.response_ms).toEqual([100, 50]);
  });
});

const DELAY_MS = 400;
const agentFile = [
  "kind: conversational",
  "name: Desk",
  "description: d",
  "config:",
  "  personas: [{ name: Leo, voice: { id: male-1, provider: service } }]",
  "  tool: { tools: [{ ns: syscall, name: check_availability }] }",
  "smoke:",
  "  - name: slow-desk",
  '    channel: { callee_no: "+15550100100" }',
  "    transport: ws",
  "    timeout: 30",
  `    context: { simulation: { response_delay_ms: ${DELAY_MS} } }`,
  "    caller:",
  '      turns: ["Can you check availability on Tuesday?", "Thanks, that is all."]',
  "    expect:",
  "      tool_calls: [check_availability]",
  // The agent thinks 400 ms before each answer: a bound under it is exceeded.
  `      latency: { response_p50_ms: ${DELAY_MS - 1} }`,
].join("\n");

describe("a caller's response latency on the simulator with response_delay_ms", () => {
  let service: ProjectService;
  beforeAll(async () => {
    service = await projectService({ "agents/desk.yaml": agentFile });
  });
  afterAll(async () => {
    await service?.close();
  });

  it("measures each turn from the caller's send to the agent's first word, live and replayed alike", async () => {
    const { sim, agents, held, project } = service;
    const recordDir = path.join(project.root, "rec");
    const { results, report } = await runSmoke({
      definitions: agents,
      held,
      selection: {},
      connection: { baseUrl: sim.url, apiKey: sim.apiKey },
      concurrency: 1,
      out: { write: () => true },
      recordDir,
      caller: { callerShape: callerShape({ message: undefined, end: undefined }, sim.url) },
    });
    const result = results[0];
    const lines = result?.callerLines ?? [];
    expect(lines).toHaveLength(2);
    const lived = lines.map((line) => (line.firstWordAt ?? Number.NaN) - line.sentAt);
    expect(result?.latency?.response_ms).toEqual(lived);
    for (const ms of lived) expect(ms).toBeGreaterThanOrEqual(DELAY_MS);
    for (const line of lines) {
      expect(line.heardAt).toBeGreaterThanOrEqual(line.sentAt);
      expect(line.firstWordAt).toBeGreaterThanOrEqual(line.heardAt as number);
    }

    // The service's own view of the same turns is never longer than what the caller waited.
    const [file] = (await readdir(recordDir, { recursive: true })).filter((f) => f.endsWith(".jsonl"));
    const recorded = (await readFile(path.join(recordDir, String(file)), "utf8"))
      .trim()
      .split("\n")
      .map((line) => JSON.parse(line) as Record<string, unknown>)
      .filter((value) => "payload" in value) as EventEnvelope[];
    const serviceSide = observeEvents(recorded).latency.response_ms;
    expect(serviceSide).toHaveLength(2);
    serviceSide.forEach((ms, i) => {
      expect(ms).toBeGreaterThanOrEqual(DELAY_MS);
      expect(ms).toBeLessThanOrEqual(lived[i] as number);
    });

    // The latency bound is judged on the caller's figures: exceeded, the scenario fails on it.
    const summary = report.scenarios[0]?.latency;
    expect(summary?.exceeded).toEqual(["response_p50_ms"]);
    expect(summary?.response_p50_ms).toBeGreaterThanOrEqual(DELAY_MS);
    expect(report.scenarios[0]?.verdict).toBe("failed");

    // A replay measures as the call did: the caller's times are in the recording.
    const replayed = await replaySmoke({ definitions: agents, dir: recordDir, out: { write: () => true } });
    expect(replayed.report.results[0]?.latency.response_ms).toEqual(lived);
    expect(replayed.report.scenarios[0]?.latency?.exceeded).toEqual(["response_p50_ms"]);
  });
});
