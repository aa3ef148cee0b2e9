// A reviewable plan from a `pulumi preview`: which agents are created, replaced, unchanged or
// removed and why, field by field, with prompt text as a unified diff. Rendered as Markdown for a
// pull-request comment and as JSON for scripts. Built only from the preview's step events (the
// request bodies that would be sent), so no configuration value, key or token can appear in it.
import * as pulumi from "@pulumi/pulumi";
import { structuredPatch } from "diff";
import { stringify } from "yaml";
import type { AgentDefinition } from "../definitions/index.ts";
import { AGENT_TYPE_PREFIX } from "../provider/index.ts";
import type { AgentBehaviour, BehaveSummary, PlanInputs } from "./behave.ts";
import { type PolicyViolation, policyRecorder, violationLines } from "./policy.ts";

export {
  type AgentBehaviour,
  attachBehaviour,
  type BehaveSummary,
  type BehaviourScenario,
  type BehaviourTarget,
  behaveReport,
  behaviourTargets,
  type PlanInputs,
  previewBehaviour,
} from "./behave.ts";
export type { PolicyViolation } from "./policy.ts";

export type Action = "create" | "replace" | "unchanged" | "remove";

export type FieldChange = { path: string; before?: unknown; after?: unknown };

/** The whole request body that creates an agent, as a reviewer must see it. */
export type PlannedRequest = {
  name: unknown;
  description: unknown;
  /** Exactly what is sent (prompt files already read). */
  config: unknown;
  /** Linked procedural agents by key, with their id ("(known after apply)" when it is created in the same run). */
  postprocess_agents?: { key: string; id: unknown }[];
};

export type AgentPlan = {
  agent: string;
  kind: "conversational" | "procedural";
  action: Action;
  why: string;
  fields: FieldChange[];
  /** Unified diffs of changed prompt texts, keyed by field path. */
  promptDiffs: Record<string, string>;
  /** For a created agent: the whole request body. */
  request?: PlannedRequest;
  overlay?: string;
  /** With `plan --behave`: the scenarios' results with the proposed config, or why it was not previewed. */
  behaviour?: AgentBehaviour;
  /** The policy packs' violations about this agent (a stack that names a pack). */
  violations?: PolicyViolation[];
};

export type Plan = {
  stack: string;
  agents: AgentPlan[];
  overlays: string[];
  behave?: BehaveSummary;
  /** Policy violations in all, and those about no agent. */
  policy?: { mandatory: number; advisory: number; other: PolicyViolation[] };
};

/** Pulumi's placeholder for values known only after apply (e.g. the id of a replaced agent). */
const UNKNOWN = pulumi.runtime.unknownValue;
const IGNORED_INPUTS = new Set(["__provider", "agentId", "versionId"]);
const FOLD_LINES = 30;
/** Longer values are shown as a block, never cut. */
const INLINE_MAX = 120;

/** Collects preview step events; call `plan()` once the preview has finished. */
export function planRecorder(stack: string, definitions: AgentDefinition[]) {
  const steps = new Map<string, pulumi.automation.StepEventMetadata>();
  const policy = policyRecorder();
  const onEvent = (event: pulumi.automation.EngineEvent) => {
    policy.onEvent(event);
    const metadata = event.resourcePreEvent?.metadata;
    if (!metadata?.type.startsWith(AGENT_TYPE_PREFIX)) return;
    const name = metadata.urn.split("::").at(-1) ?? metadata.urn;
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
  return { stack, agents, overlays };
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

const UNKNOWN_TEXT = "(known after apply)";

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

export function renderMarkdown(plan: Plan): string {
  const changed = plan.agents.filter((a) => a.action !== "unchanged");
  const lines = [`## Agent plan for stack \`${plan.stack}\``, ""];
  if (changed.length === 0) {
    lines.push(`No changes: ${plan.agents.length} agent(s) unchanged.`);
  } else {
    const count = (action: Action) => plan.agents.filter((a) => a.action === action).length;
    lines.push(
      `${count("create")} to create, ${count("replace")} to replace, ${count("remove")} to remove, ${count("unchanged")} unchanged.`,
      "",
      "| agent | kind | action | why |",
      "|---|---|---|---|",
      ...plan.agents.map((a) => `| \`${a.agent}\` | ${a.kind} | ${a.action} | ${cell(a.why)} |`),
    );
  }
  if (plan.overlays.length > 0) lines.push("", `Overlays applied: ${plan.overlays.map((o) => `\`${o}\``).join(", ")}.`);
  if (plan.behave && changed.length > 0) lines.push("", ...behaveSummaryLines(plan.behave));
  if (plan.policy) {
    const { mandatory, advisory, other } = plan.policy;
    lines.push("", `**Policy:** ${mandatory} mandatory, ${advisory} advisory violation(s).`, ...violationLines(other));
  }
  const shown = plan.agents.filter(
    (a) => (a.action !== "unchanged" && (a.fields.length > 0 || a.request || a.behaviour)) || a.violations,
  );
  for (const agent of shown) {
    const from = agent.overlay ? `, with overlay \`${agent.overlay}\`` : "";
    lines.push("", `### \`${agent.agent}\` (${agent.action}${from})`);
    if (agent.violations) lines.push(...violationLines(agent.violations));
    if (agent.action === "unchanged") continue;
    if (agent.request) lines.push(...requestLines(agent.request));
    else lines.push(...changeLines(agent));
    if (agent.behaviour) lines.push("", ...behaviourLines(agent.behaviour));
  }
  if (plan.agents.some((a) => a.action === "replace" || a.action === "remove")) {
    lines.push(
      "",
      "> Agents cannot be updated or deleted through the service: a replaced agent is created anew (new id and " +
        "version id) and the old one stays on the service with its version ids, which is also the rollback path.",
    );
  }
  return `${lines.join("\n")}\n`;
}

