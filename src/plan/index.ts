// A reviewable plan from a `pulumi preview`: which agents are created, replaced, unchanged or
// removed and why, field by field, with prompt text as a unified diff. Built only from the
// preview's step events (the request bodies that would be sent), so no configuration value, key or
// token can appear in it. The plan is a report value of src/results; src/report renders it (Markdown for
// a pull-request comment, JSON for scripts).
import * as pulumi from "@pulumi/pulumi";
import { structuredPatch } from "diff";
import type { AgentDefinition } from "../definitions/index.ts";
import { AGENT_TYPE_PREFIX, agentKeyOf } from "../provider/index.ts";
import {
  type Action,
  type AgentPlan,
  type FieldChange,
  type Plan,
  type PlannedRequest,
  type PolicyViolation,
  UNKNOWN_TEXT,
} from "../results/index.ts";
import type { PlanInputs } from "./behave.ts";
import { policyRecorder } from "./policy.ts";

export type { AgentPlan, FieldChange, Plan } from "../results/index.ts";
export {
  attachBehaviour,
  type BehaviourTarget,
  behaveReport,
  behaviourTargets,
  type PlanInputs,
} from "./behave.ts";

/** Pulumi's placeholder for values known only after apply (e.g. the id of a replaced agent). */
const UNKNOWN = pulumi.runtime.unknownValue;
const IGNORED_INPUTS = new Set(["__provider", "agentId", "versionId"]);

/** Collects preview step events; call `plan()` once the preview has finished. */
export function planRecorder(stack: string, definitions: AgentDefinition[]) {
  const steps = new Map<string, pulumi.automation.StepEventMetadata>();
  const policy = policyRecorder();
  const onEvent = (event: pulumi.automation.EngineEvent) => {
    policy.onEvent(event);
    const metadata = event.resourcePreEvent?.metadata;
    if (!metadata?.type.startsWith(AGENT_TYPE_PREFIX)) return;
    const name = agentKeyOf(metadata.urn);
    // A replacement shows as several steps (create-replacement, replace, delete-replaced); keep the most telling.
    const previous = steps.get(name);
    if (!previous || rank(metadata.op) > rank(previous.op)) steps.set(name, metadata);
  };
  /** The request bodies before and after, per agent (what the behaviour preview sends as override_config). */
  const inputs = (): PlanInputs =>
    new Map(
      [...steps].map(([name, step]) => [
        name,
        { before: inputsOf(step.old?.inputs), after: inputsOf(step.new?.inputs) },
      ]),
    );
  const plan = () => withViolations(buildPlan(stack, definitions, steps), policy);
  return { onEvent, plan, inputs, mandatoryViolations: policy.mandatory };
}

function withViolations(plan: Plan, policy: ReturnType<typeof policyRecorder>): Plan {
  let mandatory = 0;
  let advisory = 0;
  const count = (list: PolicyViolation[]) => {
    for (const v of list) v.level === "mandatory" ? mandatory++ : advisory++;
  };
  for (const agent of plan.agents) {
    const violations = policy.violations(agent.agent);
    if (violations.length > 0) agent.violations = violations;
    count(violations);
  }
  count(policy.other());
  if (mandatory + advisory > 0) plan.policy = { mandatory, advisory, other: policy.other() };
  return plan;
}

function rank(op: string): number {
  return op === "replace" ? 3 : op === "create-replacement" || op === "delete-replaced" ? 2 : 1;
}

function actionOf(op: string): Action {
  if (op === "create") return "create";
  if (op === "delete") return "remove";
  if (op === "same" || op === "read" || op === "refresh") return "unchanged";
  return "replace";
}

