// The report value of `agent-iac plan`: which agents a preview would create, replace (and why),
// leave unchanged or remove, field by field, and with `--behave` how the changed agents behave on
// their scenarios (its calls are a run report of kind "behave", written to its own files). Built by
// src/plan from the preview's step events; rendered here (plan-markdown.ts, JSON).
import type { StackSettingChange } from "../settings/index.ts";
import type { Report } from "./schema.ts";

/** Pulumi's placeholder for a value known only after apply, as the plan shows it. */
export const UNKNOWN_TEXT = "(known after apply)";

export type Action = "create" | "replace" | "unchanged" | "remove";
/** A policy pack's violation in a plan (agent-iac's pack, or any pack the stack names). */
export type PolicyViolation = {
  /** The rule (policy) name, e.g. `agent-allowed-models`. */
  rule: string;
  level: string;
  /** The policy pack that reported it. */
  pack: string;
  message: string;
  urn: string;
};
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
  status: "passed" | "failed" | "error" | "not_run" | "inconclusive";
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
      /** Scenarios that could not complete (counted apart from `failed`). */
      errors?: number;
      /** Scenarios whose calls decided nothing (counted apart from `failed`). */
      inconclusive?: number;
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
  inconclusive?: number;
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
/**
 * The stack-setting changes: against a pull request's base (`base`, a git ref), or, in a plan
 * without one, against the settings of the stack's last successful deploy (`deployed`: Pulumi's
 * record of that update; `first` when the stack has never been deployed, every setting added).
 */
export type PlanSettings = {
  base?: string;
  deployed?: { update: number; ended: string } | { first: true };
  changes: StackSettingChange[];
};
/** The plan's value (rendered as Markdown and JSON). */
export type Plan = {
  kind?: "plan";
  stack: string;
  agents: AgentPlan[];
  overlays: string[];
  behave?: BehaveSummary;
  policy?: { mandatory: number; advisory: number; other: PolicyViolation[] };
  behave_report?: Report;
  settings?: PlanSettings;
  /** The pull request re-blesses the stack's drift baseline (baselines/<stack>.json): named for review. */
  baseline?: { file: string; base: string; change: "added" | "changed" | "removed" };
  /** What this plan could not do, and why (e.g. no credentials: no preview of the stack's state). */
  limits?: string[];
  /** What a partial plan checked instead (the files, the org rules offline). */
  checked?: string[];
};
