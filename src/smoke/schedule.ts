// Which planned call goes next. Fixed repeats stop as soon as their verdict cannot change
// (src/stats: curtailment); a sequential test places its calls in rounds of `concurrency` and
// looks after each (src/stats: the SPRT). Calls in flight always finish; a call that is no longer
// needed is never placed and never reported as run or failed — unless the run's stop cut one of its
// scenario's calls short: that scenario did not complete, and every call of it never placed is
// "not run" (never "not needed").

import { type CallOutcomeKind, endedOnItsOwn } from "../results/index.ts";
import type { PlannedCall } from "./call.ts";
import { gateOf } from "./call.ts";
import { type Gate, gateDecision, scenarioKey } from "./gates.ts";

type ScenarioState = {
  gate: Gate;
  placed: number;
  inflight: number;
  passes: number;
  failures: number;
  /** A sequential test's calls placed by the end of its current round. */
  roundEnd: number;
  /** One of its calls was cut short by the run's stop (ended `interrupted`). */
  cut: boolean;
};

export type ScheduleOptions = {
  /** Calls at a time; a sequential test's round. */
  concurrency: number;
  /** One shard's calls: fixed repeats cannot know the other shards' passes, so they never stop early. */
  partial?: boolean;
  /** Fixed repeats stop once decided (default true); a comparison places them all, for its test. */
  earlyDecisions?: boolean;
  signal?: AbortSignal;
};

export class Schedule {
  readonly #calls: readonly PlannedCall[];
  readonly #pending: number[];
  readonly #states = new Map<string, ScenarioState>();
  readonly #options: ScheduleOptions;
  #waiters: (() => void)[] = [];
  /** Planned calls not placed because their scenario's verdict was settled without them. */
  readonly notNeeded = new Set<number>();

  constructor(calls: readonly PlannedCall[], options: ScheduleOptions) {
    this.#calls = calls;
    this.#pending = calls.map((_, i) => i);
    this.#options = options;
    options.signal?.addEventListener("abort", () => this.#wake(), { once: true });
  }

  #state(index: number): ScenarioState {
    const call = this.#calls[index] as PlannedCall;
    const key = scenarioKey(call.agent, call.scenario.name, call.versionId);
    let state = this.#states.get(key);
    if (!state) {
      state = { gate: gateOf(call.scenario), placed: 0, inflight: 0, passes: 0, failures: 0, roundEnd: 0, cut: false };
      this.#states.set(key, state);
    }
    return state;
  }

  /** Whether the scenario's verdict is settled by the calls that finished. */
  #decided(state: ScenarioState): boolean {
    const fixedRunsOut = this.#options.partial || this.#options.earlyDecisions === false;
    if (fixedRunsOut && !state.gate.sequential) return false;
    // A sequential test looks only between rounds, when none of its calls is in flight: its
    // log-likelihood ratio is not monotone, so a look mid-round could be undone by the calls still
    // running, and the verdict (from every finished call) must be the one the look saw.
    if (state.gate.sequential && state.inflight > 0) return false;
    return gateDecision(state.gate, state.passes, state.failures) !== "continue";
  }

  /** The next call to place (its index), waiting while only a running round holds calls back; undefined: none left. */
  async next(): Promise<number | undefined> {
    for (;;) {
      if (this.#options.signal?.aborted) return undefined;
      let blocked = false;
      for (let pos = 0; pos < this.#pending.length; pos++) {
        const index = this.#pending[pos] as number;
        const state = this.#state(index);
        if (this.#decided(state)) {
          this.#pending.splice(pos--, 1);
          this.notNeeded.add(index);
          continue;
        }
        if (state.gate.sequential && state.placed >= state.roundEnd) {
          if (state.inflight > 0) {
            blocked = true;
            continue;
          }
          state.roundEnd = state.placed + Math.max(1, this.#options.concurrency);
        }
        this.#pending.splice(pos, 1);
        state.placed++;
        state.inflight++;
        return index;
      }
      if (!blocked) return undefined;
      await new Promise<void>((resolve) => this.#waiters.push(resolve));
    }
  }

  /**
   * A placed call finished. Errors count as failures; a call the run's stop cut short counts as
   * neither, so it never settles a verdict that would leave the calls after it "not needed"; nor
   * does one whose caller strayed (inconclusive: it is placed again, see `add`).
   */
  finished(index: number, kind: CallOutcomeKind): void {
    const state = this.#state(index);
    state.inflight--;
    if (kind === "passed") state.passes++;
    else if (endedOnItsOwn(kind)) state.failures++;
    else if (kind !== "inconclusive") state.cut = true;
    this.#wake();
  }

  /** A call appended to the calls (by index) to be placed too: one whose caller strayed, placed again. */
  add(index: number): void {
    this.#pending.push(index);
    this.#wake();
  }

  /**
   * Calls never placed that are still needed, or whose scenario the stop cut short (after a stop:
   * they are reported as not run), in planned order; the rest stay "not needed".
   */
  unplaced(): number[] {
    const left = [...this.#pending, ...this.notNeeded].filter((index) => {
      const state = this.#state(index);
      if (state.cut || !this.#decided(state)) {
        this.notNeeded.delete(index);
        return true;
      }
      this.notNeeded.add(index);
      return false;
    });
    this.#pending.length = 0;
    return left.sort((a, b) => a - b);
  }

  #wake(): void {
    const waiters = this.#waiters;
    this.#waiters = [];
    for (const resolve of waiters) resolve();
  }
}
