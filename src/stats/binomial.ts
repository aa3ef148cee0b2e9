// Counting passes: the early decision of a fixed number of repeats, τ-bench's unbiased pass^k, and
// the Wilson score interval. Pure functions, no I/O.

/** ln C(n, k), exact enough for any n a test run reaches (sums of logs; n ≤ a few thousand). */
export function logChoose(n: number, k: number): number {
  if (k < 0 || k > n) return Number.NEGATIVE_INFINITY;
  const small = Math.min(k, n - k);
  let sum = 0;
  for (let i = 1; i <= small; i++) sum += Math.log(n - small + i) - Math.log(i);
  return sum;
}

export type FixedDecision = "passed" | "failed" | "continue";

/**
 * The verdict of `iterations: N, min_pass: k` as soon as it cannot change: passed once k calls
 * passed, failed once more than N − k failed (the remaining calls could not make up for it), else
 * continue. Curtailment: the verdict is exactly the one all N calls give, with no error added.
 */
export function fixedDecision(passes: number, failures: number, planned: number, minPass: number): FixedDecision {
  if (passes >= minPass) return "passed";
  if (failures > Math.max(0, planned - minPass)) return "failed";
  return "continue";
}

/**
 * pass^k — the chance that k independent calls all pass — estimated without bias from c passes in
 * n calls: C(c, k) / C(n, k) (τ-bench, Yao et al. 2024). pass^1 is the pass rate. Null for k > n.
 */
export function passHatK(passes: number, n: number, k: number): number | null {
  if (!Number.isInteger(k) || k < 1 || k > n || passes < 0 || passes > n) return null;
  let value = 1;
  for (let i = 0; i < k; i++) value *= (passes - i) / (n - i);
  return Math.max(0, value);
}

/** pass^k for k = 1 … n, rounded to 4 places. */
export function passHatKs(passes: number, n: number): { k: number; value: number }[] {
  return Array.from({ length: n }, (_, i) => ({ k: i + 1, value: round4(passHatK(passes, n, i + 1) ?? 0) }));
}

export const round4 = (x: number) => Math.round(x * 10_000) / 10_000;

/** The Wilson score interval of `passes` of `n` at z (1.96: two-sided 95 %); null for no trials. */
export function wilsonInterval(passes: number, n: number, z = 1.959964): { low: number; high: number } | null {
  if (n <= 0) return null;
  const p = passes / n;
  const z2 = z * z;
  const denominator = 1 + z2 / n;
  const center = (p + z2 / (2 * n)) / denominator;
  const half = (z / denominator) * Math.sqrt((p * (1 - p)) / n + z2 / (4 * n * n));
  return { low: Math.max(0, center - half), high: Math.min(1, center + half) };
}
