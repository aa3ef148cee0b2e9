// The ranking of the sides (the base and every variant) by pass rate, and how sure it is: a side is
// "ranked first with evidence" only when, on the rounds it shares with each other side (both
// placed the same scenario with the same caller lines), the sign test by betting says it passes
// more often than that side, Bonferroni-corrected over the others; otherwise the ranking names the
// sides it cannot tell the top one apart from, and after how many pairs.
import { type PairOutcome, regressedBet, signWealth } from "../stats/index.ts";

export type RankedSide = { name: string; passRate: number | null; outcomes: Map<string, boolean> };
export type Ranking = {
  order: string[];
  first: string | null;
  notToldApart: { a: string; b: string; pairs: number }[];
  text: string;
};

/** The pairs two sides share: the same scenario and round, both ended on their own. */
function shared(a: RankedSide, b: RankedSide): PairOutcome[] {
  const pairs: PairOutcome[] = [];
  for (const [key, passed] of a.outcomes) {
    const other = b.outcomes.get(key);
    if (other !== undefined) pairs.push({ new: passed, old: other });
  }
  return pairs;
}

export function rank(sides: RankedSide[], rule: { alpha: number; maxPairs: number }): Ranking {
  const order = [...sides].sort((x, y) => (y.passRate ?? -1) - (x.passRate ?? -1));
  const top = order[0];
  if (!top || order.length < 2) return { order: order.map((s) => s.name), first: null, notToldApart: [], text: "" };
  const level = rule.alpha / (order.length - 1);
  const bet = regressedBet(rule);
  const notToldApart = order.slice(1).flatMap((other) => {
    const pairs = shared(top, other);
    const discordant = pairs.filter((p) => p.new !== p.old).map((p) => (p.new ? 1 : -1));
    return signWealth(discordant, bet) >= 1 / level - 1e-9 ? [] : [{ a: top.name, b: other.name, pairs: pairs.length }];
  });
  const names = order.map((s) => s.name);
  if (notToldApart.length === 0) {
    return {
      order: names,
      first: top.name,
      notToldApart,
      text: `${top.name} is ranked first with evidence: it passed more often than each other side on the pairs they share (sign test by betting, α ${rule.alpha} Bonferroni-corrected over ${order.length - 1})`,
    };
  }
  const apart = notToldApart.map((n) => `${n.a} and ${n.b} are not told apart after ${n.pairs} pairs`);
  return {
    order: names,
    first: null,
    notToldApart,
    text: `no side is ranked first with evidence: ${apart.join("; ")} (by pass rate: ${names.join(" ≥ ")})`,
  };
}
