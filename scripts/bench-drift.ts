// The drift test measured by simulation (part of `npm run bench -- --decisions`): a baseline of B
// calls drawn at a true rate p is blessed; the drift test then places calls at rate q in rounds of
// ROUND until drifted, holding or its cap. When nothing changed (q = p) a false "drifted" must stay
// within α, looked at after every round and after every single call; at a drop it reports the power
// (drifted) and the mean calls used against the fixed-size design of the same power: the fewest
// calls n whose exact one-sided test (drifted when the passes are at most c, P(≤ c | reference) ≤
// α/2) against the baseline's Clopper–Pearson lower bound at α/2 (a union bound: α in all) finds
// the drop as often, per baseline drawn. The comparator is told the drop; the drift test is not.
import {
  clopperPearsonLower,
  type DriftRule,
  driftDecision,
  driftSequentialRule,
  logChoose,
  type SequentialRule,
  seededRandom,
} from "../src/stats/index.ts";

const RUNS = 10_000;
const ROUND = 4;
const RULE: DriftRule = { alpha: 0.05, margin: 0.1, maxCalls: 40 };
/** The power a drop needs for its calls to be compared with the fixed design's. */
const POWER = 0.8;

/** The seeded generator of every bench (src/stats): the same numbers every run. */
export const random = seededRandom;

export type DriftRow = {
  baseline_calls: number;
  baseline_rate: number;
  now_rate: number;
  /** Drifted, looking after every round of ROUND calls (as `drift --concurrency 4` does). */
  drifted: number;
  /** Drifted at any look, looking after every call: the worst the looks can do. */
  drifted_any_call: number;
  holding: number;
  inconclusive: number;
  mean_calls: number;
  /** The fixed design of the same power at this rate, averaged over the baselines drawn (null: no drop). */
  fixed_calls: number | null;
  /** 1 − mean calls / fixed calls, where the drift test has ≥ POWER power at this drop (else null). */
  calls_saved: number | null;
};

type Run = { decision: "drifted" | "holding" | "inconclusive"; calls: number; anyCall: boolean };

function run(rule: SequentialRule, q: number, next: () => number): Run {
  let [passes, failures, anyCall] = [0, 0, false];
  for (;;) {
    const round = Math.min(ROUND, rule.maxIterations - passes - failures);
    let decision: ReturnType<typeof driftDecision> = "continue";
    for (let i = 0; i < round; i++) {
      if (next() < q) passes++;
      else failures++;
      anyCall ||= driftDecision(passes, failures, rule) === "drifted";
    }
    decision = driftDecision(passes, failures, rule);
    if (decision !== "continue") {
      // After the decision no more calls are placed: nothing later can be looked at.
      return { decision, calls: passes + failures, anyCall };
    }
  }
}

/** P(X ≤ c) for X ~ Binomial(n, p), c = 0 … n. */
function lowerTails(n: number, p: number): number[] {
  const tails: number[] = [];
  let sum = 0;
  for (let x = 0; x <= n; x++) {
    sum += Math.exp(logChoose(n, x) + x * Math.log(p) + (n - x) * Math.log(1 - p));
    tails.push(sum);
  }
  return tails;
}

/** The power at rate q of the exact test of n calls at α/2 against `reference` (0 when no c qualifies). */
function fixedPower(n: number, reference: number, q: number): number {
  const c = lowerTails(n, reference).findLastIndex((t) => t <= RULE.alpha / 2);
  return c < 0 ? 0 : (lowerTails(n, q)[c] ?? 0);
}

/**
 * The fewest calls whose exact test at α/2 against `reference` says drifted at rate q with `power`:
 * doubled until it is reached, then bisected (the power grows with n but for the lattice's small
 * steps, so this is the fewest up to a call or two).
 */
function fixedCalls(reference: number, q: number, power: number, limit = 4096): number | null {
  let high = 1;
  while (fixedPower(high, reference, q) < power) {
    high *= 2;
    if (high > limit) return null;
  }
  let low = Math.floor(high / 2);
  while (high - low > 1) {
    const mid = Math.floor((low + high) / 2);
    if (fixedPower(mid, reference, q) >= power) high = mid;
    else low = mid;
  }
  return high;
}