function behaveSummaryLines(summary: BehaveSummary): string[] {
  const lines: string[] = [];
  if (summary.scenarios > 0) {
    const failed = summary.failed + summary.errors;
    lines.push(
      `**Behaviour preview** (scenarios played against the deployed versions with the proposed config; test calls): ` +
        `${summary.passed} passed, ${failed} failed.`,
    );
  } else lines.push("**Behaviour preview:** no changed agent could be previewed.");
  if (summary.not_previewed.length > 0) {
    lines.push("", "Not previewed:", "", ...summary.not_previewed.map((n) => `- \`${n.agent}\`: ${n.reason}`));
  }
  return lines;
}

/** Under an agent's diff: each scenario's result with its unmet expectations and nearest transcript lines. */
function behaviourLines(behaviour: AgentBehaviour): string[] {
  if (!behaviour.previewed) return [`**Behaviour:** not previewed: ${behaviour.reason}.`];
  const sections = behaviour.override_sections.map((s) => `\`${s}\``).join(", ");
  const lines = [
    `**Behaviour with the proposed config** (against \`${behaviour.version_id}\`, override_config ${sections}): ` +
      `${behaviour.passed} passed, ${behaviour.failed} failed`,
    "",
  ];
  for (const scenario of behaviour.scenarios) {
    const runs = scenario.iterations > 1 ? ` (${scenario.passes}/${scenario.iterations} iterations passed)` : "";
    if (scenario.status === "passed") {
      lines.push(`- ✓ \`${scenario.scenario}\`${runs}`);
      continue;
    }
    lines.push(`- ✗ \`${scenario.scenario}\`${runs}${scenario.error ? `: ${scenario.error}` : ""}`);
    for (const unmet of scenario.unmet) {
      lines.push(`  - ${unmet.description}${unmet.detail ? `: ${unmet.detail}` : ""}`);
      if (unmet.context.length > 0)
        lines.push(
          "",
          ...fenced(unmet.context.join("\n"), "text")
            .flatMap((l) => l.split("\n"))
            .map((l) => `    ${l}`),
          "",
        );
    }
  }
  return lines;
}

/** A replaced agent's changed fields: short values inline, long ones whole in a folded block. */
function changeLines(agent: AgentPlan): string[] {
  const lines: string[] = [];
  const plain = agent.fields.filter((field) => agent.promptDiffs[field.path] === undefined);
  if (plain.length > 0) lines.push("");
  const long: FieldChange[] = [];
  for (const field of plain) {
    const before = inline(field.before);
    const after = inline(field.after);
    if (before !== undefined && after !== undefined) lines.push(`- \`${field.path}\`: ${before} → ${after}`);
    else {
      lines.push(`- \`${field.path}\`: changed (shown whole below)`);
      long.push(field);
    }
  }
  for (const field of long) {
    const block = [
      "before:",
      "",
      ...fenced(displayValue(field.before), "yaml"),
      "",
      "after:",
      "",
      ...fenced(displayValue(field.after), "yaml"),
    ];
    lines.push("", ...folded(`<code>${field.path}</code>`, block, true));
  }
  for (const [field, patch] of Object.entries(agent.promptDiffs)) {
    const block = fenced(patch.trimEnd(), "diff");
    const count = patch.split("\n").length;
    if (count > FOLD_LINES) lines.push("", ...folded(`<code>${field}</code> (${count} lines of diff)`, block, true));
    else lines.push("", `\`${field}\`:`, "", ...block);
  }
  return lines;
}

