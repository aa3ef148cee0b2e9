// `npm run bench -- --decisions` (and the end of a full `npm run bench`): how good the decision
// rules of src/stats are, measured. (a) By simulation of the pure functions (10,000 scenarios per
// row, no calls): the false-pass and false-fail rates of the sequential test and of the fixed
// design with the same error rates against their nominal levels, the early decision of fixed
// repeats against the full run's verdict, and the compare tests under the null (no difference):
// per scenario and Holm's family-wise rate. (b) Mean calls per decision of the sequential test
// against that fixed design. (c) One run against the simulator with known failure rates, counting
// the conversations really created and those not needed. (d) Adaptive judge votes (`votes: auto`)
// against fixed 3 and 5 votes at equal flip rates: requests per verdict and wrong verdicts.

import { createClient } from "../src/api/index.ts";
import { type AgentDefinition, loadAgents, type SmokeScenario } from "../src/definitions/index.ts";
import { smokeScenario } from "../src/definitions/schema.ts";
import type { HeldAgent } from "../src/provider/index.ts";
import { startSimulator } from "../src/simulator/index.ts";
import { runSmoke } from "../src/smoke/index.ts";
import {
  DEFAULT_MAX_VOTES,
  defaultMargin,
  fisherLower,
  fixedDecision,
  fixedDesign,
  holm,
  mannWhitneyGreater,
  nextVotes,
  passHatK,
  type SequentialRule,
  sequentialDecision,
  settledVerdict,
} from "../src/stats/index.ts";
import { type CompareRow, compareRows, compareTable, POWERED_CASES } from "./bench-compare.ts";
import { type DriftBench, driftBench, driftTable, random } from "./bench-drift.ts";

const SCENARIOS = 10_000;
/** Runs per row of the comparison's powered designs (caps of 100 and 250 pairs). */
const POWERED_RUNS = 2_000;
/** The power at which a design's calls are compared with the fixed design's (below it most runs end undecided at the cap). */
const COMPARED_POWER = 0.8;
/** Calls per round of a sequential test: the default --concurrency. */
const ROUND = 4;
const ALPHA = 0.05;

type Outcome = { verdict: "passed" | "failed" | "inconclusive"; calls: number };

/** One sequential scenario at a true rate: rounds of ROUND calls until a decision or the cap. */
function sequentialRun(p: number, rule: SequentialRule, next: () => number): Outcome {
  let passes = 0;
  let failures = 0;
  for (;;) {
    const round = Math.min(ROUND, rule.maxIterations - passes - failures);
    for (let i = 0; i < round; i++) {
      if (next() < p) passes++;
      else failures++;
    }
    const d = sequentialDecision(passes, failures, rule);
    if (d !== "continue") return { verdict: d, calls: passes + failures };
  }
}

function fixedRun(p: number, n: number, minPass: number, next: () => number): Outcome {
  let passes = 0;
  for (let i = 0; i < n; i++) if (next() < p) passes++;
  return { verdict: passes >= minPass ? "passed" : "failed", calls: n };
}

const rate = (list: Outcome[], verdict: Outcome["verdict"]) =>
  list.length === 0 ? 0 : list.filter((o) => o.verdict === verdict).length / list.length;
const mean = (values: number[]) => values.reduce((a, b) => a + b, 0) / Math.max(1, values.length);
/** The simulation's standard error of a rate near `p` over n runs. */
const se = (p: number, n: number) => Math.sqrt((p * (1 - p)) / n);
const r4 = (x: number) => Math.round(x * 10_000) / 10_000;

export type SequentialRow = {
  rule: string;
  nominal: number;
  fixed_n: number;
  fixed_min_pass: number;
  cap: number;
  false_pass: { sequential: number; fixed: number };
  false_fail: { sequential: number; fixed: number };
  mean_calls: { at_fail_rate: number; at_pass_rate: number; around: number; fixed: number };
  inconclusive_around: number;
  fewer_calls_around: number;
  fewer_calls_at_boundaries: number;
};

