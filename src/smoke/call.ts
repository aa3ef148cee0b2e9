// One smoke call: place a conversation against a pinned version, follow its event stream until it
// ends (or the scenario's timeout), wait for the expected procedures, and evaluate.
import type { Client, EventEnvelope, Procedure, Transcript } from "../api/index.ts";
import { displayUrl, TranscriptBuilder } from "../api/index.ts";
import { entryLine } from "../commands/transcript.ts";
import type { ConversationalAgentConfig } from "../contract/index.ts";
import { type Expectations, evaluate, type Observation, type ObservedProcedure } from "./expectations.ts";
import type { ScenarioResult } from "./reports.ts";

export type Scenario = {
  name: string;
  channel: { callee_no: string; caller_no?: string | null; priority?: string };
  livemode: boolean;
  context?: Record<string, unknown>;
  override_config?: ConversationalAgentConfig;
  transport: "sse" | "ws";
  /** Seconds. */
  timeout: number;
  iterations: number;
  expect: Expectations;
};

export type PlannedCall = {
  agent: string;
  scenario: Scenario;
  iteration: number;
  versionId: string;
  /** Procedural agent key → its agent id (procedure expectations) and name (fallback match). */
  procedural: Record<string, { id?: string; name: string }>;
  /** Whether a live call may be placed (`--live`). */
  live: boolean;
};

export type CallListener = (call: PlannedCall, envelope: EventEnvelope) => void;

const TERMINAL_POLL_MS = 250;
const NON_TERMINAL = new Set(["pending", "queued", "running", "in_progress", "processing"]);

export async function placeCall(client: Client, call: PlannedCall, listener?: CallListener): Promise<ScenarioResult> {
  const { scenario } = call;
  const started = performance.now();
  const deadline = AbortSignal.timeout(scenario.timeout * 1000);
  const result: ScenarioResult = {
    agent: call.agent,
    scenario: scenario.name,
    iteration: call.iteration,
    versionId: call.versionId,
    transport: scenario.transport,
    status: "error",
    assertions: [],
    timings: { durationMs: 0 },
  };
  const transcript = new TranscriptBuilder();
  let firstAgentAt: number | undefined;
  let ended = false;
  try {
    const conversation = await client.conversations.create({
      agent_id: call.versionId,
      channel: { type: "phone", ...scenario.channel },
      livemode: scenario.livemode && call.live,
      ...(scenario.context ? { context: scenario.context } : {}),
      ...(scenario.override_config ? { override_config: scenario.override_config } : {}),
    });
    result.conversationId = conversation.id;
    result.eventsUrl = displayUrl(conversation.channel.events_url);
    // The call's ephemeral token opens its stream (SSE or WebSocket) and is used for nothing else.
    const streamOptions = {
      token: conversation.channel.token,
      eventsUrl: conversation.channel.events_url,
      idleTimeoutMs: scenario.timeout * 1000,
      signal: deadline,
    };
    const stream =
      scenario.transport === "ws"
        ? await client.conversations.session(conversation.id, streamOptions)
        : client.conversations.events(conversation.id, streamOptions);
    try {
      for await (const envelope of stream) {
        transcript.add(envelope);
        if (firstAgentAt === undefined && envelope.payload.type.startsWith("agent.message")) {
          firstAgentAt = performance.now();
        }
        listener?.(call, envelope);
        if (envelope.payload.type === "conversation.ended") {
          ended = true;
          break;
        }
      }
    } catch (error) {
      // A scenario that does not expect the call to end stops at its timeout, which is not a failure.
      if (!(deadline.aborted && scenario.expect.ends === false)) throw error;
    }
    if (!ended && scenario.expect.ends !== false && !deadline.aborted) {
      throw new Error("the event stream closed before conversation.ended");
    }
    const procedures = await waitForProcedures(client, call, conversation.id, deadline);
    const observation = observe(transcript.transcript, ended, (performance.now() - started) / 1000, procedures);
    result.observation = observation;
    result.assertions = evaluate(scenario.expect, observation);
    result.status = result.assertions.length > 0 && result.assertions.every((a) => a.passed) ? "passed" : "failed";
  } catch (error) {
    result.status = "error";
    result.error = deadline.aborted
      ? `timed out after ${scenario.timeout} s${ended ? " waiting for procedures" : " waiting for the conversation to end"}`
      : error instanceof Error
        ? error.message
        : String(error);
    result.observation = observe(transcript.transcript, ended, (performance.now() - started) / 1000, []);
  }
  result.timings = {
    durationMs: Math.round(performance.now() - started),
    ...(firstAgentAt === undefined ? {} : { timeToFirstAgentMessageMs: Math.round(firstAgentAt - started) }),
  };
  return result;
}

/** Polls the conversation's procedures until every expected one is terminal (or the deadline). */
async function waitForProcedures(
  client: Client,
  call: PlannedCall,
  conversationId: string,
  deadline: AbortSignal,
): Promise<ObservedProcedure[]> {
  const expected = Object.keys(call.scenario.expect.procedures ?? {});
  if (expected.length === 0) return [];
  for (;;) {
    const page: Procedure[] = [];
    for await (const procedure of client.conversations.procedures(conversationId)) page.push(procedure);
    const observed = expected.map((key): ObservedProcedure => {
      const target = call.procedural[key];
      const match = page.find((p) => (target?.id ? p.agent_id === target.id : p.name === target?.name));
      return {
        key,
        agentId: match?.agent_id ?? target?.id ?? "",
        status: match?.status,
        output: match?.output,
        error: match?.error,
      };
    });
    const settled = observed.every((p) => p.status !== undefined && !NON_TERMINAL.has(p.status));
    if (settled || deadline.aborted) return observed;
    await new Promise((resolve) => setTimeout(resolve, TERMINAL_POLL_MS));
  }
}

/** What the transcript shows, in the terms the expectations use. */
function observe(
  transcript: Transcript,
  ended: boolean,
  durationSec: number,
  procedures: ObservedProcedure[],
): Observation {
  return {
    agentMessages: transcript.messages.map((m) => ({ text: m.text, complete: m.complete })),
    toolCalls: [...transcript.toolCalls],
    errors: [...transcript.errors],
    ended: ended || transcript.ended,
    durationSec,
    procedures,
    transcript: transcriptLines(transcript),
  };
}

export function transcriptLines(transcript: Transcript): string[] {
  return transcript.entries.map(entryLine);
}
