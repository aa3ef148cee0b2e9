// One judge answer → one vote, or why it is not one. The JSON object may come as the whole message
// (a server that honours response_format) or inside text (one that ignores it: prose, a ```json
// fence); it is invalid when its shape is wrong, cites no line of a transcript that has lines, or
// cites a line the transcript does not have (a verdict rests on lines it names, shown with it), and
// ambiguous — refused, never read as either — when it gives more than one verdict (two `verdict`
// keys, two objects, or prose naming the other verdict). The reason and the cited lines are capped
// (MAX_REASON_CHARS, MAX_CITED_LINES) here, so every surface shows at most that.
import { z } from "zod";
import { AgentIacError } from "../errors/index.ts";

export type VerdictWord = "pass" | "fail";
/** `model`: the model id the endpoint said answered (its response's `model`), when it said one. */
export type Vote = { verdict: VerdictWord; reason: string; lines: number[]; model?: string };

/** The longest reason kept from a vote (characters; longer ones are cut and end in "…"). */
const MAX_REASON_CHARS = 500;
/** The most transcript lines a vote may cite (the first ones, in order, are kept). */
const MAX_CITED_LINES = 20;

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

/** A vote within the caps: the reason cut at MAX_REASON_CHARS, at most MAX_CITED_LINES lines. */
export function capVote(vote: Vote): Vote {
  const reason = vote.reason.length > MAX_REASON_CHARS ? `${vote.reason.slice(0, MAX_REASON_CHARS)}…` : vote.reason;
  const lines = [...new Set(vote.lines)].sort((a, b) => a - b).slice(0, MAX_CITED_LINES);
  return { verdict: vote.verdict, reason, lines, ...(vote.model === undefined ? {} : { model: vote.model }) };
}

/** The first JSON object in a text (the whole text, a fenced block, or the outermost braces) and the text around it. */
function jsonIn(text: string): { value: unknown; around: string } {
  const candidates: { json: string; around: string }[] = [{ json: text.trim(), around: "" }];
  const fence = /```(?:json)?\s*([\s\S]*?)```/i.exec(text);
  if (fence?.[1]) {
    candidates.push({
      json: fence[1].trim(),
      around: text.slice(0, fence.index) + text.slice(fence.index + fence[0].length),
    });
  }
  const start = text.indexOf("{");
  const end = text.lastIndexOf("}");
  if (start >= 0 && end > start) {
    candidates.push({ json: text.slice(start, end + 1), around: text.slice(0, start) + text.slice(end + 1) });
  }
  for (const candidate of candidates) {
    try {
      return { value: JSON.parse(candidate.json), around: candidate.around };
    } catch {
      // the next candidate
    }
  }
  throw new JudgeAnswerError(`the judge's answer is not JSON: ${excerpt(text)}`);
}

const ambiguous = (why: string) =>
  new JudgeAnswerError(`the judge's answer is ambiguous (${why}): it is not counted as either verdict`);

/** A vote from the message text; `lineCount` is the transcript's number of lines. */
export function parseVote(content: string, lineCount: number): Vote {
  const verdictKeys = content.match(/"verdict"\s*:/g)?.length ?? 0;
  if (verdictKeys > 1) throw ambiguous(`it gives ${verdictKeys} verdicts`);
  const { value, around } = jsonIn(content);
  const parsed = answerSchema.safeParse(value);
  if (!parsed.success) {
    throw new JudgeAnswerError(
      `the judge's answer does not have the verdict's shape ({verdict: pass|fail, reason, lines}): ${z.prettifyError(parsed.error).replace(/\n/g, " ")}`.slice(
        0,
        MAX_SHOWN * 2,
      ),
    );
  }
  const other = parsed.data.verdict === "pass" ? "fail" : "pass";
  if (new RegExp(`\\b${other}\\b`, "i").test(around)) {
    throw ambiguous(`its JSON says "${parsed.data.verdict}" and its text around it says "${other}"`);
  }
  // A verdict rests on the lines it names (shown beside it in the reports): one naming none is no
  // evidence of either verdict, refused like an ambiguous one.
  if (parsed.data.lines.length === 0 && lineCount > 0) {
    throw new JudgeAnswerError(
      `the judge's answer cites no transcript line (a verdict must name the lines it relies on): it is not counted as either verdict`,
    );
  }
  const missing = parsed.data.lines.filter((n) => n < 1 || n > lineCount);
  if (missing.length > 0) {
    const shown = missing.slice(0, 10).join(", ") + (missing.length > 10 ? ` and ${missing.length - 10} more` : "");
    throw new JudgeAnswerError(
      `the judge cited line(s) ${shown}, which the transcript does not have (it has ${lineCount})`,
    );
  }
  return capVote({ verdict: parsed.data.verdict, reason: parsed.data.reason, lines: parsed.data.lines });
}