function sequentialRows(): SequentialRow[] {
  const rules = [
    { passRate: 0.9, confidence: 0.95, margin: defaultMargin(0.9) },
    { passRate: 0.8, confidence: 0.95, margin: 0.1 },
    { passRate: 0.7, confidence: 0.95, margin: 0.1 },
    { passRate: 0.9, confidence: 0.9, margin: defaultMargin(0.9) },
  ];
  return rules.map((base, i) => {
    const design = fixedDesign(base);
    if (!design) throw new Error("no fixed design");
    // Capped at the fixed design's size: the sequential test never places more calls.
    const rule: SequentialRule = { ...base, maxIterations: design.n };
    const next = random(1000 + i);
    const p0 = base.passRate - base.margin;
    const p1 = base.passRate + base.margin;
    const atFail = Array.from({ length: SCENARIOS }, () => sequentialRun(p0, rule, next));
    const atPass = Array.from({ length: SCENARIOS }, () => sequentialRun(p1, rule, next));
    const fixedFail = Array.from({ length: SCENARIOS }, () => fixedRun(p0, design.n, design.minPass, next));
    const fixedPass = Array.from({ length: SCENARIOS }, () => fixedRun(p1, design.n, design.minPass, next));
    // True rates spread around the threshold: uniform on θ ± 2δ.
    const around = Array.from({ length: SCENARIOS }, () => {
      const p = Math.min(0.999, base.passRate + (next() * 4 - 2) * base.margin);
      return sequentialRun(p, rule, next);
    });
    const meanAround = mean(around.map((o) => o.calls));
    const meanBoundaries = (mean(atFail.map((o) => o.calls)) + mean(atPass.map((o) => o.calls))) / 2;
    return {
      rule: `pass_rate ${base.passRate} ± ${base.margin}, confidence ${base.confidence}`,
      nominal: r4(1 - base.confidence),
      fixed_n: design.n,
      fixed_min_pass: design.minPass,
      cap: design.n,
      false_pass: { sequential: r4(rate(atFail, "passed")), fixed: r4(rate(fixedFail, "passed")) },
      false_fail: { sequential: r4(rate(atPass, "failed")), fixed: r4(rate(fixedPass, "failed")) },
      mean_calls: {
        at_fail_rate: r4(mean(atFail.map((o) => o.calls))),
        at_pass_rate: r4(mean(atPass.map((o) => o.calls))),
        around: r4(meanAround),
        fixed: design.n,
      },
      inconclusive_around: r4(rate(around, "inconclusive")),
      fewer_calls_around: r4(1 - meanAround / design.n),
      fewer_calls_at_boundaries: r4(1 - meanBoundaries / design.n),
    };
  });
}

export type EarlyRow = { rule: string; agreement: number; mean_calls: number; planned: number; fewer_calls: number };

/** Fixed repeats stopped once decided (one call at a time) against the same repeats run in full. */
function earlyRows(): EarlyRow[] {
  const next = random(7);
  return [
    [10, 8],
    [10, 10],
    [20, 18],
    [5, 3],
  ].map(([n, k]) => {
    const planned = n as number;
    const minPass = k as number;
    let agree = 0;
    const calls: number[] = [];
    for (let s = 0; s < SCENARIOS; s++) {
      const p = 0.5 + next() * 0.5;
      const results = Array.from({ length: planned }, () => next() < p);
      const full = results.filter(Boolean).length >= minPass ? "passed" : "failed";
      let passes = 0;
      let failures = 0;
      let placed = 0;
      let early: string = "continue";
      for (const passed of results) {
        placed++;
        if (passed) passes++;
        else failures++;
        early = fixedDecision(passes, failures, planned, minPass);
        if (early !== "continue") break;
      }
      if (early === full) agree++;
      calls.push(placed);
    }
    const m = mean(calls);
    return {
      rule: `iterations ${planned}, min_pass ${minPass} (true rate uniform 0.5–1)`,
      agreement: r4(agree / SCENARIOS),
      mean_calls: r4(m),
      planned,
      fewer_calls: r4(1 - m / planned),
    };
  });
}

export type NullRow = { test: string; nominal: number; false_regression: number; runs: number };

