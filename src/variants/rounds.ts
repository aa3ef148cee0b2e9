// The variants played in rounds: a round is, for each scenario, one call on the unchanged config
// (the base) and one on each undecided variant, all with the same caller lines (the same scenario
// and iteration: scripted turns, the same rephrasing index), placed together in an order drawn at
// random and recorded, so every side meets the same service conditions. After each round every
// undecided variant's pairs (its call beside the base's call of the same scenario and round) are
// looked at (decide.ts); a decided variant is placed no more.
import { endedOnItsOwn } from "../results/index.ts";
import type { PlannedCall, ScenarioResult } from "../smoke/index.ts";
import { type PairedRule, shuffled } from "../stats/index.ts";
import { look, type Standing, standing } from "./decide.ts";

export const BASE = "base";

/** A variant to play: its name and what it sends as override_config (whole top-level sections). */
export type Variant = {
  name: string;
  source: string;
  override: Record<string, unknown>;
  config: Record<string, unknown>;
};

export type TryPlan = {
  agent: string;
  versionId: string;
  /** One planned call per scenario (iteration 1), the rounds' template. */
  scenarios: PlannedCall[];
  variants: Variant[];
  rule: PairedRule;
};

/** A placed call: whose side it was, its round, its place in the round's order. */
export type TriedCall = { side: string; round: number; position: number; result: ScenarioResult };

/** The rounds the cap allows: each round adds one pair per scenario to every variant still running. */
export const roundsOf = (plan: Pick<TryPlan, "scenarios" | "rule">) =>
  Math.ceil(plan.rule.maxPairs / Math.max(1, plan.scenarios.length));

const callOf = (template: PlannedCall, round: number, variant?: Variant): PlannedCall => ({
  ...template,
  iteration: round,
  live: false,
  ...(variant ? { overrideConfig: variant.override } : {}),
});

/** Every call the cap allows, on every side (the worst case a dry run and the budget count). */
export function worstCase(plan: TryPlan): PlannedCall[] {
  const calls: PlannedCall[] = [];
  for (let round = 1; round <= roundsOf(plan); round++) {
    for (const template of plan.scenarios) {
      calls.push(callOf(template, round), ...plan.variants.map((v) => callOf(template, round, v)));
    }
  }
  return calls;
}

/** Places calls, returning their results in the order given (a call not placed may have none). */
export type PlaceCalls = (calls: PlannedCall[]) => Promise<ScenarioResult[]>;

/** Plays the rounds until every variant is decided, the cap is reached or the run is stopped. */
export async function playRounds(
  plan: TryPlan,
  place: PlaceCalls,
  options: {
    signal?: AbortSignal;
    random?: () => number;
    onRound?: (round: number, standings: Standing[]) => void;
  } = {},
): Promise<{ calls: TriedCall[]; standings: Standing[]; rounds: number }> {
  const random = options.random ?? Math.random;
  const standings = plan.variants.map((v) => standing(v.name));
  const calls: TriedCall[] = [];
  let round = 0;
  while (round < roundsOf(plan) && !options.signal?.aborted) {
    const running = plan.variants.filter((_, i) => standings[i]?.verdict === "undecided");
    if (running.length === 0) break;
    round++;
    const sides = [undefined, ...running];
    const planned = plan.scenarios.flatMap((t) =>
      sides.map((v) => ({ side: v?.name ?? BASE, call: callOf(t, round, v) })),
    );
    const order = shuffled(planned, random);
    const results = await place(order.map((p) => p.call));
    const got = new Map<string, ScenarioResult>();
    order.forEach((p, position) => {
      const result = results[position];
      if (!result) return;
      calls.push({ side: p.side, round, position, result });
      got.set(`${p.side}\u0000${p.call.scenario.name}`, result);
    });
    for (const s of standings) {
      if (s.verdict !== "undecided") continue;
      for (const t of plan.scenarios) {
        const [b, v] = [got.get(`${BASE}\u0000${t.scenario.name}`), got.get(`${s.name}\u0000${t.scenario.name}`)];
        // An error is not evidence either way: only pairs whose two calls ended on their own count.
        if (b && v && endedOnItsOwn(b.outcome.kind) && endedOnItsOwn(v.outcome.kind)) {
          s.pairs.push({ old: b.outcome.kind === "passed", new: v.outcome.kind === "passed" });
        }
      }
    }
    if (options.signal?.aborted) break;
    look(standings, plan.rule);
    options.onRound?.(round, standings);
  }
  // Out of rounds (every pair the cap allows was placed, some not evaluable): undecided at the cap.
  if (!options.signal?.aborted && round >= roundsOf(plan)) {
    for (const s of standings) if (s.verdict === "undecided") s.verdict = "inconclusive";
  }
  return { calls, standings, rounds: round };
}
