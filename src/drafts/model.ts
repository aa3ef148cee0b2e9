// What the model is sent and how its answer is read. The requests carry only what docs/smoke.md
// says ("Scenarios from real calls and from the agent"): for derive the call's lines, tools and
// procedures; for generate the agent file's persona names, description, prompt, tools, languages and
// postprocess agents; both already scrubbed of personal data. The answer is data: a JSON object
// read with a size cap, each proposal checked field by field before anything is made of it.
import { z } from "zod";
import type { ConversationalAgentConfig } from "../contract/index.ts";
import type { AgentDefinition, SmokeScenario } from "../definitions/index.ts";
import { type AnswerShape, type ChatMessage, jsonIn } from "../model/index.ts";

/** The model's answer is read no further than this (a scenario list is a few KiB). */
const MAX_ANSWER_CHARS = 256 * 1024;
/** The prompt is sent no longer than this: the model needs the gist, and a long one costs tokens. */
const MAX_PROMPT_CHARS = 8000;

/** The first words of the system messages (the example model answers by them). */
const DERIVE_TASK = "You write one test scenario from a recorded call to a conversational agent.";
const GENERATE_TASK = "You propose test scenarios for a conversational agent from its definition.";

const ANSWER_FORMAT = [
  'Answer with a JSON object only: {"scenarios": [{"name": "kebab-case-name", "persona": "who calls and how they speak, one sentence",',
  '"goal": "what the caller wants, one short phrase", "max_turns": 4, "tool_calls": ["tool name"], "procedures": {"procedural agent key": "completed"},',
  '"judge": ["a rubric sentence about the outcome the caller got"], "language": "a language other than the default, or null"}]}.',
  "Name only tools and procedural agents listed below. Personal data appears as placeholders such as <phone 1>: keep them as they are.",
].join(" ");

/**
 * The answer asked for as a structured output (`response_format`, where the endpoint supports it).
 * It is read more loosely (readAnswer: a list of proposals, each vetted field by field), so one bad
 * proposal drops itself, not the answer.
 */
export const SCENARIOS: AnswerShape<unknown> = {
  name: "scenarios",
  schema: z.object({
    scenarios: z.array(
      z.object({
        name: z.string(),
        persona: z.string(),
        goal: z.string(),
        max_turns: z.int(),
        tool_calls: z.array(z.string()),
        procedures: z.record(z.string(), z.string()),
        judge: z.array(z.string()),
        language: z.string().nullable(),
      }),
    ),
  }),
};

/** The call as the model reads it: its lines (already scrubbed), the tools and procedures. */
export type CallView = {
  conversationId: string;
  agent: string | undefined;
  lines: string[];
  callerTurns: number;
  tools: string[];
  procedures: Record<string, string>;
};

const conversation = (system: string, user: string): ChatMessage[] => [
  { role: "system", content: system },
  { role: "user", content: user },
];

export function deriveMessages(call: CallView, agent: AgentDefinition | undefined): ChatMessage[] {
  const user = [
    `Agent: ${call.agent ?? "(unknown)"}`,
    `Tools the agent has: ${agentTools(agent).join(", ") || "(none)"}`,
    `Procedural agents: ${agent?.postprocessAgents.join(", ") || "(none)"}`,
    `Tools the agent called: ${call.tools.join(", ") || "(none)"}`,
    `Procedures that ran: ${
      Object.entries(call.procedures)
        .map(([key, status]) => `${key}: ${status}`)
        .join(", ") || "(none)"
    }`,
    `Caller lines: ${call.callerTurns}`,
    "The call:",
    ...call.lines,
  ].join("\n");
  const system = [
    DERIVE_TASK,
    "Describe the caller (persona) and what they wanted (goal) so that a model playing them would make the same call in its own words,",
    "and write one or two rubrics a judge can check about the outcome the caller got.",
    ANSWER_FORMAT,
  ].join(" ");
  return conversation(system, user);
}

/** A conversational agent's config, through its contract type (drafts are written for conversational agents only). */
export function conversationalConfig(agent: AgentDefinition | undefined): ConversationalAgentConfig | undefined {
  return agent?.kind === "conversational" ? (agent.config as ConversationalAgentConfig) : undefined;
}

export function agentTools(agent: AgentDefinition | undefined): string[] {
  return (conversationalConfig(agent)?.tool?.tools ?? []).map((tool) => tool.name);
}

/** The agent's languages: its default and the others it supports. */
export function agentLanguages(agent: AgentDefinition): { default: string | undefined; others: string[] } {
  const language = conversationalConfig(agent)?.language;
  const main = language?.default_language;
  return { default: main, others: (language?.supported_languages ?? []).filter((l) => l !== main) };
}

const cut = (text: string, max: number) => (text.length > max ? `${text.slice(0, max)} …` : text);

export function generateMessages(
  agent: AgentDefinition,
  count: number,
  scrub: (text: string) => string,
  existing: readonly SmokeScenario[],
): ChatMessage[] {
  const config = conversationalConfig(agent);
  const languages = agentLanguages(agent);
  const prompt = config?.runtime?.prompt?.text ?? "";
  const personas = existing.filter((s) => s.caller?.persona);
  const user = [
    `Agent: ${agent.key}`,
    `Name: ${scrub(agent.name)}`,
    `Description: ${scrub(agent.description)}`,
    `Agent persona: ${(config?.personas ?? []).map((p) => p.name).join(", ") || "(none)"}`,
    `Tools the agent has: ${agentTools(agent).join(", ") || "(none)"}`,
    `Procedural agents: ${agent.postprocessAgents.join(", ") || "(none)"}`,
    `Default language: ${languages.default ?? "(not set)"}`,
    `Languages beyond the default: ${languages.others.join(", ") || "(none)"}`,
    `Scenarios wanted: ${count}`,
    `Existing persona scenarios (do not repeat them): ${
      personas.map((s) => scrub(`${s.caller?.persona} / ${s.caller?.goal ?? ""}`)).join("; ") || "(none)"
    }`,
    "The agent's prompt:",
    // Scrubbed whole, then cut: a value the cut split would no longer be found.
    cut(scrub(prompt), MAX_PROMPT_CHARS),
  ].join("\n");
  const system = [
    GENERATE_TASK,
    `Propose ${count} scenarios: at least one that needs each tool, one per language beyond the default,`,
    "one caller who is off-topic or hostile, and one who ends the call early. Each with a persona, a goal and expectations.",
    ANSWER_FORMAT,
  ].join(" ");
  return conversation(system, user);
}

/** The answer's proposals (each still unchecked), or why the answer is not a list of them. */
export function readAnswer(content: string): { proposals: unknown[] } | { error: string } {
  if (content.length > MAX_ANSWER_CHARS) {
    return { error: `the answer is longer than ${MAX_ANSWER_CHARS} characters` };
  }
  // Some models wrap JSON in a code fence or a sentence: the JSON in the text is what is read.
  const value = jsonIn(content)?.value;
  if (value === undefined) return { error: "the answer holds no JSON object" };
  const scenarios = value && typeof value === "object" ? (value as { scenarios?: unknown }).scenarios : undefined;
  if (!Array.isArray(scenarios)) return { error: 'the answer has no "scenarios" list' };
  return { proposals: scenarios };
}
