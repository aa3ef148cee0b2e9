// Whether old versus new differs with evidence, across a run's scenarios: where both sides have at
// least two completed calls of a scenario, its pass rates by a one-sided Fisher exact test and its
// per-turn response latencies by a one-sided Mann–Whitney U test, each family Holm-corrected at α
// (src/stats). A scenario with a single call on a side keeps flip semantics, labelled "flip".
import { type CallResult, evaluated, type ScenarioComparison } from "../results/index.ts";
import { fisherLower, hodgesLehmann, holm, mannWhitneyGreater, rateDifference, round4 } from "../stats/index.ts";

export type Evidence = NonNullable<ScenarioComparison["evidence"]>;

export const DEFAULT_ALPHA = 0.05;

type Sides = { old: readonly CallResult[]; new: readonly CallResult[] };

const completed = (calls: readonly CallResult[]) => calls.filter((c) => evaluated(c.outcome.kind));
const rate = (calls: readonly CallResult[]) => {
  const done = completed(calls);
  const passes = done.filter((c) => c.outcome.kind === "passed").length;
  return { passes, calls: done.length, value: done.length > 0 ? round4(passes / done.length) : null };
};

/** The evidence of each scenario's comparison, in the order given (Holm over the run's scenarios). */
export function regressionEvidence(scenarios: readonly Sides[], alpha = DEFAULT_ALPHA): Evidence[] {
  const rates = scenarios.map((s) => ({ old: rate(s.old), new: rate(s.new) }));
  const tested = rates.map((r) => r.old.calls >= 2 && r.new.calls >= 2);
  const pValues = rates.map((r, i) =>
    tested[i] ? fisherLower(r.old.passes, r.old.calls, r.new.passes, r.new.calls) : null,
  );
  const adjusted = adjust(pValues);
  const turns = (calls: readonly CallResult[]) => completed(calls).flatMap((c) => c.latency.response_ms);
  const latencyP = scenarios.map((s, i) => (tested[i] ? mannWhitneyGreater(turns(s.old), turns(s.new)) : null));
  const latencyAdjusted = adjust(latencyP);
  return scenarios.map((s, i): Evidence => {
    const r = rates[i] as (typeof rates)[number];
    const p = pValues[i] ?? null;
    const adj = adjusted[i] ?? null;
    const lp = latencyP[i] ?? null;
    const ladj = latencyAdjusted[i] ?? null;
    const shift = tested[i] ? hodgesLehmann(turns(s.old), turns(s.new)) : null;
    const difference =
      r.old.calls > 0 && r.new.calls > 0 ? rateDifference(r.old.passes, r.old.calls, r.new.passes, r.new.calls) : null;
    return {
      method: tested[i] ? "exact" : "flip",
      alpha,
      old_rate: r.old,
      new_rate: r.new,
      difference: difference
        ? { value: round4(difference.value), low: round4(difference.low), high: round4(difference.high) }
        : null,
      p_value: p === null ? null : sig4(p),
      adjusted_p_value: adj === null ? null : sig4(adj),
      significant: adj !== null && adj <= alpha,
      latency:
        lp === null
          ? null
          : {
              shift_ms: shift === null ? null : Math.round(shift),
              p_value: sig4(lp),
              adjusted_p_value: sig4(ladj ?? 1),
              significant: (ladj ?? 1) <= alpha,
              old_turns: turns(s.old).length,
              new_turns: turns(s.new).length,
            },
    };
  });
}

/** Four significant digits: a p-value of 1e-5 must not read as 0. */
const sig4 = (x: number) => Number(x.toPrecision(4));

/** Holm over the tests that were made; null where none was. */
function adjust(pValues: readonly (number | null)[]): (number | null)[] {
  const made = pValues.flatMap((p, i) => (p === null ? [] : [{ p, i }]));
  const adjusted = holm(made.map((m) => m.p));
  const out: (number | null)[] = pValues.map(() => null);
  made.forEach((m, j) => {
    out[m.i] = adjusted[j] ?? 1;
  });
  return out;
}
