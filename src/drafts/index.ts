// Scenarios a team does not write by hand: `scenario derive` turns a real call into a persona
// scenario (who called, what they wanted, the tools and procedures the call used, rubrics for its
// outcome), `scenario generate` proposes scenarios from the agent file alone. A model writes them
// (the caller model's endpoint, else the judge's); what it is sent is scrubbed of personal data
// (./pii.ts), and what it answers is data, kept only when it passes ./vet.ts. Knows nothing of the
// commands: it takes the call or the agent and a way to ask the model, and returns the YAML to print.
import type { TranscriptEntry } from "../api/index.ts";
import { type CapturedCall, callTranscript } from "../capture/index.ts";
import type { AgentDefinition } from "../definitions/index.ts";
import { yamlText } from "../escape/index.ts";
import type { ChatMessage } from "../model/index.ts";
import { agentTools, conversationalConfig, deriveMessages, generateMessages, readAnswer, SCENARIOS } from "./model.ts";
import { Scrubber } from "./pii.ts";
import { countLine, type Dropped, type Kept, vet } from "./vet.ts";

export { SCENARIOS };

/** Asks the model once: the messages sent, its answer's text returned. */
export type Ask = (messages: ChatMessage[]) => Promise<string>;

export type Drafted = {
  kept: Kept[];
  dropped: Dropped[];
  proposed: number;
  /** The comment above the printed list: where the scenarios came from. */
  comment: string[];
  /** What the drafts could not carry over or assume, said beside them. */
  notes: string[];
};

/** The kept scenarios as the YAML list to paste under `smoke:` (empty when none is kept). */
export function draftYaml(drafted: Pick<Drafted, "kept" | "comment">): string {
  return drafted.kept.length === 0
    ? ""
    : yamlText(
        drafted.kept.map((k) => k.scenario),
        drafted.comment,
      );
}

export function draftCount(drafted: Drafted): string {
  return countLine(drafted.proposed, drafted.kept.length, drafted.dropped);
}

/** Most lines of a call the model reads, and of each line: a call's gist, bounded. */
const MAX_LINES = 200;
const MAX_LINE_CHARS = 1000;

/** The numbers the agent file holds (its scenarios' channels, its transfers): the team's, not a caller's. */
function ownNumbers(agent: AgentDefinition): string[] {
  const transfers = conversationalConfig(agent)?.tool?.transfers ?? [];
  return [
    ...agent.smoke.flatMap((s) => [s.channel.callee_no, s.channel.caller_no ?? ""]),
    ...transfers.map((t) => t.id ?? ""),
  ].filter(Boolean);
}

function entryLine(entry: TranscriptEntry, callers: Set<string>): string | undefined {
  switch (entry.kind) {
    case "agent":
      return entry.message.complete ? `agent: ${entry.message.text}` : undefined;
    case "user":
      return `${callers.has(entry.text) ? "caller" : "user (not the caller)"}: ${entry.text}`;
    case "tool":
      return `tool: ${entry.call.name} ${JSON.stringify(entry.call.arguments ?? {})}`;
    case "error":
      return "error: the service reported an error";
  }
}

/** The model's proposals, asked once; an answer that is no list of them is said, and proposes none. */
async function proposalsOf(ask: Ask, messages: ChatMessage[], notes: string[]): Promise<unknown[]> {
  const read = readAnswer(await ask(messages));
  if ("proposals" in read) return read.proposals;
  notes.push(`the model's answer was not used: ${read.error}`);
  return [];
}

export type DeriveInput = {
  call: CapturedCall;
  agent: AgentDefinition;
  /** The model asked (said in the comment). */
  model: string;
  name?: string | undefined;
  keepPii?: boolean;
  maxCallMinutes?: number | undefined;
};

