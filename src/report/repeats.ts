// The words every surface uses for a scenario's repeats (terminal, JUnit, HTML, job summary): the
// pass^k shown (`pass^3 0.61`), the early decision (`decided after 6 of 10, 4 calls not needed`)
// the sequential test, and a comparison's evidence (rates, difference, adjusted p-value, latency
// shift). One place, so each renderer adds a line, not a rule.
import { comparisonCallsSaved, figure, type ScenarioComparison, type ScenarioSummary } from "../results/index.ts";

type Evidence = NonNullable<ScenarioComparison["evidence"]>;

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
  const after = s.decided_after ?? s.iterations;
  // Decided at the last planned call is no early decision: nothing to say.
  if ((s.decided_after == null && saved === 0) || after >= planned) return "";
  return `decided after ${after} of ${planned}${saved > 0 ? `, ${saved} call${saved === 1 ? "" : "s"} not needed` : ""}`;
}

/** `sequential test: pass_rate 0.9 ± 0.05 at confidence 0.95, cap 40; Λ 2.10 (pass ≥ 3.00, fail ≤ −3.00)`. */
export function sequentialText(s: ScenarioSummary): string {
  const q = s.sequential;
  if (!q) return "";
  const rule = `pass_rate ${q.pass_rate} ± ${q.margin} at confidence ${q.confidence}, cap ${q.max_iterations}`;
  return `sequential test: ${rule}; Λ ${fixed2(q.log_likelihood_ratio)} (pass ≥ ${fixed2(q.pass_boundary)}, fail ≤ ${fixed2(q.fail_boundary)})`;
}

const pct = (x: number) => `${Math.round(x * 100)} %`;
const points = (x: number) => `${x > 0 ? "+" : x < 0 ? "−" : "±"}${Math.abs(Math.round(x * 100))}`;
const pText = (p: number) => (p < 0.0001 ? p.toExponential(1) : p.toFixed(4));

/** A comparison's evidence in words: the rates, the difference with its interval, the adjusted p-value; the latency shift. */
export function evidenceText(e: Evidence): string[] {
  const side = (r: Evidence["old_rate"]) => `${r.passes}/${r.calls}${r.value === null ? "" : ` (${pct(r.value)})`}`;
  const rates = `pass rate old ${side(e.old_rate)} → new ${side(e.new_rate)}`;
  if (e.method === "flip") return [`${rates}: single calls, compared as a flip (no test)`];
  const d = e.difference;
  const diff = d ? `, ${points(d.value)} points (95 % CI ${points(d.low)} to ${points(d.high)})` : "";
  const verdict = e.significant ? "significant" : "not enough evidence";
  const lines = [
    `${rates}${diff}; adjusted p ${pText(e.adjusted_p_value ?? 1)} (one-sided Fisher, Holm, α ${e.alpha}): ${verdict}`,
  ];
  const l = e.latency;
  if (l) {
    const shift = l.shift_ms === null ? "" : `${l.shift_ms > 0 ? "+" : ""}${l.shift_ms} ms`;
    lines.push(
      `response latency shift ${shift} (Hodges–Lehmann, ${l.old_turns} → ${l.new_turns} turns); adjusted p ${pText(l.adjusted_p_value)} (one-sided Mann–Whitney, Holm): ${l.significant ? "significantly slower" : "not significantly slower"}`,
    );
  }
  return lines;
}

/** `6 pairs placed interleaved (old and new together), order per pair: ON NO ON ON NO NO`. */
function pairingText(c: Pick<ScenarioComparison, "pairs">): string {
  const pairs = c.pairs ?? [];
  if (pairs.length === 0) return "";
  const order = pairs.map((p) => (p === "old_first" ? "ON" : "NO")).join(" ");
  return `${pairs.length} pair${pairs.length === 1 ? "" : "s"} placed interleaved (old and new together), order per pair: ${order}`;
}

const wealthText = (w: number) => (w >= 100 ? figure(w) : fixed2(w));

/**
 * `sequential comparison: decided after 6 pairs of 40 (68 calls saved); regressed, bet 21.3 ≥ 20 (α 0.05); no worse by 0.1: bet 0.41`.
 */
function sequentialComparisonText(c: Pick<ScenarioComparison, "sequential" | "outcome">): string[] {
  const q = c.sequential;
  if (!q) return [];
  const threshold = figure(1 / q.alpha);
  const saved = comparisonCallsSaved(c);
  const when =
    c.outcome === "inconclusive"
      ? `undecided at the cap of ${q.max_pairs} pairs: inconclusive`
      : q.pairs < q.max_pairs
        ? `decided after ${q.pairs} pair${q.pairs === 1 ? "" : "s"} of ${q.max_pairs} (${saved} calls saved)`
        : `decided at the cap of ${q.max_pairs} pairs`;
  const lines = [
    `sequential comparison: ${when}; α ${q.alpha}, margin ${q.margin} (tests by betting, decided at ${threshold}: regressed ${wealthText(q.regressed_wealth)}, no worse ${wealthText(q.no_worse_wealth)})`,
  ];
  if (q.slower_wealth !== null) {
    lines.push(
      `response latency: ${q.slower ? "slower on the new version, with evidence" : "not shown slower"} (bet on each pair's sign ${wealthText(q.slower_wealth)}, decided at ${threshold})`,
    );
  }
  return lines;
}

/** Everything a comparison's outcome stands on, in words: the pairing, the sequential test, the fixed test. */
export function comparisonEvidence(c: ScenarioComparison): string[] {
  return [
    ...[pairingText(c)].filter(Boolean),
    ...sequentialComparisonText(c),
    ...(c.evidence ? evidenceText(c.evidence) : []),
  ];
}
