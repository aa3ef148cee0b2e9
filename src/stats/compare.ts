// Old versus new with evidence: a one-sided exact test of pass rates (Fisher's), the difference of
// two rates with Newcombe's interval, a one-sided rank test of latencies (Mann–Whitney U) with the
// Hodges–Lehmann shift, and Holm's step-down correction across a run's scenarios. Pure functions.
//
// Error rates: each test's p-value is valid (P(p ≤ a) ≤ a under the null: equal pass rates, or
// identically distributed latencies); Holm's correction keeps the chance of flagging any scenario
// of the run when none regressed (the family-wise error rate) at or below α, under any dependence.
import { logChoose, wilsonInterval } from "./binomial.ts";

/**
 * Fisher's exact test, one-sided: the p-value that the new side's pass rate is lower than the old
 * side's, given `oldPasses` of `oldN` and `newPasses` of `newN`. Conditional on the total passes,
 * the new side's passes are hypergeometric; p = P(X ≤ newPasses). Conservative (exact, discrete).
 */
export function fisherLower(oldPasses: number, oldN: number, newPasses: number, newN: number): number {
  const total = oldN + newN;
  const passes = oldPasses + newPasses;
  const low = Math.max(0, passes - oldN);
  const denominator = logChoose(total, newN);
  let p = 0;
  for (let x = low; x <= newPasses; x++) {
    p += Math.exp(logChoose(passes, x) + logChoose(total - passes, newN - x) - denominator);
  }
  return Math.min(1, p);
}

/** Holm's step-down adjusted p-values, in the order given (reject where adjusted ≤ α). */
export function holm(pValues: readonly number[]): number[] {
  const m = pValues.length;
  const order = pValues.map((p, i) => ({ p, i })).sort((a, b) => a.p - b.p);
  const adjusted = new Array<number>(m).fill(1);
  let running = 0;
  order.forEach(({ p, i }, rank) => {
    running = Math.max(running, Math.min(1, (m - rank) * p));
    adjusted[i] = running;
  });
  return adjusted;
}

/**
 * new − old pass rate with Newcombe's hybrid score interval (his method 10, from the two Wilson
 * intervals; 95 % two-sided by default).
 */
export function rateDifference(
  oldPasses: number,
  oldN: number,
  newPasses: number,
  newN: number,
  z = 1.959964,
): { value: number; low: number; high: number } {
  const p1 = oldPasses / oldN;
  const p2 = newPasses / newN;
  const w1 = wilsonInterval(oldPasses, oldN, z) ?? { low: 0, high: 1 };
  const w2 = wilsonInterval(newPasses, newN, z) ?? { low: 0, high: 1 };
  const d = p2 - p1;
  return {
    value: d,
    low: d - Math.sqrt((p2 - w2.low) ** 2 + (w1.high - p1) ** 2),
    high: d + Math.sqrt((w2.high - p2) ** 2 + (p1 - w1.low) ** 2),
  };
}

/** Ranks 1…n with ties given their average rank. */
function ranks(values: readonly number[]): { ranks: number[]; tieTerm: number } {
  const order = values.map((v, i) => ({ v, i })).sort((a, b) => a.v - b.v);
  const out = new Array<number>(values.length).fill(0);
  let tieTerm = 0;
  for (let start = 0; start < order.length; ) {
    let end = start;
    while (end + 1 < order.length && order[end + 1]?.v === order[start]?.v) end++;
    const t = end - start + 1;
    tieTerm += t ** 3 - t;
    for (let j = start; j <= end; j++) out[(order[j] as { i: number }).i] = (start + end + 2) / 2;
    start = end + 1;
  }
  return { ranks: out, tieTerm };
}

const exactCache = new Map<string, Float64Array>();

/** P(U ≥ u) for u = 0 … m·n under the null, no ties (the exact distribution; cached per size). */
function exactUpperTail(m: number, n: number): Float64Array {
  const key = `${m},${n}`;
  const cached = exactCache.get(key);
  if (cached) return cached;
  // f[i][j] is the distribution of U for i new and j old values; the largest value is new with
  // chance i/(i+j) (it then exceeds all j old ones) or old (it adds nothing).
  let previous: Float64Array[] = Array.from({ length: n + 1 }, () => Float64Array.of(1));
  for (let i = 1; i <= m; i++) {
    const row: Float64Array[] = [];
    row[0] = Float64Array.of(1);
    for (let j = 1; j <= n; j++) {
      const dist = new Float64Array(i * j + 1);
      const fromNew = previous[j] as Float64Array;
      const fromOld = row[j - 1] as Float64Array;
      for (let u = 0; u < fromNew.length; u++) dist[u + j] = (dist[u + j] ?? 0) + ((fromNew[u] ?? 0) * i) / (i + j);
      for (let u = 0; u < fromOld.length; u++) dist[u] = (dist[u] ?? 0) + ((fromOld[u] ?? 0) * j) / (i + j);
      row[j] = dist;
    }
    previous = row;
  }
  const dist = previous[n] as Float64Array;
  const tail = new Float64Array(dist.length + 1);
  for (let u = dist.length - 1; u >= 0; u--) tail[u] = (tail[u + 1] ?? 0) + (dist[u] ?? 0);
  exactCache.set(key, tail);
  return tail;
}

/** The standard normal upper tail, P(Z ≥ z) (Abramowitz–Stegun 7.1.26 via erfc; error < 1.5e-7). */
function normalUpper(z: number): number {
  const x = Math.abs(z) / Math.SQRT2;
  const t = 1 / (1 + 0.3275911 * x);
  const poly = t * (0.254829592 + t * (-0.284496736 + t * (1.421413741 + t * (-1.453152027 + t * 1.061405429))));
  const erfc = poly * Math.exp(-x * x);
  return z >= 0 ? erfc / 2 : 1 - erfc / 2;
}

/**
 * Mann–Whitney U, one-sided: the p-value that the new values tend to be larger than the old (a
 * slowdown). Exact without ties when m·n ≤ 2,500; else the normal approximation with tie and
 * continuity corrections. Null when either side has fewer than 2 values.
 */
export function mannWhitneyGreater(oldValues: readonly number[], newValues: readonly number[]): number | null {
  const m = newValues.length;
  const n = oldValues.length;
  if (m < 2 || n < 2) return null;
  const { ranks: r, tieTerm } = ranks([...newValues, ...oldValues]);
  const rankSum = r.slice(0, m).reduce((a, b) => a + b, 0);
  const u = rankSum - (m * (m + 1)) / 2;
  if (tieTerm === 0 && m * n <= 2500) {
    const tail = exactUpperTail(m, n);
    return Math.min(1, tail[Math.ceil(u - 1e-9)] ?? 0);
  }
  const total = m + n;
  const variance = ((m * n) / 12) * (total + 1 - tieTerm / (total * (total - 1)));
  if (variance <= 0) return 1;
  return normalUpper((u - (m * n) / 2 - 0.5) / Math.sqrt(variance));
}

/** The Hodges–Lehmann shift: the median of all new − old differences (ms). Null when a side is empty. */
export function hodgesLehmann(oldValues: readonly number[], newValues: readonly number[]): number | null {
  if (oldValues.length === 0 || newValues.length === 0) return null;
  const diffs = newValues.flatMap((b) => oldValues.map((a) => b - a)).sort((x, y) => x - y);
  const mid = diffs.length / 2;
  return diffs.length % 2 === 1
    ? (diffs[Math.floor(mid)] as number)
    : ((diffs[mid - 1] as number) + (diffs[mid] as number)) / 2;
}