export async function deriveScenario(input: DeriveInput, ask: Ask): Promise<Drafted> {
  const { call, agent } = input;
  const notes: string[] = [];
  const { transcript, turns } = callTranscript(call, notes);
  const scrubber = new Scrubber({ own: ownNumbers(agent), keep: input.keepPii ?? false });
  scrubber.channel(call.channel);
  const callers = new Set(turns);
  const lines = transcript.entries
    .map((entry) => entryLine(entry, callers))
    .filter((line): line is string => line !== undefined)
    .slice(0, MAX_LINES)
    // Scrubbed whole, then cut: a value the cut split would no longer be found.
    .map((line) => scrubber.text(line).slice(0, MAX_LINE_CHARS));
  const tools = [...new Set(transcript.toolCalls.map((t) => t.name))];
  const procedures = call.procedures ?? {};
  const proposals = await proposalsOf(
    ask,
    deriveMessages(
      { conversationId: call.conversationId, agent: call.agent, lines, callerTurns: turns.length, tools, procedures },
      agent,
    ),
    notes,
  );
  if (input.name !== undefined && proposals[0] && typeof proposals[0] === "object") {
    proposals[0] = { ...(proposals[0] as object), name: input.name };
  }
  if (call.context && Object.keys(call.context).length > 0) {
    notes.push("the call's context is left out: add what the agent needs (its variables) by hand");
  }
  const channel = { callee_no: scrubber.text(call.channel.callee_no) };
  if (!scrubber.isOwn(call.channel.callee_no) && !input.keepPii) {
    notes.push("the call's callee_no is not one the agent file holds: channel.callee_no is a placeholder to replace");
  }
  const vetted = vet(proposals, {
    agent,
    existing: agent.smoke,
    channel,
    scrubber,
    count: 1,
    maxCallMinutes: input.maxCallMinutes,
    facts: { tools, procedures, maxTurns: Math.min(50, Math.max(2, turns.length + 2)) },
    label: "proposed scenario",
  });
  if (scrubber.replaced > 0) notes.push(`${scrubber.replaced} personal value(s) replaced by labelled placeholders`);
  const from = [call.agent, call.versionId].filter(Boolean).join(", ");
  return {
    ...vetted,
    proposed: proposals.length,
    notes,
    comment: [
      `Derived from conversation ${call.conversationId}${from ? ` (${from})` : ""} by model ${input.model}: a persona scenario for the agent file's smoke: list.`,
      "tool_calls and procedures are what the call did; the persona, goal and rubrics are the model's: read them before you keep them.",
    ],
  };
}

export type GenerateInput = {
  agent: AgentDefinition;
  model: string;
  count: number;
  keepPii?: boolean;
  maxCallMinutes?: number | undefined;
};

export async function generateScenarios(input: GenerateInput, ask: Ask): Promise<Drafted> {
  const { agent } = input;
  const notes: string[] = [];
  const scrubber = new Scrubber({ own: ownNumbers(agent), keep: input.keepPii ?? false });
  const messages = generateMessages(agent, input.count, (text) => scrubber.text(text), agent.smoke);
  const proposals = await proposalsOf(ask, messages, notes);
  const number = agent.smoke[0]?.channel.callee_no;
  if (!number) notes.push("the agent has no scenario to take a callee_no from: channel.callee_no is a placeholder");
  const vetted = vet(proposals, {
    agent,
    existing: agent.smoke,
    channel: { callee_no: number ?? "<callee_no>" },
    scrubber,
    count: input.count,
    maxCallMinutes: input.maxCallMinutes,
    label: "proposed scenario",
  });
  const covered = new Set(
    vetted.kept.flatMap((k) => k.parsed.expect.tool_calls ?? []).map((t) => (typeof t === "string" ? t : t.name)),
  );
  const uncovered = agentTools(agent).filter((tool) => !covered.has(tool));
  if (uncovered.length > 0) notes.push(`no kept scenario calls ${uncovered.join(", ")}`);
  return {
    ...vetted,
    proposed: proposals.length,
    notes,
    comment: [
      `Generated for agent ${agent.key} by model ${input.model}: persona scenarios for the agent file's smoke: list.`,
      "The model wrote them from the agent file alone: read them before you keep them.",
    ],
  };
}