/** A created agent's whole request: config as YAML, prompts as their text, links by key and id. */
function requestLines(request: PlannedRequest): string[] {
  const lines = ["", "The request that creates it, whole:", ""];
  for (const key of ["name", "description"] as const) {
    const shown = inline(request[key]);
    if (shown !== undefined) lines.push(`- \`${key}\`: ${shown}`);
    else lines.push(`- \`${key}\`:`, "", ...fenced(displayValue(request[key]), "text").map((l) => `  ${l}`));
  }
  if (request.postprocess_agents) {
    const links = request.postprocess_agents.map(
      ({ key, id }) => `\`${key}\` (${id === UNKNOWN_TEXT ? `_${UNKNOWN_TEXT}_` : (inline(id) ?? "?")})`,
    );
    lines.push(`- \`postprocess_agents\`: ${links.join(", ") || "_(none)_"}`);
  }
  const { config, prompts } = withoutPrompts(request.config);
  const yaml = stringify(config, { lineWidth: 0 }).trimEnd();
  lines.push("", ...folded("<code>config</code>", fenced(yaml, "yaml"), yaml.split("\n").length > FOLD_LINES));
  for (const [field, text] of Object.entries(prompts)) {
    const body = text.replace(/\n$/, "");
    const count = body.split("\n").length;
    lines.push("", ...folded(`<code>${field}</code> (${count} lines)`, fenced(body, "text"), count > FOLD_LINES));
  }
  return lines;
}

/** The config with its prompt texts replaced by a pointer; the texts, by field path. */
function withoutPrompts(config: unknown): { config: unknown; prompts: Record<string, string> } {
  const runtime = isObject(config) && isObject(config.runtime) ? config.runtime : undefined;
  const prompt = runtime && isObject(runtime.prompt) ? runtime.prompt : undefined;
  if (!runtime || !prompt || typeof prompt.text !== "string" || !isObject(config)) return { config, prompts: {} };
  const field = "config.runtime.prompt.text";
  return {
    config: { ...config, runtime: { ...runtime, prompt: { ...prompt, text: `(shown below: ${field})` } } },
    prompts: { [field]: prompt.text },
  };
}

/** A block under a `<details>` summary when `fold`, else under a plain label. */
function folded(summary: string, block: string[], fold: boolean): string[] {
  if (fold) return [`<details><summary>${summary}</summary>`, "", ...block, "", "</details>"];
  return [`${summary.replace(/<\/?code>/g, "`").replace(/ \(\d+ lines\)$/, "")}:`, "", ...block];
}

/** A fenced code block whose fence is longer than any backtick run in the content, so no line can close it. */
export function fenced(content: string, language: string): string[] {
  const longest = Math.max(0, ...(content.match(/`+/g) ?? []).map((run) => run.length));
  const fence = "`".repeat(Math.max(3, longest + 1));
  return [`${fence}${language}`, content, fence];
}

function displayValue(value: unknown): string {
  if (value === undefined) return "(absent)";
  if (typeof value === "string") return value;
  return stringify(value, { lineWidth: 0 }).trimEnd();
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

export function renderJson(plan: Plan): string {
  return `${JSON.stringify(plan, null, 2)}\n`;
}

/** A short one-line value as a code span; undefined when it is too long or spans lines (shown as a block instead). */
function inline(value: unknown): string | undefined {
  if (value === undefined) return "_(absent)_";
  if (value === UNKNOWN_TEXT) return `_${UNKNOWN_TEXT}_`;
  const text = typeof value === "string" ? value : JSON.stringify(value);
  if (text.length > INLINE_MAX || /[\r\n]/.test(text)) return undefined;
  // A code span's delimiter is a backtick run that does not occur inside it (CommonMark 6.1).
  const longest = Math.max(0, ...(text.match(/`+/g) ?? []).map((run) => run.length));
  const tick = "`".repeat(longest + 1);
  const pad = text.startsWith("`") || text.endsWith("`") ? " " : "";
  return `${tick}${pad}${text}${pad}${tick}`;
}

function cell(text: string): string {
  return text.replace(/\|/g, "\\|");
}
