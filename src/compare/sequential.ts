// Old and new placed as pairs: each scenario's old and new call of one iteration go out together,
// the order within each pair drawn at random and recorded, so both versions meet the same service
// conditions (a service that slows during the run slows both). A scenario compared sequentially
// (`compare: sequential`, or --compare-rule sequential) places its pairs in rounds until the test by
// betting (src/stats/paired.ts) decides regressed or no worse, or its cap leaves it inconclusive.
import { COMPARE_DEFAULTS } from "../definitions/index.ts";
import { ConfigError } from "../errors/index.ts";
import { type CallResult, endedOnItsOwn, type ScenarioComparison } from "../results/index.ts";
import { gateOf, type PlannedCall, type ScenarioResult } from "../smoke/index.ts";
import { fewestPairs, type PairedRule, pairedDecision, pairedWealth, round4, slowerWealth } from "../stats/index.ts";

export type CompareRule = "fixed" | "sequential";
type PairOrder = "old_first" | "new_first";

/** A scenario compared sequentially: its rule and its pairs (up to the cap), placed round by round. */
type SequentialScenario = { rule: PairedRule; pairs: [PlannedCall, PlannedCall][] };

export type PairedPlan = {
  /** The new side's calls: a sequential scenario's up to its cap (the worst case). */
  newCalls: PlannedCall[];
  oldCalls: PlannedCall[];
  /** Each old call by its new call. */
  oldOf: Map<PlannedCall, PlannedCall>;
  /** Scenario (agent, name) → its sequential rule; the others are compared by the fixed rule. */
  sequential: Map<string, PairedRule>;
};

const key = (agent: string, scenario: string) => `${agent}\u0000${scenario}`;

/** The sequential rule of a scenario, or none: the run's --compare-rule, else the scenario's `compare:`. */
function ruleOf(call: PlannedCall, runRule: CompareRule | undefined, alpha: number): PairedRule | undefined {
  const own = call.scenario.compare;
  if ((runRule ?? own?.rule ?? "fixed") !== "sequential") return undefined;
  const rule = {
    alpha,
    margin: own?.margin ?? COMPARE_DEFAULTS.margin,
    maxPairs: own?.max_pairs ?? COMPARE_DEFAULTS.maxPairs,
  };
  const fewest = fewestPairs(rule);
  if (fewest > rule.maxPairs) {
    throw new ConfigError(
      `${call.agent}/${call.scenario.name}: a sequential comparison at α ${alpha} with margin ${rule.margin} needs at least ${fewest} pairs to say "no worse" (every call passing on both sides), more than max_pairs ${rule.maxPairs}: raise compare.max_pairs or compare.margin`,
    );
  }
  return rule;
}

/**
 * The pairs of a comparison: each new call beside its old one (`oldFor` gives it, none where the
 * version did not change). A sequential scenario's pairs are its iterations 1 … max_pairs, all in the
 * shard that holds its first iteration (a shard's pairs stay whole); its other planned calls go.
 */
export function pairedPlan(
  calls: readonly PlannedCall[],
  oldFor: (call: PlannedCall) => PlannedCall | undefined,
  options: { rule?: CompareRule | undefined; alpha: number },
): PairedPlan {
  const plan: PairedPlan = { newCalls: [], oldCalls: [], oldOf: new Map(), sequential: new Map() };
  const add = (call: PlannedCall) => {
    plan.newCalls.push(call);
    const old = oldFor(call);
    if (old) {
      plan.oldCalls.push(old);
      plan.oldOf.set(call, old);
    }
  };
  for (const call of calls) {
    const rule = oldFor(call) ? ruleOf(call, options.rule, options.alpha) : undefined;
    if (!rule) {
      add(call);
      continue;
    }
    if (call.iteration !== 1) continue;
    plan.sequential.set(key(call.agent, call.scenario.name), rule);
    // Its own single-version test and its iterations give way to the pairs.
    const compare = { rule: "sequential" as const, max_pairs: rule.maxPairs, margin: rule.margin };
    const scenario = { ...call.scenario, iterations: rule.maxPairs, confidence: undefined, compare };
    for (let iteration = 1; iteration <= rule.maxPairs; iteration++) add({ ...call, scenario, iteration });
  }
  return plan;
}

/** Places calls and returns their results (a call not placed may have none). */
export type PlaceCalls = (calls: PlannedCall[]) => Promise<ScenarioResult[]>;

/** A call and its result, matched by what both carry. */
const callKey = (c: { agent: string; versionId: string; iteration: number }, scenario: string) =>
  `${c.agent}\u0000${scenario}\u0000${c.versionId}\u0000${c.iteration}`;

/**
 * Places the plan's pairs interleaved: the fixed scenarios' pairs and the unpaired calls at once,
 * the sequential scenarios' pairs `pairsPerRound` at a time until each decides. Every result carries
 * its pair's order. Returns both sides' results in planned order.
 */
