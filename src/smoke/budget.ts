// A run's cost before it runs: the calls it would place and their worst case in call minutes
// (every call lasting its scenario's whole timeout, every planned iteration placed: early
// decisions and sequential tests only ever place fewer), and the judge requests its judged
// expectations may make (every vote of every rubric of every call; the cache may answer some).
// With a judge configured, a persona call is also checked by it (caller.check) and, when its caller
// strayed, placed once more: the worst case counts both. A scripted caller with `variations` costs
// one rephrasing request per scenario per run, however many calls (and sides) it has.
import { callerCheckRubric, DEFAULT_PERSONA_TURNS, judgeRubrics } from "../definitions/index.ts";
import type { PlannedCall } from "./call.ts";

export type Estimate = {
  calls: number;
  worstCaseMinutes: number;
  judgeRequests: number;
  personaRequests: number;
  /** One per scenario whose scripted turns are rephrased (`caller.variations`), for the whole run. */
  rephraseRequests: number;
};

/** `callerCheck`: a judge is configured, so persona calls are checked (and may be placed again). */
export type EstimateOptions = { callerCheck?: boolean };

/** The persona model requests one call may make: a line per turn up to max_turns, and the one that says it is done. */
function personaRequestsPerCall(call: PlannedCall): number {
  const caller = call.scenario.caller;
  return caller?.persona ? (caller.max_turns ?? DEFAULT_PERSONA_TURNS) + 1 : 0;
}

/** The judge requests one call of a scenario may make: Σ votes over its rubrics (and the caller's check). */
function judgeRequestsPerCall(call: PlannedCall, options: EstimateOptions): number {
  const check = options.callerCheck ? (callerCheckRubric(call.scenario)?.votes ?? 0) : 0;
  return judgeRubrics(call.scenario.expect).reduce((sum, r) => sum + r.votes, check);
}

export function estimate(planned: readonly PlannedCall[], options: EstimateOptions = {}): Estimate {
  // A checked persona call whose caller strayed is placed once more (src/smoke/run.ts).
  const again = options.callerCheck ? planned.filter((call) => callerCheckRubric(call.scenario)) : [];
  const calls = [...planned, ...again];
  const seconds = calls.reduce((sum, call) => sum + call.scenario.timeout, 0);
  return {
    calls: calls.length,
    worstCaseMinutes: Math.round((seconds / 60) * 100) / 100,
    judgeRequests: calls.reduce((sum, call) => sum + judgeRequestsPerCall(call, options), 0),
    personaRequests: calls.reduce((sum, call) => sum + personaRequestsPerCall(call), 0),
    rephraseRequests: new Set(
      planned.filter((call) => call.scenario.caller?.variations).map((c) => `${c.agent}\u0000${c.scenario.name}`),
    ).size,
  };
}

export function estimateLine(value: Estimate): string {
  const judged =
    value.judgeRequests > 0 ? `, at most ${value.judgeRequests} judge request(s) (Σ calls × votes per rubric)` : "";
  const persona =
    value.personaRequests > 0
      ? `, at most ${value.personaRequests} persona model request(s) (Σ calls × (max_turns + 1))`
      : "";
  const rephrase =
    value.rephraseRequests > 0
      ? `, ${value.rephraseRequests} rephrasing request(s) to the caller's model (one per scenario with caller.variations)`
      : "";
  return `worst case: ${value.calls} call(s), ${value.worstCaseMinutes} call minutes (Σ iterations × timeout)${judged}${persona}${rephrase}`;
}

/** The calls a run would place, one line per scenario (`--dry-run`), then the worst case. */
export function dryRunText(calls: readonly PlannedCall[], options: EstimateOptions = {}): string {
  const rows = new Map<string, { call: PlannedCall; iterations: number }>();
  for (const call of calls) {
    const key = `${call.agent}\u0000${call.versionId}\u0000${call.scenario.name}`;
    const row = rows.get(key);
    if (row) row.iterations++;
    else rows.set(key, { call, iterations: 1 });
  }
  const lines = [...rows.values()].map(({ call, iterations }) => {
    const livemode = call.scenario.livemode && call.live;
    const early =
      call.scenario.confidence !== undefined
        ? "; at most: a sequential test stops once decided"
        : call.scenario.compare?.rule === "sequential"
          ? "; at most: pairs stop once the sequential comparison decides"
          : iterations > 1
            ? "; at most: stops once the verdict cannot change"
            : "";
    const judged = judgeRequestsPerCall(call, options);
    const judge = judged > 0 ? `, ${judged} judge request(s) per call` : "";
    const checked =
      options.callerCheck && callerCheckRubric(call.scenario)
        ? "; the judge checks the caller, and a call whose caller strayed is placed again (once per iteration)"
        : "";
    const spec = call.scenario.caller;
    const varied = spec?.variations ? `, each rephrased ${spec.variations} way(s) (one model request per run)` : "";
    const caller = spec?.turns
      ? `, caller: ${spec.turns.length} scripted turn(s)${varied}`
      : spec?.persona
        ? `, caller: a persona, at most ${spec.max_turns ?? DEFAULT_PERSONA_TURNS} line(s)`
        : "";
    return `${call.agent} ${call.versionId} ${call.scenario.name}: ${iterations} iteration(s), transport ${call.scenario.transport}, livemode ${livemode}, timeout ${call.scenario.timeout} s${caller}${judge}${early}${checked}`;
  });
  return `${["would place (no call is placed with --dry-run):", ...lines.map((l) => `  ${l}`), estimateLine(estimate(calls, options))].join("\n")}\n`;
}
