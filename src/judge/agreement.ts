// How far the judge agrees with people: over labelled transcripts, the share of verdicts equal to
// the human's, Cohen's kappa (that agreement corrected for what two raters with these pass rates
// would reach by chance), the confusion matrix, and how often the judge's own votes agree.
import { flipRate, type Kappa, kappaInterval } from "../stats/index.ts";
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
  /** Kappa's 95 % interval (src/stats kappaInterval: Wilson's on the agreement); null where kappa is. */
  kappa_interval: { low: number; high: number } | null;
  /** How many items the human passed and failed: a gate needs both verdicts among the labels. */
  human: { pass: number; fail: number };
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
  const human = {
    pass: confusion.human_pass_judge_pass + confusion.human_pass_judge_fail,
    fail: confusion.human_fail_judge_pass + confusion.human_fail_judge_fail,
  };
  if (n === 0) return { items: 0, agreement: 0, kappa: null, kappa_interval: null, human, confusion };
  const po = (confusion.human_pass_judge_pass + confusion.human_fail_judge_fail) / n;
  const humanPass = (confusion.human_pass_judge_pass + confusion.human_pass_judge_fail) / n;
  const judgePass = (confusion.human_pass_judge_pass + confusion.human_fail_judge_pass) / n;
  const pe = humanPass * judgePass + (1 - humanPass) * (1 - judgePass);
  const kappa = pe >= 1 ? null : (po - pe) / (1 - pe);
  return { items: n, agreement: po, kappa, kappa_interval: kappaInterval(po, pe, n), human, confusion };
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

/** The judge's flip rate over items' votes (src/stats flipRate): how often two votes on one item disagree. */
export function voteFlipRate(itemVotes: readonly (readonly VerdictWord[])[]): number | null {
  return flipRate(
    itemVotes.map((votes) => ({ passes: votes.filter((v) => v === "pass").length, votes: votes.length })),
  );
}

/** Why labels cannot back a gate, or null: all of one human verdict tell no judge from one that always says it. */
export function oneVerdictOnly(human: { pass: number; fail: number }): string | null {
  if (human.pass > 0 && human.fail > 0) return null;
  const only = human.fail === 0 ? "pass" : "fail";
  return `every labelled transcript is a human ${only}: a judge that always says ${only} would agree with all of them, so the labels cannot tell a judge from it (label transcripts of both verdicts)`;
}

const round = (x: number) => Math.round(x * 1000) / 1000;

/** `kappa 0.78 (95 % CI 0.45 to 0.96, 10 distinct items)`, or `kappa n/a (one label throughout)`. */
function kappaText(k: Pick<Kappa, "kappa" | "kappa_interval" | "items">): string {
  if (k.kappa === null) return "kappa n/a (one label throughout)";
  const ci = k.kappa_interval;
  const interval = ci ? ` (95 % CI ${round(ci.low)} to ${round(ci.high)}, ${k.items} distinct item(s))` : "";
  return `kappa ${round(k.kappa)}${interval}`;
}

/** `agreement 0.9 (9/10), kappa 0.78 (95 % CI 0.45 to 0.96, 10 distinct items); human pass 0.5, fail 0.5` — how the figures read on a terminal. */
export function agreementLine(stats: AgreementStats): string {
  const agreed = stats.confusion.human_pass_judge_pass + stats.confusion.human_fail_judge_fail;
  const shares =
    stats.items > 0
      ? `; human pass ${round(stats.human.pass / stats.items)}, fail ${round(stats.human.fail / stats.items)}`
      : "";
  return `agreement ${round(stats.agreement)} (${agreed}/${stats.items}), ${kappaText(stats)}${shares}`;
}

/** `agreement 0.8 (8/10), kappa 0.6 (95 % CI …)` of two raters (two labellers, two judges). */
export function kappaLine(k: Kappa): string {
  return `agreement ${round(k.agreement)} (${Math.round(k.agreement * k.items)}/${k.items}), ${kappaText(k)}`;
}