export async function placePairs(
  plan: PairedPlan,
  place: PlaceCalls,
  options: { pairsPerRound: number; signal?: AbortSignal; random?: () => number },
): Promise<{ newResults: ScenarioResult[]; oldResults: ScenarioResult[]; stopped: boolean }> {
  const random = options.random ?? Math.random;
  const order = new Map<PlannedCall, PairOrder>();
  const pair = (old: PlannedCall, now: PlannedCall): PlannedCall[] => {
    const o: PairOrder = random() < 0.5 ? "old_first" : "new_first";
    order.set(old, o);
    order.set(now, o);
    return o === "old_first" ? [old, now] : [now, old];
  };
  const perRound = Math.max(1, options.pairsPerRound);
  const sequential = new Map<string, SequentialScenario>();
  let round: PlannedCall[] = [];
  for (const call of plan.newCalls) {
    const old = plan.oldOf.get(call);
    const rule = plan.sequential.get(key(call.agent, call.scenario.name));
    if (rule && old) {
      const s = sequential.get(key(call.agent, call.scenario.name)) ?? { rule, pairs: [] };
      s.pairs.push([old, call]);
      sequential.set(key(call.agent, call.scenario.name), s);
    } else round.push(...(old ? pair(old, call) : [call]));
  }
  const results = new Map<PlannedCall, ScenarioResult>();
  const placed = new Map<SequentialScenario, number>();
  /** The scenario's next pairs, from its `done` placed ones. */
  const more = (s: SequentialScenario, done: number) => {
    placed.set(s, Math.min(s.pairs.length, done + perRound));
    return s.pairs.slice(done, done + perRound).flatMap(([old, now]) => pair(old, now));
  };
  for (const s of sequential.values()) round.push(...more(s, 0));
  while (round.length > 0 && !options.signal?.aborted) {
    const got = new Map((await place(round)).map((r) => [callKey(r, r.scenario), r]));
    for (const call of round) {
      const result = got.get(callKey(call, call.scenario.name));
      if (!result) continue;
      const o = order.get(call);
      if (o) result.pairOrder = o;
      results.set(call, result);
    }
    round = [];
    for (const s of sequential.values()) {
      const done = placed.get(s) ?? 0;
      if (done >= s.pairs.length) continue;
      const outcomes = pairOutcomes(s.pairs.slice(0, done).map(([o, n]) => [results.get(o), results.get(n)]));
      if (pairedDecision(outcomes, s.rule) === "continue") round.push(...more(s, done));
    }
  }
  const inOrder = (calls: readonly PlannedCall[]) =>
    calls.flatMap((c) => {
      const r = results.get(c);
      return r ? [r] : [];
    });
  // The stop left pairs a sequential scenario still needed unplaced: the run was cut short.
  const stopped = round.length > 0;
  const newResults = inOrder(plan.newCalls);
  const oldResults = inOrder(plan.oldCalls);
  // A sequential scenario's own threshold (min_pass or pass_rate, where it states one) is judged on
  // the pairs it placed, not on its cap; without one, the comparison alone decides it.
  for (const r of [...newResults, ...oldResults]) {
    const s = sequential.get(key(r.agent, r.scenario));
    if (!s) continue;
    const count = placed.get(s) ?? 0;
    const scenario = s.pairs[0]?.[1].scenario;
    if (scenario) {
      const own = scenario.min_pass !== undefined || scenario.pass_rate !== undefined;
      const min = scenario.min_pass === undefined ? {} : { min_pass: Math.min(scenario.min_pass, count) };
      const gate = gateOf({ ...scenario, iterations: count, ...min });
      r.gate = own ? gate : { ...gate, minPass: 0 };
    }
  }
  return { newResults, oldResults, stopped };
}

type Ended = Pick<ScenarioResult, "outcome"> | Pick<CallResult, "outcome"> | undefined;

/** The pairs whose two calls ended on their own, as pass/fail (an error is a failure). */
function pairOutcomes(pairs: readonly [Ended, Ended][]): { old: boolean; new: boolean }[] {
  return pairs.flatMap(([o, n]) =>
    o && n && endedOnItsOwn(o.outcome.kind) && endedOnItsOwn(n.outcome.kind)
      ? [{ old: o.outcome.kind === "passed", new: n.outcome.kind === "passed" }]
      : [],
  );
}

export type SequentialEvidence = {
  outcome: "regression" | "no_worse" | "inconclusive";
  test: NonNullable<ScenarioComparison["sequential"]>;
};

/** The sequential comparison of a scenario's paired calls (joined by iteration): its decision and its tests' wealth. */
export function sequentialEvidence(
  oldCalls: readonly CallResult[],
  newCalls: readonly CallResult[],
  rule: PairedRule,
): SequentialEvidence {
  const olds = new Map(oldCalls.map((c) => [c.iteration, c]));
  const joined = newCalls.map((n) => [olds.get(n.iteration), n] as [CallResult | undefined, CallResult]);
  const pairs = pairOutcomes(joined);
  const decision = pairedDecision(pairs, rule);
  const wealth = pairedWealth(pairs, rule);
  const mean = (c: CallResult | undefined) => {
    const turns = c?.latency.response_ms ?? [];
    return turns.length > 0 ? turns.reduce((a, b) => a + b, 0) / turns.length : null;
  };
  const shifts = joined.flatMap(([o, n]) => {
    const [a, b] = [mean(o), mean(n)];
    return a === null || b === null ? [] : [b - a];
  });
  const slower = shifts.length > 0 ? slowerWealth(shifts) : null;
  return {
    // Stopped before the test decided (the run was interrupted): it never decided.
    outcome: decision === "regressed" ? "regression" : decision === "no_worse" ? "no_worse" : "inconclusive",
    test: {
      alpha: rule.alpha,
      margin: rule.margin,
      max_pairs: rule.maxPairs,
      pairs: pairs.length,
      regressed_wealth: round4(wealth.regressed),
      no_worse_wealth: round4(wealth.noWorse),
      slower_wealth: slower === null ? null : round4(slower),
      slower: slower !== null && slower >= 1 / rule.alpha - 1e-9,
    },
  };
}