/** The compare tests when nothing changed: how often they flag a regression anyway. */
function nullRows(): NullRow[] {
  const next = random(42);
  const rows: NullRow[] = [];
  for (const p of [0.5, 0.8, 0.9, 0.95]) {
    let flagged = 0;
    for (let s = 0; s < SCENARIOS; s++) {
      const a = Array.from({ length: 10 }, () => next() < p).filter(Boolean).length;
      const b = Array.from({ length: 10 }, () => next() < p).filter(Boolean).length;
      if (fisherLower(a, 10, b, 10) <= ALPHA) flagged++;
    }
    rows.push({
      test: `Fisher one-sided, 10 vs 10 calls, both at ${p}`,
      nominal: ALPHA,
      false_regression: r4(flagged / SCENARIOS),
      runs: SCENARIOS,
    });
  }
  // A run of 5 scenarios, none changed (each at its own rate): does Holm flag any?
  let family = 0;
  let unadjusted = 0;
  for (let s = 0; s < SCENARIOS; s++) {
    const ps = Array.from({ length: 5 }, () => {
      const p = 0.5 + next() * 0.5;
      const a = Array.from({ length: 10 }, () => next() < p).filter(Boolean).length;
      const b = Array.from({ length: 10 }, () => next() < p).filter(Boolean).length;
      return fisherLower(a, 10, b, 10);
    });
    if (holm(ps).some((q) => q <= ALPHA)) family++;
    if (ps.some((q) => q <= ALPHA)) unadjusted++;
  }
  rows.push({
    test: "any of 5 unchanged scenarios flagged, Holm-adjusted (family-wise)",
    nominal: ALPHA,
    false_regression: r4(family / SCENARIOS),
    runs: SCENARIOS,
  });
  rows.push({
    test: "any of 5 unchanged scenarios flagged, unadjusted (for contrast)",
    nominal: ALPHA,
    false_regression: r4(unadjusted / SCENARIOS),
    runs: SCENARIOS,
  });
  // Latency: 10 calls × 3 turns a side, the same log-normal distribution (median 300 ms), whole ms.
  let slower = 0;
  const normal = () => Math.sqrt(-2 * Math.log(1 - next())) * Math.cos(2 * Math.PI * next());
  const turns = () => Array.from({ length: 30 }, () => Math.round(300 * Math.exp(0.3 * normal())));
  for (let s = 0; s < SCENARIOS; s++) if ((mannWhitneyGreater(turns(), turns()) ?? 1) <= ALPHA) slower++;
  rows.push({
    test: "Mann–Whitney one-sided, 30 vs 30 turns, same latency distribution",
    nominal: ALPHA,
    false_regression: r4(slower / SCENARIOS),
    runs: SCENARIOS,
  });
  return rows;
}

export type PowerRow = { change: string; detected: number };

/** How often a real drop is flagged (10 calls a side, α 0.05, one scenario). */
function powerRows(): PowerRow[] {
  const next = random(99);
  return [
    [1, 0.9],
    [1, 0.7],
    [0.95, 0.5],
    [1, 0.2],
  ].map(([old, now]) => {
    let flagged = 0;
    for (let s = 0; s < SCENARIOS; s++) {
      const a = Array.from({ length: 10 }, () => next() < (old as number)).filter(Boolean).length;
      const b = Array.from({ length: 10 }, () => next() < (now as number)).filter(Boolean).length;
      if (fisherLower(a, 10, b, 10) <= ALPHA) flagged++;
    }
    return { change: `pass rate ${old} → ${now}`, detected: r4(flagged / SCENARIOS) };
  });
}

/** pass^k's mean over many runs against p^k: unbiased means equal within simulation error. */
function passKRows() {
  const next = random(5);
  return [
    [10, 0.8, 3],
    [10, 0.9, 5],
    [20, 0.7, 4],
  ].map(([n, p, k]) => {
    const values = Array.from({ length: SCENARIOS }, () => {
      const c = Array.from({ length: n as number }, () => next() < (p as number)).filter(Boolean).length;
      return passHatK(c, n as number, k as number) ?? 0;
    });
    return {
      calls: n,
      true_rate: p,
      k,
      true_pass_k: r4((p as number) ** (k as number)),
      mean_estimate: r4(mean(values)),
    };
  });
}

export type LiveRow = {
  scenario: string;
  failure_rate: number;
  verdict: string;
  planned: number;
  placed: number;
  saved: number;
};

