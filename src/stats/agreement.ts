// How sure a measurement of a judge is: Cohen's kappa with a 95 % interval, the judge's flip rate,
// and when a sequence of its votes has settled a verdict. Pure functions, no I/O.
import { logChoose, wilsonInterval } from "./binomial.ts";

/**
 * A 95 % interval for Cohen's kappa over `n` items with observed agreement `po` and chance
 * agreement `pe`: the Wilson score interval of the observed agreement (Wilson 1927) carried through
 * kappa's chance correction, κ = (po − pe) / (1 − pe), with pe held at its observed value. Unlike
 * the Wald interval with the large-sample standard error (Fleiss, Cohen & Everitt 1969), it does
 * not shrink to a point at perfect agreement: ten items that all agree still leave a wide interval.
 * It does not count pe's own sampling error, so it is somewhat narrow when the labels are few and
 * lopsided. Null where kappa is undefined (pe = 1) or there are no items.
 */
export function kappaInterval(po: number, pe: number, n: number, z = 1.959964): { low: number; high: number } | null {
  if (n <= 0 || pe >= 1) return null;
  const wilson = wilsonInterval(Math.round(po * n), n, z);
  if (!wilson) return null;
  // Kappa is never below −1; holding pe fixed can carry a low agreement past it.
  const kappa = (p: number) => Math.max(-1, (p - pe) / (1 - pe));
  return { low: kappa(wilson.low), high: kappa(wilson.high) };
}

/** Two raters' pass/fail labels of one item. */
export type RatedPair = { a: "pass" | "fail"; b: "pass" | "fail" };

/** Cohen's kappa of two raters over `pairs` (one per distinct item), with kappaInterval's 95 % interval. */
export type Kappa = {
  items: number;
  agreement: number;
  kappa: number | null;
  kappa_interval: { low: number; high: number } | null;
};

/**
 * Cohen's kappa, (po − pe) / (1 − pe) with pe from the two raters' pass rates; null where both gave
 * one same label to every item. Each pair must be a distinct item: a repeated item is no new evidence.
 */
export function cohenKappa(pairs: readonly RatedPair[]): Kappa {
  const n = pairs.length;
  if (n === 0) return { items: 0, agreement: 0, kappa: null, kappa_interval: null };
  const po = pairs.filter((p) => p.a === p.b).length / n;
  const aPass = pairs.filter((p) => p.a === "pass").length / n;
  const bPass = pairs.filter((p) => p.b === "pass").length / n;
  const pe = aPass * bPass + (1 - aPass) * (1 - bPass);
  const kappa = pe >= 1 ? null : (po - pe) / (1 - pe);
  return { items: n, agreement: po, kappa, kappa_interval: kappaInterval(po, pe, n) };
}

/**
 * The judge's flip rate: the chance that two of its votes on one item disagree, estimated without
 * bias from every item with two votes or more (an item with p passes of v votes contributes
 * p(v − p) disagreeing pairs of v(v − 1)/2). It does not depend on how many votes were asked. A
 * judge whose single vote goes against its own usual verdict with probability f flips 2f(1 − f).
 */
export function flipRate(items: readonly { passes: number; votes: number }[]): number | null {
  let pairs = 0;
  let disagreeing = 0;
  for (const { passes, votes } of items) {
    if (votes < 2) continue;
    pairs += (votes * (votes - 1)) / 2;
    disagreeing += passes * (votes - passes);
  }
  return pairs === 0 ? null : disagreeing / pairs;
}

/** Adaptive votes (`votes: auto`): the level at which a verdict is settled. */
const SETTLED_LEVEL = 0.95;
/** Adaptive votes: the most asked of one rubric when the verdict does not settle (odd: a majority exists). */
export const DEFAULT_MAX_VOTES = 9;

/**
 * The chance, after `passes` and `fails` votes, that the judge's majority over endless votes on
 * this item is pass: P(θ > ½) for its pass probability θ under the uniform prior, whose posterior is
 * Beta(passes + 1, fails + 1). Exact, by the identity P(Beta(a, b) < ½) = P(Binomial(a + b − 1, ½) ≥ a).
 */
export function passPosterior(passes: number, fails: number): number {
  const n = passes + fails + 1;
  let belowHalf = 0;
  for (let j = passes + 1; j <= n; j++) belowHalf += Math.exp(logChoose(n, j) - n * Math.LN2);
  return 1 - belowHalf;
}

/** The verdict the votes have settled at `level` (pass, fail), or null while it is open. */
export function settledVerdict(passes: number, fails: number, level = SETTLED_LEVEL): "pass" | "fail" | null {
  const pass = passPosterior(passes, fails);
  if (pass >= level) return "pass";
  if (pass <= 1 - level) return "fail";
  return null;
}

/**
 * How many votes to ask next: the fewest that would settle the verdict if they all went the
 * leading side's way (either side on a tie), at most `cap` in all; 0 once settled or at the cap.
 * Asking them together keeps a clear item to one round (4 unanimous votes settle at 95 %).
 */
export function nextVotes(passes: number, fails: number, cap: number, level = SETTLED_LEVEL): number {
  const left = cap - passes - fails;
  if (left <= 0 || settledVerdict(passes, fails, level) !== null) return 0;
  for (let j = 1; j < left; j++) {
    const settles =
      passes >= fails ? settledVerdict(passes + j, fails, level) : settledVerdict(passes, fails + j, level);
    if (settles !== null) return j;
  }
  return left;
}
