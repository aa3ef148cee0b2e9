// One judge answer → one vote, or why it is not one. The JSON object may come as the whole message
// (a server that honours response_format) or inside text (one that ignores it: prose, a ```json
// fence); it is invalid when its shape is wrong or it cites a line the transcript does not have.
import { z } from "zod";
import { AgentIacError } from "../errors/index.ts";

export type VerdictWord = "pass" | "fail";
export type Vote = { verdict: VerdictWord; reason: string; lines: number[] };

const answerSchema = z.looseObject({
  verdict: z.enum(["pass", "fail"]),
  reason: z.string().trim().min(1),
  lines: z.array(z.int()),
});

/** The judge's answer could not be used as a vote (malformed, refused, cited lines that do not exist). */
export class JudgeAnswerError extends AgentIacError {
  override name = "JudgeAnswerError";
  readonly code = "AGENT_IAC_JUDGE_ANSWER";
}

const MAX_SHOWN = 200;
const excerpt = (text: string) => JSON.stringify(text.length > MAX_SHOWN ? `${text.slice(0, MAX_SHOWN)}…` : text);

/** The first JSON object in a text: the whole text, a fenced block, or the outermost braces. */
function jsonIn(text: string): unknown {
  const candidates = [text.trim()];
  const fence = /```(?:json)?\s*([\s\S]*?)```/i.exec(text);
  if (fence?.[1]) candidates.push(fence[1].trim());
  const start = text.indexOf("{");
  const end = text.lastIndexOf("}");
  if (start >= 0 && end > start) candidates.push(text.slice(start, end + 1));
  for (const candidate of candidates) {
    try {
      return JSON.parse(candidate);
    } catch {
      // the next candidate
    }
  }
  throw new JudgeAnswerError(`the judge's answer is not JSON: ${excerpt(text)}`);
}

/** A vote from the message text; `lineCount` is the transcript's number of lines. */
export function parseVote(content: string, lineCount: number): Vote {
  const parsed = answerSchema.safeParse(jsonIn(content));
  if (!parsed.success) {
    throw new JudgeAnswerError(
      `the judge's answer does not have the verdict's shape ({verdict: pass|fail, reason, lines}): ${z.prettifyError(parsed.error).replace(/\n/g, " ")}`,
    );
  }
  const missing = parsed.data.lines.filter((n) => n < 1 || n > lineCount);
  if (missing.length > 0) {
    throw new JudgeAnswerError(
      `the judge cited line(s) ${missing.join(", ")}, which the transcript does not have (it has ${lineCount})`,
    );
  }
  const lines = [...new Set(parsed.data.lines)].sort((a, b) => a - b);
  return { verdict: parsed.data.verdict, reason: parsed.data.reason, lines };
}
