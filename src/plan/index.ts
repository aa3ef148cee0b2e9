// A reviewable plan from a `pulumi preview`: which agents are created, replaced, unchanged or
// removed and why, field by field, with prompt text as a unified diff. Rendered as Markdown for a
// pull-request comment and as JSON for scripts. Built only from the preview's step events (the
// request bodies that would be sent), so no configuration value, key or token can appear in it.
import * as pulumi from "@pulumi/pulumi";
import { structuredPatch } from "diff";
import type { AgentDefinition } from "../definitions/index.ts";
import { AGENT_TYPE_PREFIX } from "../provider/index.ts";

export type Action = "create" | "replace" | "unchanged" | "remove";

export type FieldChange = { path: string; before?: unknown; after?: unknown };

export type AgentPlan = {
  agent: string;
  kind: "conversational" | "procedural";
  action: Action;
  why: string;
  fields: FieldChange[];
  /** Unified diffs of changed prompt texts, keyed by field path. */
  promptDiffs: Record<string, string>;
  overlay?: string;
};

export type Plan = { stack: string; agents: AgentPlan[]; overlays: string[] };

/** Pulumi's placeholder for values known only after apply (e.g. the id of a replaced agent). */
const UNKNOWN = pulumi.runtime.unknownValue;
const IGNORED_INPUTS = new Set(["__provider", "agentId", "versionId"]);
const FOLD_LINES = 30;

/** Collects preview step events; call `plan()` once the preview has finished. */
export function planRecorder(stack: string, definitions: AgentDefinition[]) {
  const steps = new Map<string, pulumi.automation.StepEventMetadata>();
  const onEvent = (event: pulumi.automation.EngineEvent) => {
    const metadata = event.resourcePreEvent?.metadata;
    if (!metadata?.type.startsWith(AGENT_TYPE_PREFIX)) return;
    const name = metadata.urn.split("::").at(-1) ?? metadata.urn;
    // A replacement shows as several steps (create-replacement, replace, delete-replaced); keep the most telling.
    const previous = steps.get(name);
    if (!previous || rank(metadata.op) > rank(previous.op)) steps.set(name, metadata);
  };
  return { onEvent, plan: () => buildPlan(stack, definitions, steps) };
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
      ...(definition?.overlay ? { overlay: definition.overlay } : {}),
    });
  }
  const replaced = new Set(agents.filter((a) => a.action === "replace" || a.action === "create").map((a) => a.agent));
  for (const agent of agents) agent.why = reason(agent, byKey.get(agent.agent), replaced);
  agents.sort((a, b) => order(a) - order(b) || a.agent.localeCompare(b.agent));
  const overlays = definitions.flatMap((d) => (d.overlay ? [d.overlay] : []));
  return { stack, agents, overlays };
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
  for (const agent of changed.filter((a) => a.fields.length > 0)) {
    const from = agent.overlay ? `, with overlay \`${agent.overlay}\`` : "";
    lines.push("", `### \`${agent.agent}\` (${agent.action}${from})`);
    const plain = agent.fields.filter((field) => agent.promptDiffs[field.path] === undefined);
    if (plain.length > 0) lines.push("");
    for (const field of plain) {
      lines.push(`- \`${field.path}\`: ${inline(field.before)} → ${inline(field.after)}`);
    }
    for (const [field, patch] of Object.entries(agent.promptDiffs)) {
      const block = ["```diff", patch.trimEnd(), "```"];
      if (patch.split("\n").length > FOLD_LINES) {
        lines.push(
          "",
          `<details><summary><code>${field}</code> (${patch.split("\n").length} lines of diff)</summary>`,
          "",
          ...block,
          "",
          "</details>",
        );
      } else {
        lines.push("", `\`${field}\`:`, "", ...block);
      }
    }
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

export function renderJson(plan: Plan): string {
  return `${JSON.stringify(plan, null, 2)}\n`;
}

function inline(value: unknown): string {
  if (value === undefined) return "_(absent)_";
  if (value === UNKNOWN_TEXT) return `_${UNKNOWN_TEXT}_`;
  const text = typeof value === "string" ? value : JSON.stringify(value);
  const short = text.length > 120 ? `${text.slice(0, 117)}…` : text;
  return `\`${short.replace(/`/g, "'").replace(/\n/g, "⏎")}\``;
}

function cell(text: string): string {
  return text.replace(/\|/g, "\\|");
}
