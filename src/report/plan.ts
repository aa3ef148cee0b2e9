// The report value of `agent-iac plan`: which agents a preview would create, replace (and why),
// leave unchanged or remove, field by field, and with `--behave` how the changed agents behave on
// their scenarios (its calls are a run report of kind "behave", written to its own files). Built by
// src/plan from the preview's step events; rendered here (plan-markdown.ts, JSON).
import { z } from "zod";
import { type Report, reportSchema } from "./schema.ts";

/** Pulumi's placeholder for a value known only after apply, as the plan shows it. */
export const UNKNOWN_TEXT = "(known after apply)";

export const actionSchema = z.enum(["create", "replace", "unchanged", "remove"]);

export const fieldChangeSchema = z.looseObject({ path: z.string(), before: z.unknown(), after: z.unknown() });

/** The whole request body that creates an agent, as a reviewer must see it. */
export const plannedRequestSchema = z.looseObject({
  name: z.unknown(),
  description: z.unknown(),
  /** Exactly what is sent (prompt files already read). */
  config: z.unknown(),
  /** Linked procedural agents by key, with their id (UNKNOWN_TEXT when it is created in the same run). */
  postprocess_agents: z.array(z.looseObject({ key: z.string(), id: z.unknown() })).optional(),
});

/** An unmet expectation of a previewed scenario, with the nearest transcript lines. */
export const unmetSchema = z.looseObject({
  description: z.string(),
  detail: z.string().nullable(),
  context: z.array(z.string()),
});

export const behaviourScenarioSchema = z.looseObject({
  scenario: z.string(),
  /** `not_run`: none of the scenario's calls was placed (the preview was stopped first). */
  status: z.enum(["passed", "failed", "error", "not_run"]),
  iterations: z.int().min(0),
  passes: z.int().min(0),
  conversation_ids: z.array(z.string()),
  unmet: z.array(unmetSchema),
  /** Why a call could not complete (service unreachable, stream failed, timeout). */
  error: z.string().nullable(),
});

/** Under each changed agent of a `plan --behave`: its scenarios' results, or why it was not previewed. */
export const agentBehaviourSchema = z.union([
  z.looseObject({
    previewed: z.literal(true),
    version_id: z.string(),
    /** The top-level config sections sent whole as override_config. */
    override_sections: z.array(z.string()),
    passed: z.int().min(0),
    failed: z.int().min(0),
    not_run: z.int().min(0).optional(),
    scenarios: z.array(behaviourScenarioSchema),
  }),
  z.looseObject({ previewed: z.literal(false), reason: z.string() }),
]);

export const behaveSummarySchema = z.looseObject({
  previewed: z.array(z.string()),
  not_previewed: z.array(z.looseObject({ agent: z.string(), reason: z.string() })),
  scenarios: z.int().min(0),
  passed: z.int().min(0),
  failed: z.int().min(0),
  errors: z.int().min(0),
  not_run: z.int().min(0).optional(),
});

/** A policy pack's violation in a plan (agent-iac's pack, or any pack the stack names). */
export const policyViolationSchema = z.looseObject({
  /** The rule (policy) name, e.g. `agent-allowed-models`. */
  rule: z.string(),
  level: z.string(),
  /** The policy pack that reported it. */
  pack: z.string(),
  message: z.string(),
  urn: z.string(),
});

export const agentPlanSchema = z.looseObject({
  agent: z.string(),
  kind: z.enum(["conversational", "procedural"]),
  action: actionSchema,
  why: z.string(),
  fields: z.array(fieldChangeSchema),
  /** Unified diffs of changed prompt texts, keyed by field path. */
  promptDiffs: z.record(z.string(), z.string()),
  /** For a created agent: the whole request body. */
  request: plannedRequestSchema.optional(),
  overlay: z.string().optional(),
  /** With `plan --behave`: the scenarios' results with the proposed config, or why it was not previewed. */
  behaviour: agentBehaviourSchema.optional(),
  /** The policy packs' violations about this agent (a stack that names a pack). */
  violations: z.array(policyViolationSchema).optional(),
});

export const planSchema = z.looseObject({
  kind: z.literal("plan").default("plan"),
  stack: z.string(),
  agents: z.array(agentPlanSchema),
  overlays: z.array(z.string()),
  behave: behaveSummarySchema.optional(),
  /** Policy violations in all, and those about no agent. */
  policy: z
    .looseObject({ mandatory: z.int().min(0), advisory: z.int().min(0), other: z.array(policyViolationSchema) })
    .optional(),
  /** With `plan --behave`: its calls as a run report (kind "behave"); written to its own files, not into the plan's JSON. */
  behave_report: reportSchema.optional(),
});

export type Action = z.output<typeof actionSchema>;
export type PolicyViolation = z.output<typeof policyViolationSchema>;
export type FieldChange = { path: string; before?: unknown; after?: unknown };
export type PlannedRequest = {
  name: unknown;
  description: unknown;
  config: unknown;
  postprocess_agents?: { key: string; id: unknown }[];
};
export type UnmetExpectation = { description: string; detail: string | null; context: string[] };
export type BehaviourScenario = {
  scenario: string;
  status: "passed" | "failed" | "error" | "not_run";
  iterations: number;
  passes: number;
  conversation_ids: string[];
  unmet: UnmetExpectation[];
  error: string | null;
};
export type AgentBehaviour =
  | {
      previewed: true;
      version_id: string;
      override_sections: string[];
      passed: number;
      failed: number;
      not_run?: number;
      scenarios: BehaviourScenario[];
    }
  | { previewed: false; reason: string };
export type BehaveSummary = {
  previewed: string[];
  not_previewed: { agent: string; reason: string }[];
  scenarios: number;
  passed: number;
  failed: number;
  errors: number;
  not_run?: number;
};
export type AgentPlan = {
  agent: string;
  kind: "conversational" | "procedural";
  action: Action;
  why: string;
  fields: FieldChange[];
  promptDiffs: Record<string, string>;
  request?: PlannedRequest;
  overlay?: string;
  behaviour?: AgentBehaviour;
  violations?: PolicyViolation[];
};
/** The plan's value (what `planSchema` reads back). */
export type Plan = {
  kind?: "plan";
  stack: string;
  agents: AgentPlan[];
  overlays: string[];
  behave?: BehaveSummary;
  policy?: { mandatory: number; advisory: number; other: PolicyViolation[] };
  behave_report?: Report;
};
