// The sequential comparison of old and new (src/stats/paired.ts), measured by simulation for
// `npm run bench -- --decisions`: its false regression rate when nothing changed (stopped at its
// decision, and over every look to the cap ignoring any stop), its false "no worse" at a drop of
// exactly the margin, its power for drops of 0.1, 0.2 and 0.3, the pairs it takes, and the calls it
// saves against the fixed design of equal error (Fisher's one-sided test at the same α with as
// many calls a side as give at least the sequential test's power at that drop).
import {
  fisherLower,
  type PairedRule,
  type PairOutcome,
  pairedDecision,
  pairedWealth,
  regressedBet,
} from "../src/stats/index.ts";

/** Pairs per round: the default --concurrency (4) places two pairs at a time. */
const PAIRS_PER_ROUND = 2;

export type CompareRow = {
  max_pairs: number;
  /** The regressed test's bet for this cap (regressedBet). */
  bet: number;
  old_rate: number;
  new_rate: number;
  regressed: number;
  no_worse: number;
  inconclusive: number;
  /** Regressed wealth ever ≥ 1/α at some look up to the cap, ignoring every stop (the null rows). */
  regressed_any_look: number | null;
  mean_pairs: number;
  /** Calls a side of Fisher's test with at least this power at α (drops only). */
  fixed_calls_per_side: number | null;
  fixed_power: number | null;
  calls_saved: number | null;
};

type Random = () => number;

function run(pOld: number, pNew: number, rule: PairedRule, next: Random) {
  const pairs: PairOutcome[] = [];
  for (;;) {
    for (let i = 0; i < PAIRS_PER_ROUND && pairs.length < rule.maxPairs; i++) {
      pairs.push({ old: next() < pOld, new: next() < pNew });
    }
    const decision = pairedDecision(pairs, rule);
    if (decision !== "continue") return { decision, pairs: pairs.length };
  }
}

/** Whether the regressed test's wealth reaches 1/α at any look up to the cap (no stop at all). */
function everRegressed(p: number, rule: PairedRule, next: Random): boolean {
  const pairs: PairOutcome[] = [];
  while (pairs.length < rule.maxPairs) {
    for (let i = 0; i < PAIRS_PER_ROUND; i++) pairs.push({ old: next() < p, new: next() < p });
    if (pairedWealth(pairs, rule).regressed >= 1 / rule.alpha) return true;
  }
  return false;
}

/** Fisher's one-sided test's power with n calls a side at α. */
function fisherPower(pOld: number, pNew: number, n: number, alpha: number, runs: number, next: Random): number {
  let flagged = 0;
  const count = (p: number) => Array.from({ length: n }, () => next() < p).filter(Boolean).length;
  for (let s = 0; s < runs; s++) if (fisherLower(count(pOld), n, count(pNew), n) <= alpha) flagged++;
  return flagged / runs;
}

/** The fewest calls a side with which Fisher's test reaches `power` (searched in steps of 5, then 1). */
export function fixedCalls(pOld: number, pNew: number, power: number, alpha: number, next: Random): number {
  const reaches = (n: number) => fisherPower(pOld, pNew, n, alpha, 2000, next) >= power;
  let high = 5;
  while (!reaches(high) && high < 400) high += 5;
  let n = Math.max(2, high - 4);
  while (n < high && !reaches(n)) n++;
  return n;
}

/** The default cap's rows: nothing changed, and drops of 0.1 to 0.5. */
const DEFAULT_CASES: [number, number][] = [
  [1, 1],
  [0.95, 0.95],
  [0.8, 0.8],
  [0.95, 0.85],
  [0.95, 0.75],
  [0.95, 0.65],
  [1, 0.5],
];

/**
 * Drops too small for the default cap to decide most runs, each with a cap that gives it about 80–95 %
 * power: a design's savings are compared where it has the power to find the drop.
 */
export const POWERED_CASES: { maxPairs: number; cases: [number, number][] }[] = [
  { maxPairs: 100, cases: [[0.95, 0.75]] },
  { maxPairs: 250, cases: [[0.95, 0.85]] },
];

export function compareRows(
  runs: number,
  random: (seed: number) => Random,
  alpha: number,
  design: { maxPairs: number; cases: [number, number][] } = { maxPairs: 40, cases: DEFAULT_CASES },
): CompareRow[] {
  const rule: PairedRule = { alpha, margin: 0.1, maxPairs: design.maxPairs };
  return design.cases.map(([pOld, pNew], i) => {
    const next = random(5200 + i);
    const outcomes = Array.from({ length: runs }, () => run(pOld, pNew, rule, next));
    const share = (d: string) => outcomes.filter((o) => o.decision === d).length / runs;
    const meanPairs = outcomes.reduce((sum, o) => sum + o.pairs, 0) / runs;
    const unchanged = pOld === pNew;
    const power = share("regressed");
    const fixed = unchanged || power === 0 ? null : fixedCalls(pOld, pNew, power, alpha, next);
    const fixedPower = fixed === null ? null : fisherPower(pOld, pNew, fixed, alpha, runs, next);
    return {
      max_pairs: rule.maxPairs,
      bet: regressedBet(rule),
      old_rate: pOld,
      new_rate: pNew,
      regressed: r4(power),
      no_worse: r4(share("no_worse")),
      inconclusive: r4(share("inconclusive")),
      regressed_any_look: unchanged
        ? r4(Array.from({ length: runs }, () => everRegressed(pOld, rule, next)).filter(Boolean).length / runs)
        : null,
      mean_pairs: r4(meanPairs),
      fixed_calls_per_side: fixed,
      fixed_power: fixedPower === null ? null : r4(fixedPower),
      calls_saved: fixed === null ? null : r4(1 - (2 * meanPairs) / (2 * fixed)),
    };
  });
}

const r4 = (x: number) => Math.round(x * 10_000) / 10_000;
const pct = (x: number) => `${(x * 100).toFixed(1)} %`;

export function compareTable(rows: readonly CompareRow[], runs: number, alpha: number): string[] {
  return [
    `sequential comparison (α ${alpha}, margin 0.1, ${PAIRS_PER_ROUND} pairs a round; ${runs.toLocaleString("en")} simulated runs per row)`,
    "",
    "| max_pairs (bet) | old → new pass rate | regressed | no worse | inconclusive | false regression at any look to the cap | mean pairs | Fisher of equal power: calls a side (its power) | calls saved |",
    "|---|---|---|---|---|---|---|---|---|",
    ...rows.map(
      (r) =>
        `| ${r.max_pairs} (${r.bet}) | ${r.old_rate} → ${r.new_rate} | ${pct(r.regressed)} | ${pct(r.no_worse)} | ${pct(r.inconclusive)} | ${r.regressed_any_look === null ? "–" : pct(r.regressed_any_look)} | ${r.mean_pairs.toFixed(1)} | ${r.fixed_calls_per_side === null ? "–" : `${r.fixed_calls_per_side} (${pct(r.fixed_power ?? 0)})`} | ${r.calls_saved === null ? "–" : pct(r.calls_saved)} |`,
    ),
  ];
}
