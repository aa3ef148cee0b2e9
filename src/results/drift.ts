// The drift report's own part (kind "drift", `agent-iac drift`): each blessed scenario's baseline
// next to now, its verdict and why, and what moved besides the agent. Read tolerantly like every
// report field; written strictly by this tool.
import { z } from "zod";

const DRIFT_VERDICTS = ["drifted", "holding", "inconclusive", "error", "not_run"] as const;
/** What can move under a pinned version besides the agent, named when it differs from the baseline. */
const MOVED = ["judge_model", "caller_model", "scenario_text", "tool_version"] as const;
export type Moved = (typeof MOVED)[number];

const counts = z.looseObject({
  calls: z.int().min(0),
  passes: z.int().min(0),
  /** passes / calls, null for no calls. */
  rate: z.number().nullable(),
  response_p95_ms: z.number().nullable().default(null),
});

const driftScenarioSchema = z.looseObject({
  agent: z.string(),
  scenario: z.string(),
  version_id: z.string(),
  verdict: z.enum(DRIFT_VERDICTS),
  /** Why, in words ("pass rate dropped beyond the margin", "the judge's model changed: re-bless"). */
  reason: z.string(),
  /** Whose doing a verdict other than holding is: the agent's drift, or the judge, caller or service. */
  fault: z.enum(["agent", "caller", "judge", "service"]).nullable().default(null),
  baseline: counts,
  now: counts,
  /** The baseline rate the test stands on (its lower bound at the calibrated level γ, src/stats/drift.ts); null: too low to tell a drop. */
  reference_rate: z.number().nullable(),
  /** Calls placed now and the cap. */
  calls_used: z.int().min(0),
  max_calls: z.int().min(0),
  latency: z
    .looseObject({
      baseline_p95_ms: z.number(),
      /** A turn over this is slower: the baseline's p95 plus its slack. */
      over_ms: z.number().optional(),
      exceeded: z.int().min(0),
      turns: z.int().min(0),
      wealth: z.number(),
      slower: z.boolean(),
    })
    .nullable()
    .default(null),
  /** Each expectation, baseline against now; `dropped`: its rate fell by more than the margin. */
  expectations: z
    .array(
      z.looseObject({
        kind: z.string().nullable(),
        key: z.string().nullable(),
        description: z.string(),
        baseline: z.looseObject({ calls: z.int().min(0), passes: z.int().min(0) }),
        now: z.looseObject({ calls: z.int().min(0), passes: z.int().min(0) }),
        dropped: z.boolean(),
      }),
    )
    .default([]),
  moved: z
    .array(z.looseObject({ what: z.enum(MOVED).or(z.string()), baseline: z.string(), now: z.string() }))
    .default([]),
});

export const driftSchema = z.looseObject({
  baseline_file: z.string(),
  blessed_at: z.string(),
  tool_version: z.string(),
  alpha: z.number(),
  margin: z.number(),
  max_calls: z.int().min(1),
  scenarios: z.array(driftScenarioSchema).default([]),
});

export type Drift = z.output<typeof driftSchema>;
export type DriftScenario = z.output<typeof driftScenarioSchema>;