function buildPlan(
  stack: string,
  definitions: AgentDefinition[],
  steps: Map<string, pulumi.automation.StepEventMetadata>,
): Plan {
  const byKey = new Map(definitions.map((d) => [d.key, d]));
  const agents: AgentPlan[] = [];
  for (const [name, step] of steps) {
    const definition = byKey.get(name);
    const kind = step.type.endsWith("ProceduralAgent") ? "procedural" : "conversational";
    const action = actionOf(step.op);
    const before = inputsOf(step.old?.inputs);
    const after = action === "remove" ? {} : inputsOf(step.new?.inputs);
    const fields = action === "unchanged" || action === "remove" ? [] : fieldChanges(before, after);
    const promptDiffs: Record<string, string> = {};
    for (const change of fields) {
      if (
        /prompt\.text$/.test(change.path) &&
        (typeof change.before === "string" || typeof change.after === "string")
      ) {
        promptDiffs[change.path] = unifiedDiff(
          typeof change.before === "string" ? change.before : "",
          typeof change.after === "string" ? change.after : "",
        );
      }
    }
    agents.push({
      agent: name,
      kind,
      action,
      why: "",
      fields,
      promptDiffs,
      ...(action === "create" ? { request: requestOf(after, definition) } : {}),
      ...(definition?.overlay ? { overlay: definition.overlay } : {}),
    });
  }
  const replaced = new Set(agents.filter((a) => a.action === "replace" || a.action === "create").map((a) => a.agent));
  for (const agent of agents) agent.why = reason(agent, byKey.get(agent.agent), replaced);
  agents.sort((a, b) => order(a) - order(b) || a.agent.localeCompare(b.agent));
  const overlays = definitions.flatMap((d) => (d.overlay ? [d.overlay] : []));
  return { kind: "plan", stack, agents, overlays };
}

/** A created agent's request body; linked procedural agents named by key next to their id. */
function requestOf(inputs: Record<string, unknown>, definition: AgentDefinition | undefined): PlannedRequest {
  const { name, description, config, postprocess_agents: ids } = inputs;
  const request: PlannedRequest = { name, description, config };
  if (Array.isArray(ids)) {
    request.postprocess_agents = ids.map((id, i) => ({
      key: definition?.postprocessAgents[i] ?? "?",
      id: id === UNKNOWN ? UNKNOWN_TEXT : id,
    }));
  } else if (ids === UNKNOWN && definition) {
    request.postprocess_agents = definition.postprocessAgents.map((key) => ({ key, id: UNKNOWN_TEXT }));
  }
  return request;
}

/** The hunks of a unified diff (3 lines of context), without file headers: the field is named above it. */
function unifiedDiff(before: string, after: string): string {
  const { hunks } = structuredPatch("before", "after", before, after, "", "", { context: 3 });
  return hunks
    .map((h) => [`@@ -${h.oldStart},${h.oldLines} +${h.newStart},${h.newLines} @@`, ...h.lines].join("\n"))
    .join("\n");
}

function order(agent: AgentPlan): number {
  return ["remove", "replace", "create", "unchanged"].indexOf(agent.action) * 2 + (agent.kind === "procedural" ? 0 : 1);
}

function reason(agent: AgentPlan, definition: AgentDefinition | undefined, replaced: Set<string>): string {
  switch (agent.action) {
    case "create":
      return "new agent";
    case "remove":
      return "file removed: dropped from the stack, the service keeps the agent";
    case "unchanged":
      return "";
  }
  const own = agent.fields.filter((f) => !(f.path.startsWith("postprocess_agents") && f.after === UNKNOWN_TEXT));
  const linked = (definition?.postprocessAgents ?? []).filter((key) => replaced.has(key));
  const parts: string[] = [];
  if (own.length > 0) parts.push(`changed: ${[...new Set(own.map((f) => f.path))].join(", ")}`);
  for (const key of linked) parts.push(`linked procedural agent \`${key}\` is replaced`);
  return parts.join("; ") || "changed";
}

function inputsOf(inputs: Record<string, unknown> | undefined): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(inputs ?? {})) {
    if (!IGNORED_INPUTS.has(key)) out[key] = value;
  }
  return out;
}

/** Leaf-level differences between two JSON values, with dotted paths (`config.runtime.model`). */
export function fieldChanges(before: unknown, after: unknown, prefix = ""): FieldChange[] {
  const show = (value: unknown) => (value === UNKNOWN ? UNKNOWN_TEXT : value);
  const isObject = (value: unknown): value is Record<string, unknown> =>
    typeof value === "object" && value !== null && !Array.isArray(value);
  if (isObject(before) && isObject(after)) {
    const keys = [...new Set([...Object.keys(before), ...Object.keys(after)])].sort();
    return keys.flatMap((key) => fieldChanges(before[key], after[key], prefix ? `${prefix}.${key}` : key));
  }
  if (JSON.stringify(before) === JSON.stringify(after)) return [];
  if (Array.isArray(after) && after.includes(UNKNOWN)) {
    return [{ path: prefix, before, after: UNKNOWN_TEXT }];
  }
  return [{ path: prefix, before: show(before), after: show(after) }];
}
