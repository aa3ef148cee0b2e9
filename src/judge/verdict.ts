// One judge answer → one vote, or why it is not one. The JSON object may come as the whole message
// (a server that honours response_format) or inside text (one that ignores it: prose, a ```json
// fence); it is invalid when its shape is wrong, cites no line of a transcript that has lines, or
// cites a line the transcript does not have (a verdict rests on lines it names, shown with it), and
// ambiguous — refused, never read as either — when it gives more than one verdict (two `verdict`
// keys, two objects, or prose naming the other verdict). The reason and the cited lines are capped
// (MAX_REASON_CHARS, MAX_CITED_LINES) here, so every surface shows at most that.
import { ModelAnswerError, type ModelOrigin } from "../errors/index.ts";
import { readShape } from "../model/index.ts";
import { VERDICT } from "./prompt.ts";

export type VerdictWord = "pass" | "fail";
/** `model`: the model id the endpoint said answered (its response's `model`), when it said one. */
export type Vote = { verdict: VerdictWord; reason: string; lines: number[]; model?: string };

/** The longest reason kept from a vote (characters; longer ones are cut and end in "…"). */
const MAX_REASON_CHARS = 500;
/** The most transcript lines a vote may cite (the first ones, in order, are kept). */
const MAX_CITED_LINES = 20;

/** A vote within the caps: the reason cut at MAX_REASON_CHARS, at most MAX_CITED_LINES lines. */
export function capVote(vote: Vote): Vote {
  const reason = vote.reason.length > MAX_REASON_CHARS ? `${vote.reason.slice(0, MAX_REASON_CHARS)}…` : vote.reason;
  const lines = [...new Set(vote.lines)].sort((a, b) => a - b).slice(0, MAX_CITED_LINES);
  return { verdict: vote.verdict, reason, lines, ...(vote.model === undefined ? {} : { model: vote.model }) };
}

const ambiguous = (why: string, origin: ModelOrigin | undefined) =>
  new ModelAnswerError(`the judge's answer is ambiguous (${why}): it is not counted as either verdict`, origin);

/** A vote from the message text; `lineCount` is the transcript's number of lines, `origin` the judge that answered. */
export function parseVote(content: string, lineCount: number, origin?: ModelOrigin): Vote {
  const verdictKeys = content.match(/"verdict"\s*:/g)?.length ?? 0;
  if (verdictKeys > 1) throw ambiguous(`it gives ${verdictKeys} verdicts`, origin);
  const { value, around } = readShape(content, VERDICT, origin);
  const parsed = { data: value };
  const other = parsed.data.verdict === "pass" ? "fail" : "pass";
  if (new RegExp(`\\b${other}\\b`, "i").test(around)) {
    throw ambiguous(`its JSON says "${parsed.data.verdict}" and its text around it says "${other}"`, origin);
  }
  // A verdict rests on the lines it names (shown beside it in the reports): one naming none is no
  // evidence of either verdict, refused like an ambiguous one.
  if (parsed.data.lines.length === 0 && lineCount > 0) {
    throw new ModelAnswerError(
      `the judge's answer cites no transcript line (a verdict must name the lines it relies on): it is not counted as either verdict`,
      origin,
    );
  }
  const missing = parsed.data.lines.filter((n) => n < 1 || n > lineCount);
  if (missing.length > 0) {
    const shown = missing.slice(0, 10).join(", ") + (missing.length > 10 ? ` and ${missing.length - 10} more` : "");
    throw new ModelAnswerError(
      `the judge cited line(s) ${shown}, which the transcript does not have (it has ${lineCount})`,
      origin,
    );
  }
  return capVote({ verdict: parsed.data.verdict, reason: parsed.data.reason, lines: parsed.data.lines });
}
