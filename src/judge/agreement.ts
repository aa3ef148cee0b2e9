// How far the judge agrees with people: over labelled transcripts, the share of verdicts equal to
// the human's, Cohen's kappa (that agreement corrected for what two raters with these pass rates
// would reach by chance), the confusion matrix, and how often the judge's own votes agree.
import type { VerdictWord } from "./verdict.ts";

export type LabelledVerdict = { human: VerdictWord; judge: VerdictWord };

/** Rows: the human's label; columns: the judge's verdict. */
type Confusion = {
  human_pass_judge_pass: number;
  human_pass_judge_fail: number;
  human_fail_judge_pass: number;
  human_fail_judge_fail: number;
};

export type AgreementStats = {
  items: number;
  /** Share of items where the judge's verdict is the human's (0–1). */
  agreement: number;
  /**
   * Cohen's kappa: (po − pe) / (1 − pe), pe from the two raters' pass rates. 1 perfect, 0 chance
   * level, below 0 worse than chance; null where undefined (both raters gave one same label to every item).
   */
  kappa: number | null;
  confusion: Confusion;
};

export function agreementStats(pairs: readonly LabelledVerdict[]): AgreementStats {
  const count = (human: VerdictWord, judge: VerdictWord) =>
    pairs.filter((p) => p.human === human && p.judge === judge).length;
  const confusion: Confusion = {
    human_pass_judge_pass: count("pass", "pass"),
    human_pass_judge_fail: count("pass", "fail"),
    human_fail_judge_pass: count("fail", "pass"),
    human_fail_judge_fail: count("fail", "fail"),
  };
  const n = pairs.length;
  if (n === 0) return { items: 0, agreement: 0, kappa: null, confusion };
  const po = (confusion.human_pass_judge_pass + confusion.human_fail_judge_fail) / n;
  const humanPass = (confusion.human_pass_judge_pass + confusion.human_pass_judge_fail) / n;
  const judgePass = (confusion.human_pass_judge_pass + confusion.human_fail_judge_pass) / n;
  const pe = humanPass * judgePass + (1 - humanPass) * (1 - judgePass);
  const kappa = pe >= 1 ? null : (po - pe) / (1 - pe);
  return { items: n, agreement: po, kappa, confusion };
}

/**
 * The judge's vote-to-vote consistency over items: the mean share of an item's votes that agree
 * with its majority (1 when every item's votes were unanimous; 2/3 when each split 2 to 1).
 */
export function voteConsistency(itemVotes: readonly (readonly VerdictWord[])[]): number | null {
  const shares = itemVotes
    .filter((votes) => votes.length > 0)
    .map((votes) => {
      const passes = votes.filter((v) => v === "pass").length;
      return Math.max(passes, votes.length - passes) / votes.length;
    });
  return shares.length === 0 ? null : shares.reduce((a, b) => a + b, 0) / shares.length;
}

const round = (x: number) => Math.round(x * 1000) / 1000;

/** `agreement 0.9 (9/10), kappa 0.78` — how the figures read on a terminal. */
export function agreementLine(stats: AgreementStats): string {
  const agreed = stats.confusion.human_pass_judge_pass + stats.confusion.human_fail_judge_fail;
  const kappa = stats.kappa === null ? "kappa n/a (one label throughout)" : `kappa ${round(stats.kappa)}`;
  return `agreement ${round(stats.agreement)} (${agreed}/${stats.items}), ${kappa}`;
}
