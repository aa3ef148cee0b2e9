// One verdict per rubric: `votes` independent requests (or their cached answers), the majority
// decides, the agreement (`2/3`) is kept and a split vote is uncertain. Adaptive votes (`auto`) are
// asked in rounds until the verdict is settled at 95 % (src/stats settledVerdict) or `votes` were
// asked; one not settled by then is `inconclusive`: the judge could not decide, so its last vote
// does not (never a pass). Any vote that could not be had — a malformed answer, a refusal, a
// timeout, retries exhausted — makes the judgement an error: never a pass.
import { nextVotes, settledVerdict } from "../stats/index.ts";
import type { Calibration, JudgeIdentity, VoteCache } from "./cache.ts";
import type { JudgeClient } from "./client.ts";
import type { VerdictWord, Vote } from "./verdict.ts";

/** `votes` asked; with `auto`, asked until settled, at most `votes`. */
export type JudgeRubric = { rubric: string; votes: number; auto?: boolean };

/** One judged expectation's outcome (the report's `judgement` object). */
export type Judgement = {
  rubric: string;
  model: string;
  /** `inconclusive`: adaptive votes not settled at 95 % by the cap (the judge's indecision, never a pass). */
  verdict: VerdictWord | "error" | "inconclusive";
  /** Votes for the verdict / votes asked for, e.g. "2/3". */
  agreement: string;
  votes_for: number;
  /** Votes asked (with adaptive votes, as many as it took). */
  votes_total: number;
  /** The votes did not all agree (adaptive votes: the verdict was not settled). */
  uncertain: boolean;
  /** Adaptive votes: whether the verdict was settled at 95 % before the cap; null for a fixed number of votes. */
  settled: boolean | null;
  /** A reason given by a vote of the majority. */
  reason: string;
  /** Transcript lines (1-based) the majority's votes cite. */
  lines: number[];
  /** Every vote, in order. */
  votes: Vote[];
  /**
   * The model id(s) the endpoint said answered (its responses' `model`, distinct, comma-separated);
   * null when it named none. One other than `model` is shown on every surface.
   */
  answered_model: string | null;
  /** Votes answered from the cache (no request made). */
  cached_votes: number;
  /** Why there is no verdict (verdict "error"). */
  error: string | null;
  /** The rubric's last measured agreement with human labels, when `judge check` measured it. */
  calibration: Calibration | null;
};

export type JudgeStats = { requests: number; cached: number };

export class Judge {
  readonly client: JudgeClient;
  readonly cache: VoteCache | undefined;
  readonly stats: JudgeStats = { requests: 0, cached: 0 };
  #calibrations: Promise<Record<string, Calibration>> | undefined;

  constructor(client: JudgeClient, cache?: VoteCache) {
    this.client = client;
    this.cache = cache;
  }

  get model(): string {
    return this.client.model;
  }

  /** The endpoint and model answering: what cached votes and calibrations must have been made by. */
  get identity(): JudgeIdentity {
    return { baseUrl: this.client.baseUrl, model: this.client.model };
  }

  /** The last `judge check` results of this judge (endpoint and model), by rubric, as signed on this machine. */
  calibrations(): Promise<Record<string, Calibration>> {
    this.#calibrations ??= this.cache ? this.cache.agreements(this.identity) : Promise.resolve({});
    return this.#calibrations;
  }

  /** One vote: from the cache, else asked (and stored). */
  async vote(
    rubric: string,
    lines: readonly string[],
    index: number,
    signal?: AbortSignal,
  ): Promise<Vote & { cached: boolean }> {
    const key = { judge: this.identity, rubric, lines, vote: index };
    const cached = await this.cache?.get(key);
    if (cached) {
      this.stats.cached++;
      return { ...cached, cached: true };
    }
    this.stats.requests++;
    const vote = await this.client.vote(rubric, lines, signal);
    await this.cache?.put(key, vote).catch(() => {});
    return { ...vote, cached: false };
  }

