// The judge's client: one vote per request through the model port (src/model), its answer asked
// for and read in the verdict's shape (VERDICT, a zod schema), then held to the vote's rules
// (verdict.ts: one verdict, cited lines that exist).
import { ModelClient, type ModelEndpoint } from "../model/index.ts";
import { judgeMessages, VERDICT } from "./prompt.ts";
import { parseVote, type Vote } from "./verdict.ts";

export type JudgeEndpoint = ModelEndpoint;

/** The judge: one vote per request, its answer held to the verdict's shape. */
export class JudgeClient extends ModelClient {
  constructor(endpoint: JudgeEndpoint) {
    super("judge", endpoint);
  }

  /** One vote: a request for a verdict on one rubric. Throws a ModelAnswerError or the core's ApiError. */
  async vote(rubric: string, lines: readonly string[], signal?: AbortSignal): Promise<Vote> {
    const answer = await this.text(judgeMessages(rubric, lines), { signal, format: VERDICT });
    const vote = parseVote(answer.content, lines.length, this.origin);
    return answer.answered ? { ...vote, model: answer.answered } : vote;
  }
}
