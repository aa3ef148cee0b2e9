// What the judge is asked: the numbered transcript and one rubric, and the answer's JSON schema.
// PROMPT_VERSION is part of every cache key: a change to the wording here must bump it, so cached
// verdicts made under the old wording are not reused.

/** Bump when the messages or the schema below change (cached votes of another version are not reused). */
export const PROMPT_VERSION = 1;

/** The answer's shape, for `response_format: {type: "json_schema"}` (strict: every property required). */
export const VERDICT_JSON_SCHEMA = {
  type: "object",
  properties: {
    verdict: { type: "string", enum: ["pass", "fail"] },
    reason: { type: "string", description: "One or two sentences: why, in terms of the transcript." },
    lines: {
      type: "array",
      items: { type: "integer" },
      description: "Numbers of the transcript lines the verdict relies on.",
    },
  },
  required: ["verdict", "reason", "lines"],
  additionalProperties: false,
} as const;

/** The transcript as the judge sees it: one numbered line per entry ("3: tool lookup({…}) → {…}"). */
function numberedTranscript(lines: readonly string[]): string {
  if (lines.length === 0) return "(the conversation has no lines)";
  return lines.map((line, i) => `${i + 1}: ${line.replace(/\r?\n/g, " ")}`).join("\n");
}

const SYSTEM = `You check a phone conversation between a voice agent and a caller against one rubric.
The transcript has one numbered line per turn: "agent: …" is the agent, "user: …" the caller, "tool name({arguments}) → result" a tool the agent called and what it returned, "error: …" a service error.
Decide only from the transcript. Answer "pass" when the conversation satisfies the rubric, "fail" when it does not.
Answer with one JSON object and nothing else: {"verdict": "pass" | "fail", "reason": "<one or two sentences>", "lines": [<numbers of the transcript lines your verdict relies on>]}.
Cite only line numbers that exist in the transcript.`;

export type ChatMessage = { role: "system" | "user"; content: string };

/** The messages of one judge request. */
export function judgeMessages(rubric: string, lines: readonly string[]): ChatMessage[] {
  return [
    { role: "system", content: SYSTEM },
    {
      role: "user",
      content: `Rubric: ${rubric}\n\nTranscript (${lines.length} lines):\n${numberedTranscript(lines)}`,
    },
  ];
}