/** (c) Real calls against the simulator: the conversations created, against the worst case. */
async function liveRun(): Promise<LiveRow[]> {
  const sim = await startSimulator({ port: 0, eventDelayMs: 1, quiet: true });
  const client = createClient({ baseUrl: sim.url, apiKey: sim.apiKey });
  try {
    const agents = (
      await loadAgents(new URL("../agents", import.meta.url).pathname, { stack: "dev", from: process.cwd() })
    ).agents;
    const support = agents.find((a) => a.key === "support") as AgentDefinition;
    const scenarios = [
      { name: "fixed-10-min8", iterations: 10, min_pass: 8, failure_rate: 0.1 },
      { name: "fixed-10-min8-failing", iterations: 10, min_pass: 8, failure_rate: 0.5 },
      {
        name: "sequential-0.7-high",
        pass_rate: 0.7,
        confidence: 0.95,
        margin: 0.1,
        max_iterations: 40,
        failure_rate: 0.05,
      },
      {
        name: "sequential-0.7-low",
        pass_rate: 0.7,
        confidence: 0.95,
        margin: 0.1,
        max_iterations: 40,
        failure_rate: 0.5,
      },
    ];
    const definition: AgentDefinition = {
      ...support,
      postprocessAgents: [],
      smoke: scenarios.map(({ failure_rate, ...s }): SmokeScenario => {
        const { override_config: _none, ...parsed } = smokeScenario.parse({
          ...s,
          channel: { callee_no: "+15550100100" },
          context: { simulation: { failure_rate, series: s.name } },
        });
        return parsed;
      }),
    };
    const created = await client.conversationalAgents.create({
      name: definition.name,
      description: definition.description,
      config: definition.config,
    } as Parameters<typeof client.conversationalAgents.create>[0]);
    const outputs: Record<string, HeldAgent> = {
      support: {
        key: "support",
        id: created.id,
        version_id: created.version_id,
        kind: "conversational",
        name: definition.name,
        postprocess_agents: [],
        urn: "",
      },
    };
    const { report } = await runSmoke({
      definitions: [definition],
      held: outputs,
      selection: {},
      connection: { baseUrl: sim.url, apiKey: sim.apiKey },
      concurrency: ROUND,
      out: { write: () => true, isTTY: false },
    });
    const counts = (await (
      await fetch(`${sim.url}/_simulator/requests`, { headers: { authorization: `Bearer ${sim.apiKey}` } })
    ).json()) as {
      by_route: Record<string, number>;
    };
    const created_ = counts.by_route["POST /conversations"] ?? 0;
    const rows = report.scenarios.map((s) => ({
      scenario: s.scenario,
      failure_rate: scenarios.find((x) => x.name === s.scenario)?.failure_rate ?? 0,
      verdict: s.verdict,
      planned: s.planned_iterations ?? s.iterations,
      placed: s.iterations,
      saved: s.calls_saved ?? 0,
    }));
    if (rows.reduce((n, r) => n + r.placed, 0) !== created_) {
      throw new Error(
        `the simulator created ${created_} conversations, the report holds ${rows.reduce((n, r) => n + r.placed, 0)}`,
      );
    }
    return rows;
  } finally {
    await client.close();
    await sim.close();
  }
}

export type VotesRow = {
  items: string;
  /** The chance two votes on one item disagree (what `judge check` reports as the flip rate). */
  flip_rate: number;
  fixed3: { requests: number; wrong: number };
  fixed5: { requests: number; wrong: number };
  auto: { requests: number; wrong: number; unsettled: number; requests_per_settled: number };
};

/**
 * Judge votes by simulation: each vote goes against the item's true verdict with probability f
 * (the item's own ambiguity to the model); fixed 3 and 5 votes against `votes: auto` (rounds from
 * nextVotes until settledVerdict, at most DEFAULT_MAX_VOTES). The same items, f and seed for each.
 */