function row(baselineCalls: number, p: number, q: number, seed: number): DriftRow {
  const next = random(seed);
  const runs: Run[] = [];
  const references: number[] = [];
  for (let i = 0; i < RUNS; i++) {
    let passes = 0;
    for (let c = 0; c < baselineCalls; c++) if (next() < p) passes++;
    const rule = driftSequentialRule({ calls: baselineCalls, passes }, RULE);
    if (!rule) {
      runs.push({ decision: "inconclusive", calls: 0, anyCall: false });
      continue;
    }
    // The fixed design's reference: the baseline's bound at α/2, whatever level the drift test uses.
    references.push(clopperPearsonLower(passes, baselineCalls, RULE.alpha / 2));
    runs.push(run(rule, q, next));
  }
  const share = (d: Run["decision"]) => runs.filter((r) => r.decision === d).length / runs.length;
  const meanCalls = runs.reduce((sum, r) => sum + r.calls, 0) / runs.length;
  const drifted = share("drifted");
  // The fixed design of the same power, per baseline drawn (cached by its reference).
  const cache = new Map<number, number | null>();
  const fixed =
    q < p && drifted > 0
      ? references.map((r) => {
          if (!cache.has(r)) cache.set(r, fixedCalls(r, q, drifted));
          return cache.get(r) ?? null;
        })
      : [];
  const known = fixed.filter((n): n is number => n !== null);
  const fixedMean = known.length === 0 ? null : known.reduce((a, b) => a + b, 0) / known.length;
  return {
    baseline_calls: baselineCalls,
    baseline_rate: p,
    now_rate: q,
    drifted,
    drifted_any_call: runs.filter((r) => r.anyCall).length / runs.length,
    holding: share("holding"),
    inconclusive: share("inconclusive"),
    mean_calls: meanCalls,
    fixed_calls: fixedMean,
    calls_saved: fixedMean !== null && drifted >= POWER ? 1 - meanCalls / fixedMean : null,
  };
}

export type DriftBench = {
  runs_per_row: number;
  round: number;
  rule: DriftRule;
  rows: DriftRow[];
  targets: { false_drifted_within_alpha: boolean; fewer_calls_at_least_30_percent: boolean };
};

export function driftBench(): DriftBench {
  const rows: DriftRow[] = [];
  let seed = 6100;
  for (const baselineCalls of [20, 40]) {
    for (const p of [0.98, 0.95, 0.9]) {
      for (const drop of [0, 0.2, 0.3, 0.5])
        rows.push(row(baselineCalls, p, Math.round((p - drop) * 100) / 100, seed++));
    }
  }
  // The simulation's own error: two standard errors of a rate at α over RUNS runs.
  const tolerance = 2 * Math.sqrt((RULE.alpha * (1 - RULE.alpha)) / RUNS);
  const unchanged = rows.filter((r) => r.now_rate === r.baseline_rate);
  const saved = rows.flatMap((r) => (r.calls_saved === null ? [] : [r.calls_saved]));
  return {
    runs_per_row: RUNS,
    round: ROUND,
    rule: RULE,
    rows,
    targets: {
      false_drifted_within_alpha: unchanged.every(
        (r) => r.drifted <= RULE.alpha + tolerance && r.drifted_any_call <= RULE.alpha + tolerance,
      ),
      fewer_calls_at_least_30_percent: saved.length > 0 && saved.every((x) => x >= 0.3),
    },
  };
}

const pct = (x: number) => `${(x * 100).toFixed(1)} %`;

export function driftTable(d: DriftBench): string[] {
  return [
    `drift against a blessed baseline (${d.runs_per_row.toLocaleString("en")} simulated runs per row; α ${d.rule.alpha}, margin ${d.rule.margin}, cap ${d.rule.maxCalls}, rounds of ${d.round})`,
    "",
    "| baseline calls | baseline rate | rate now | drifted (each round / any call) | holding | inconclusive | mean calls | fixed design's calls, same power | fewer calls |",
    "|---|---|---|---|---|---|---|---|---|",
    ...d.rows.map(
      (r) =>
        `| ${r.baseline_calls} | ${r.baseline_rate} | ${r.now_rate} | ${pct(r.drifted)} / ${pct(r.drifted_any_call)} | ${pct(r.holding)} | ${pct(r.inconclusive)} | ${r.mean_calls.toFixed(1)} | ${r.fixed_calls === null ? "–" : r.fixed_calls.toFixed(1)} | ${r.calls_saved === null ? "–" : pct(r.calls_saved)} |`,
    ),
    "",
    `targets: false drifted ≤ α when nothing changed, at every look: ${d.targets.false_drifted_within_alpha ? "met" : "MISSED"}; ≥ 30 % fewer calls than the fixed design at every drop with ≥ ${pct(POWER)} power: ${d.targets.fewer_calls_at_least_30_percent ? "met" : "MISSED"}`,
    "",
  ];
}
