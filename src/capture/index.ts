// A real call becomes a regression scenario: the caller's lines (`user.message.received`, in order)
// become `caller.turns`, the tools the agent called become draft `tool_calls` expectations, and the
// scenario is printed as YAML for the agent file's `smoke:` list. Pure: the command reads the events
// (a recording, or the service's stream) and prints what this returns. What the call says (its id, a
// caller's line, the context) is data: written by the YAML escaper, never pasted into the text.
import { type EventEnvelope, TranscriptBuilder } from "../api/index.ts";
import { isCallerLine } from "../caller/index.ts";
import { yamlText } from "../escape/index.ts";

/** What is known of the call: its events, and from a recording its agent, version, channel and context. */
export type CapturedCall = {
  conversationId: string;
  envelopes: readonly EventEnvelope[];
  agent?: string | undefined;
  versionId?: string | undefined;
  channel: { callee_no: string; caller_no?: string | null | undefined; priority?: string | undefined };
  context?: Record<string, unknown> | undefined;
  /** A smoke call's recording: the lines its caller sent. Only those are the caller's (not the service's own turns). */
  callerLines?: readonly string[] | undefined;
  /** A recording's procedures that ran after the call: procedural agent key → terminal status. */
  procedures?: Record<string, string> | undefined;
};

export type Captured = {
  /** The YAML list item to paste under the agent file's `smoke:`, with a comment saying where it came from. */
  yaml: string;
  /** What the draft could not carry over, said beside it. */
  notes: string[];
  turns: number;
  toolCalls: string[];
};

/** The simulator's own knobs in `context`: never part of a scenario that must hold on any service. */
const SIMULATOR_CONTEXT = "simulation";

/** The user lines that are the caller's: every one of a real call; of a recorded smoke call, those its caller sent, in order. */
function callersTurns(heard: readonly string[], sent: readonly string[] | undefined, notes: string[]): string[] {
  if (!sent) return [...heard];
  const turns: string[] = [];
  for (const text of heard)
    if (sent[turns.length] !== undefined && isCallerLine({ text: sent[turns.length] as string }, text))
      turns.push(text);
  const others = heard.length - turns.length;
  if (others > 0)
    notes.push(`${others} user line(s) the caller did not send (the service's own turns) are left out of caller.turns`);
  return turns;
}

/** The call's transcript and the caller's own lines of it (`notes`: the user lines left out). */
export function callTranscript(call: CapturedCall, notes: string[]) {
  const builder = new TranscriptBuilder();
  for (const envelope of call.envelopes) builder.add(envelope);
  const transcript = builder.transcript;
  return { transcript, turns: callersTurns(transcript.userMessages, call.callerLines, notes) };
}

export function captureScenario(call: CapturedCall, options: { name?: string | undefined } = {}): Captured {
  const notes: string[] = [];
  const { transcript, turns } = callTranscript(call, notes);
  const toolCalls = [...new Set(transcript.toolCalls.map((toolCall) => toolCall.name))];
  if (turns.length === 0) notes.push("the conversation holds no caller line (user.message.received): no caller.turns");
  if (!transcript.ended)
    notes.push("the events end before conversation.ended: the draft still expects the call to end");
  if (transcript.errors.length > 0) {
    notes.push(`the call had ${transcript.errors.length} server.error event(s): the draft expects none (no_errors)`);
  }
  const { [SIMULATOR_CONTEXT]: simulation, ...context } = call.context ?? {};
  if (simulation !== undefined) notes.push(`context.${SIMULATOR_CONTEXT} (the simulator's knobs) is left out`);
  const scenario = {
    name: options.name ?? `captured ${call.conversationId}`,
    channel: call.channel,
    ...(Object.keys(context).length > 0 ? { context } : {}),
    ...(turns.length > 0 ? { transport: "ws", caller: { turns } } : {}),
    expect: {
      ...(toolCalls.length > 0 ? { tool_calls: toolCalls } : {}),
      no_errors: true,
      ends: true,
    },
  };
  const from = [call.agent, call.versionId].filter(Boolean).join(", ");
  const yaml = yamlText(
    [scenario],
    [
      `Captured from conversation ${call.conversationId}${from ? ` (${from})` : ""}: a draft for the agent file's smoke: list.`,
      "The expectations are what happened (tools by name); keep the ones that matter and add says/judge.",
    ],
  );
  return { yaml, notes, turns: turns.length, toolCalls };
}