function votesRows(): VotesRow[] {
  const designs = [
    { items: "clear (every vote agrees)", flips: () => 0 },
    { items: "each vote wrong 5 %", flips: () => 0.05 },
    { items: "each vote wrong 10 %", flips: () => 0.1 },
    { items: "each vote wrong 20 %", flips: () => 0.2 },
    { items: "each vote wrong 30 %", flips: () => 0.3 },
    { items: "mixed: 80 % of items 2 %, 20 % of items 30 %", flips: (u: number) => (u < 0.8 ? 0.02 : 0.3) },
  ];
  return designs.map((design, i) => {
    const next = random(4000 + i);
    const wrong = { f3: 0, f5: 0, auto: 0 };
    let requests = 0;
    let unsettled = 0;
    let flips = 0;
    for (let s = 0; s < SCENARIOS; s++) {
      const f = design.flips(next());
      flips += 2 * f * (1 - f);
      // The true verdict is pass; a vote is right (pass) with probability 1 − f.
      const vote = () => next() >= f;
      const fixed = (n: number) => Array.from({ length: n }, vote).filter(Boolean).length * 2 > n;
      if (!fixed(3)) wrong.f3++;
      if (!fixed(5)) wrong.f5++;
      let passes = 0;
      let fails = 0;
      for (
        let round = nextVotes(0, 0, DEFAULT_MAX_VOTES);
        round > 0;
        round = nextVotes(passes, fails, DEFAULT_MAX_VOTES)
      ) {
        for (let v = 0; v < round; v++)
          if (vote()) passes++;
          else fails++;
      }
      const asked = passes + fails;
      requests += asked;
      if (passes <= fails) wrong.auto++;
      if (settledVerdict(passes, fails) === null) unsettled++;
    }
    return {
      items: design.items,
      // The items' true flip rate, 2f(1 − f): the auto votes' own would be biased upward (they stop early when unanimous).
      flip_rate: r4(flips / SCENARIOS),
      fixed3: { requests: 3, wrong: r4(wrong.f3 / SCENARIOS) },
      fixed5: { requests: 5, wrong: r4(wrong.f5 / SCENARIOS) },
      auto: {
        requests: r4(requests / SCENARIOS),
        wrong: r4(wrong.auto / SCENARIOS),
        unsettled: r4(unsettled / SCENARIOS),
        requests_per_settled: r4(requests / Math.max(1, SCENARIOS - unsettled)),
      },
    };
  });
}

export type DecisionResults = {
  scenarios_per_row: number;
  round: number;
  sequential: SequentialRow[];
  early: EarlyRow[];
  compare_null: NullRow[];
  compare_power: PowerRow[];
  compare_sequential: CompareRow[];
  pass_k: ReturnType<typeof passKRows>;
  live: LiveRow[];
  votes: VotesRow[];
  /** The drift test against a blessed baseline (scripts/bench-drift.ts). */
  drift: DriftBench;
  targets: {
    errors_within_nominal: boolean;
    fewer_calls_at_least_40_percent: boolean;
    comparison_false_regression_within_alpha: boolean;
    comparison_fewer_calls_at_least_30_percent: boolean;
  };
};

export async function decisionBench(): Promise<DecisionResults> {
  const sequential = sequentialRows();
  const compareNull = nullRows();
  const tolerance = (p: number) => 2 * se(p, SCENARIOS);
  const errorsOk =
    sequential.every(
      (r) =>
        r.false_pass.sequential <= r.nominal + tolerance(r.nominal) &&
        r.false_fail.sequential <= r.nominal + tolerance(r.nominal),
    ) &&
    compareNull
      .filter((r) => !r.test.includes("unadjusted"))
      .every((r) => r.false_regression <= r.nominal + tolerance(r.nominal));
  const compareSequential = [
    ...compareRows(SCENARIOS, random, ALPHA),
    // Fewer runs: a cap of 250 pairs and Fisher's search to match its power take minutes at 10,000.
    ...POWERED_CASES.flatMap((design) => compareRows(POWERED_RUNS, random, ALPHA, design)),
  ];
  const unchanged = compareSequential.filter((r) => r.old_rate === r.new_rate);
  // Calls saved where the sequential design has the power to find the drop.
  const saved = compareSequential.flatMap((r) =>
    r.calls_saved === null || r.regressed < COMPARED_POWER ? [] : [r.calls_saved],
  );
  return {
    scenarios_per_row: SCENARIOS,
    round: ROUND,
    sequential,
    early: earlyRows(),
    compare_null: compareNull,
    compare_power: powerRows(),
    compare_sequential: compareSequential,
    pass_k: passKRows(),
    live: await liveRun(),
    votes: votesRows(),
    drift: driftBench(),
    targets: {
      errors_within_nominal: errorsOk,
      fewer_calls_at_least_40_percent: sequential.every((r) => r.fewer_calls_around >= 0.4),
      comparison_false_regression_within_alpha: unchanged.every(
        (r) => r.regressed <= ALPHA + tolerance(ALPHA) && (r.regressed_any_look ?? 0) <= ALPHA + tolerance(ALPHA),
      ),
      comparison_fewer_calls_at_least_30_percent: saved.length > 0 && saved.every((x) => x >= 0.3),
    },
  };
}

const pct = (x: number) => `${(x * 100).toFixed(1)} %`;