  /** The judgement of one rubric over a transcript (display lines, numbered from 1). */
  async judge(item: JudgeRubric, lines: readonly string[], signal?: AbortSignal): Promise<Judgement> {
    const calibration = (await this.calibrations())[item.rubric] ?? null;
    const settled: PromiseSettledResult<Vote & { cached: boolean }>[] = [];
    const count = (verdict: VerdictWord) =>
      settled.filter((s) => s.status === "fulfilled" && s.value.verdict === verdict).length;
    let round = item.auto ? nextVotes(0, 0, item.votes) : item.votes;
    while (round > 0) {
      const first = settled.length;
      settled.push(
        ...(await Promise.allSettled(
          Array.from({ length: round }, (_, i) => this.vote(item.rubric, lines, first + i, signal)),
        )),
      );
      if (!item.auto || settled.some((s) => s.status === "rejected")) break;
      round = nextVotes(count("pass"), count("fail"), item.votes);
    }
    const votes = settled.flatMap((s) => (s.status === "fulfilled" ? [s.value] : []));
    const failure = settled.find((s): s is PromiseRejectedResult => s.status === "rejected");
    const cached_votes = votes.filter((v) => v.cached).length;
    const plain = votes.map(({ verdict, reason, lines: cited }) => ({ verdict, reason, lines: cited }));
    const answered = [...new Set(votes.flatMap((v) => (v.model === undefined ? [] : [v.model])))];
    const base = {
      rubric: item.rubric,
      model: this.model,
      answered_model: answered.length > 0 ? answered.join(", ") : null,
      votes_total: settled.length,
      calibration,
    };
    if (failure) {
      const why = failure.reason instanceof Error ? failure.reason.message : String(failure.reason);
      return {
        ...base,
        verdict: "error",
        agreement: `${votes.length}/${settled.length} answered`,
        votes_for: 0,
        uncertain: true,
        settled: null,
        reason: "",
        lines: [],
        votes: plain,
        cached_votes,
        error: `${settled.length - votes.length} of ${settled.length} vote(s) failed: ${why}`,
      };
    }
    const decided = majority(plain);
    if (!item.auto) return { ...base, ...decided, settled: null, votes: plain, cached_votes, error: null };
    if (settledVerdict(count("pass"), count("fail")) === null) {
      return { ...base, ...unsettled(plain), settled: false, votes: plain, cached_votes, error: null };
    }
    return { ...base, ...decided, uncertain: false, settled: true, votes: plain, cached_votes, error: null };
  }
}

/** Adaptive votes that reached the cap unsettled: inconclusive, the split said; no side's reason or lines stand for it. */
function unsettled(
  votes: readonly Vote[],
): Pick<Judgement, "verdict" | "agreement" | "votes_for" | "uncertain" | "reason" | "lines"> {
  const passes = votes.filter((v) => v.verdict === "pass").length;
  const lead = Math.max(passes, votes.length - passes);
  return {
    verdict: "inconclusive",
    agreement: `${lead}/${votes.length}`,
    votes_for: lead,
    uncertain: true,
    reason: `${passes} pass, ${votes.length - passes} fail after ${votes.length} votes: not settled at 95 %`,
    lines: [],
  };
}

/** The majority of an odd number of votes, with its agreement and the lines its votes cite. */
export function majority(
  votes: readonly Vote[],
): Pick<Judgement, "verdict" | "agreement" | "votes_for" | "uncertain" | "reason" | "lines"> {
  const passes = votes.filter((v) => v.verdict === "pass").length;
  const verdict: VerdictWord = passes * 2 > votes.length ? "pass" : "fail";
  const side = votes.filter((v) => v.verdict === verdict);
  return {
    verdict,
    agreement: `${side.length}/${votes.length}`,
    votes_for: side.length,
    uncertain: side.length !== votes.length,
    reason: side[0]?.reason ?? "",
    lines: [...new Set(side.flatMap((v) => v.lines))].sort((a, b) => a - b),
  };
}
