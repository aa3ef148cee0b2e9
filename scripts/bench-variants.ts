// `npm run bench -- --variants`: `agent-iac try`'s design measured by simulation (the pure decision
// of src/variants, no calls): three variants beside a base in rounds of one pair per running
// variant, each decided by the sequential tests with Holm across the variants and stopped once
// decided. Reported per case: each variant's verdicts, the calls the run used (the base's calls
// and every variant's) per decided variant, against the fixed-size design of the same power:
// Fisher's one-sided test at Holm's strictest level (α / 3) with as many calls a side as give at
// least the sequential design's power to find the worse variant, placed on all four sides.
import { look, standing } from "../src/variants/decide.ts";
import { fixedCalls } from "./bench-compare.ts";
import { random } from "./bench-drift.ts";

const RUNS = 2_000;
const ALPHA = 0.05;
const RULE = { alpha: ALPHA, margin: 0.1, maxPairs: 60 };

/** Base and variants' true pass rates. */
const CASES: { base: number; variants: number[] }[] = [
  { base: 0.95, variants: [0.45, 0.95, 0.95] },
  { base: 0.95, variants: [0.65, 0.95, 0.95] },
  { base: 0.95, variants: [0.75, 0.95, 1] },
];

export type VariantsRow = {
  base: number;
  variants: number[];
  /** Per variant: the share of runs ending worse, no worse, better, inconclusive. */
  verdicts: Record<string, number>[];
  mean_calls: number;
  /** The worse variant, where found worse: mean pairs to its verdict (its calls and the base's beside it: 2 × pairs). */
  worse_mean_pairs: number | null;
  decided_per_run: number;
  calls_per_decided_variant: number;
  fixed_calls_per_side: number;
  fixed_calls: number;
  fixed_calls_per_variant: number;
  calls_saved: number;
};

function oneRun(c: (typeof CASES)[number], next: () => number) {
  const standings = c.variants.map((_, i) => standing(String(i)));
  let calls = 0;
  for (let round = 0; round < RULE.maxPairs; round++) {
    const running = standings.filter((s) => s.verdict === "undecided");
    if (running.length === 0) break;
    const base = next() < c.base;
    calls += 1 + running.length;
    for (const s of running) s.pairs.push({ old: base, new: next() < (c.variants[Number(s.name)] as number) });
    look(standings, RULE);
  }
  for (const s of standings) if (s.verdict === "undecided") s.verdict = "inconclusive";
  return { calls, verdicts: standings.map((s) => s.verdict), after: standings.map((s) => s.decidedAfter ?? null) };
}

export function variantsRows(): VariantsRow[] {
  return CASES.map((c, i) => {
    const next = random(6300 + i);
    const runs = Array.from({ length: RUNS }, () => oneRun(c, next));
    const share = (v: number, verdict: string) => runs.filter((r) => r.verdicts[v] === verdict).length / RUNS;
    const verdicts = c.variants.map((_, v) =>
      Object.fromEntries(["worse", "no_worse", "better", "inconclusive"].map((w) => [w, r4(share(v, w))])),
    );
    const meanCalls = runs.reduce((s, r) => s + r.calls, 0) / RUNS;
    const decided = runs.reduce((s, r) => s + r.verdicts.filter((v) => v !== "inconclusive").length, 0) / RUNS;
    // The worse variant's power decides the fixed design's size (Holm's strictest level, α / 3).
    const worst = c.variants.indexOf(Math.min(...c.variants));
    const power = Math.max(0.5, share(worst, "worse"));
    const n = fixedCalls(c.base, c.variants[worst] as number, power, ALPHA / c.variants.length, next);
    const fixed = n * (c.variants.length + 1);
    const found = runs.filter((r) => r.verdicts[worst] === "worse").map((r) => r.after[worst] ?? 0);
    return {
      base: c.base,
      variants: c.variants,
      verdicts,
      mean_calls: r4(meanCalls),
      worse_mean_pairs: found.length > 0 ? r4(found.reduce((a, b) => a + b, 0) / found.length) : null,
      decided_per_run: r4(decided),
      calls_per_decided_variant: r4(meanCalls / Math.max(decided, 1e-9)),
      fixed_calls_per_side: n,
      fixed_calls: fixed,
      fixed_calls_per_variant: r4(fixed / c.variants.length),
      calls_saved: r4(1 - meanCalls / fixed),
    };
  });
}

const r4 = (x: number) => Math.round(x * 10_000) / 10_000;
const pct = (x: number) => `${(x * 100).toFixed(1)} %`;

export function variantsTable(rows: readonly VariantsRow[]): string {
  return [
    `try: 3 variants beside the base (α ${ALPHA}, Holm across variants, margin ${RULE.margin}, max_pairs ${RULE.maxPairs}; ${RUNS.toLocaleString("en")} simulated runs per row)`,
    "",
    "| base → variants pass rate | verdicts per variant (worse / no worse / better / inconclusive) | worse variant: mean pairs to worse (fixed: calls a side) | mean calls | decided variants per run | calls per decided variant | fixed design of equal power: calls a side, all sides (per variant) | calls saved |",
    "|---|---|---|---|---|---|---|---|",
    ...rows.map(
      (r) =>
        `| ${r.base} → ${r.variants.join(", ")} | ${r.verdicts.map((v) => `${pct(v.worse ?? 0)} / ${pct(v.no_worse ?? 0)} / ${pct(v.better ?? 0)} / ${pct(v.inconclusive ?? 0)}`).join("; ")} | ${r.worse_mean_pairs === null ? "–" : r.worse_mean_pairs.toFixed(1)} (${r.fixed_calls_per_side}) | ${r.mean_calls.toFixed(1)} | ${r.decided_per_run.toFixed(2)} | ${r.calls_per_decided_variant.toFixed(1)} | ${r.fixed_calls_per_side}, ${r.fixed_calls} (${r.fixed_calls_per_variant.toFixed(1)}) | ${pct(r.calls_saved)} |`,
    ),
    "",
  ].join("\n");
}