export function decisionTables(d: DecisionResults): string {
  const out = [
    `decision rules (${d.scenarios_per_row.toLocaleString("en")} simulated scenarios per row; sequential rounds of ${d.round}; capped at the fixed design's N)`,
    "",
    "| rule | nominal | false pass seq / fixed | false fail seq / fixed | fixed N (min pass) | mean calls seq at θ−δ / θ+δ / around θ | inconclusive around θ | fewer calls around θ / at θ±δ |",
    "|---|---|---|---|---|---|---|---|",
    ...d.sequential.map(
      (r) =>
        `| ${r.rule} | ${pct(r.nominal)} | ${pct(r.false_pass.sequential)} / ${pct(r.false_pass.fixed)} | ${pct(r.false_fail.sequential)} / ${pct(r.false_fail.fixed)} | ${r.fixed_n} (${r.fixed_min_pass}) | ${r.mean_calls.at_fail_rate.toFixed(1)} / ${r.mean_calls.at_pass_rate.toFixed(1)} / ${r.mean_calls.around.toFixed(1)} | ${pct(r.inconclusive_around)} | ${pct(r.fewer_calls_around)} / ${pct(r.fewer_calls_at_boundaries)} |`,
    ),
    "",
    "| fixed repeats stopped once decided | same verdict as all calls | mean calls | planned | fewer calls |",
    "|---|---|---|---|---|",
    ...d.early.map(
      (r) => `| ${r.rule} | ${pct(r.agreement)} | ${r.mean_calls.toFixed(2)} | ${r.planned} | ${pct(r.fewer_calls)} |`,
    ),
    "",
    "| compare test under the null (nothing changed) | nominal | flagged |",
    "|---|---|---|",
    ...d.compare_null.map((r) => `| ${r.test} | ${pct(r.nominal)} | ${pct(r.false_regression)} |`),
    "",
    "| a real drop, 10 calls a side (α 0.05) | flagged |",
    "|---|---|",
    ...d.compare_power.map((r) => `| ${r.change} | ${pct(r.detected)} |`),
    "",
    ...compareTable(d.compare_sequential, d.scenarios_per_row, ALPHA),
    `(rows with max_pairs above 40: ${POWERED_RUNS.toLocaleString("en")} simulated runs each)`,
    "",
    "| pass^k: calls, true rate, k | true pass^k | mean estimate |",
    "|---|---|---|",
    ...d.pass_k.map((r) => `| ${r.calls}, ${r.true_rate}, ${r.k} | ${r.true_pass_k} | ${r.mean_estimate} |`),
    "",
    `against the simulator (--concurrency ${d.round}; conversations counted by the simulator)`,
    "",
    "| scenario | failure_rate | verdict | worst case | placed | not needed |",
    "|---|---|---|---|---|---|",
    ...d.live.map(
      (r) => `| ${r.scenario} | ${r.failure_rate} | ${r.verdict} | ${r.planned} | ${r.placed} | ${r.saved} |`,
    ),
    "",
    `judge votes (${d.scenarios_per_row.toLocaleString("en")} simulated items per row, true verdict pass; votes: auto asks rounds until settled at 95 % or ${DEFAULT_MAX_VOTES})`,
    "",
    "| items | flip rate | requests fixed 3 / fixed 5 / auto | wrong verdicts fixed 3 / fixed 5 / auto | auto: requests per settled verdict | auto: not settled |",
    "|---|---|---|---|---|---|",
    ...d.votes.map(
      (r) =>
        `| ${r.items} | ${r.flip_rate.toFixed(3)} | 3 / 5 / ${r.auto.requests.toFixed(2)} | ${pct(r.fixed3.wrong)} / ${pct(r.fixed5.wrong)} / ${pct(r.auto.wrong)} | ${r.auto.requests_per_settled.toFixed(2)} | ${pct(r.auto.unsettled)} |`,
    ),
    "",
    ...driftTable(d.drift),
    `targets: every error rate ≤ nominal (within 2 simulation standard errors): ${d.targets.errors_within_nominal ? "met" : "MISSED"}; ≥ 40 % fewer calls than fixed-N around every threshold: ${d.targets.fewer_calls_at_least_40_percent ? "met" : "MISSED"}; the comparison's false regression ≤ α at every look: ${d.targets.comparison_false_regression_within_alpha ? "met" : "MISSED"}; ≥ 30 % fewer calls than the fixed design of equal power at every drop, with ≥ ${pct(COMPARED_POWER)} power: ${d.targets.comparison_fewer_calls_at_least_30_percent ? "met" : "MISSED"}`,
  ];
  return `${out.join("\n")}\n`;
}
