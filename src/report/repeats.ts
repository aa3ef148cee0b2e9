// The words every surface uses for a scenario's repeats (terminal, JUnit, HTML, job summary): the
// pass^k shown (`pass^3 0.61`), the early decision (`decided after 6 of 10, 4 calls not needed`)
// and the sequential test. One place, so each renderer adds a line, not a rule.
import type { ScenarioSummary } from "./schema.ts";

/** The pass^k a surface shows: the required k, else k = 3 (or the calls, when fewer); none for one call. */
export function shownPassK(s: ScenarioSummary): { k: number; value: number } | undefined {
  const list = s.pass_k ?? [];
  if (list.length === 0) return undefined;
  const k = s.pass_k_required?.k ?? Math.min(3, list.length);
  return list.find((p) => p.k === k);
}

const fixed2 = (x: number) => x.toFixed(2);

/** `pass^3 0.61`, with a requirement `pass^4 0.72 (needs ≥ 0.8: not met)`; empty when not shown. */
export function passKText(s: ScenarioSummary): string {
  const required = s.pass_k_required;
  if (required) {
    const value = required.value === null ? `n/a (fewer than ${required.k} calls)` : fixed2(required.value);
    return `pass^${required.k} ${value} (needs ≥ ${required.min}: ${required.met ? "met" : "not met"})`;
  }
  const shown = shownPassK(s);
  return shown ? `pass^${shown.k} ${fixed2(shown.value)}` : "";
}

/** `decided after 6 of 10, 4 calls not needed`; empty when every planned call was placed. */
export function decidedText(s: ScenarioSummary): string {
  const planned = s.planned_iterations ?? s.iterations;
  const saved = s.calls_saved ?? 0;
  if (s.decided_after == null && saved === 0) return "";
  const after = s.decided_after ?? s.iterations;
  return `decided after ${after} of ${planned}${saved > 0 ? `, ${saved} call${saved === 1 ? "" : "s"} not needed` : ""}`;
}

/** `sequential test: pass_rate 0.9 ± 0.05 at confidence 0.95, cap 40; Λ 2.10 (pass ≥ 3.00, fail ≤ −3.00)`. */
export function sequentialText(s: ScenarioSummary): string {
  const q = s.sequential;
  if (!q) return "";
  const rule = `pass_rate ${q.pass_rate} ± ${q.margin} at confidence ${q.confidence}, cap ${q.max_iterations}`;
  return `sequential test: ${rule}; Λ ${fixed2(q.log_likelihood_ratio)} (pass ≥ ${fixed2(q.pass_boundary)}, fail ≤ ${fixed2(q.fail_boundary)})`;
}
