// The plan (plan.ts) as Markdown for a pull-request comment: a table of agents with what happens
// to each and why, each changed agent's fields (short values inline, long ones whole in a folded
// block), prompt changes as unified diffs, a created agent's whole request, and with --behave each
// scenario's result under its agent. The plan's own text (paths, reasons) is written by this tool;
// values from agent files go into code spans and fenced blocks (src/escape).
import { stringify } from "yaml";
import { codeSpan, fenced, markdownText, tableCell } from "../escape/index.ts";
import {
  type Action,
  type AgentBehaviour,
  type AgentPlan,
  type BehaveSummary,
  type FieldChange,
  type Plan,
  type PlannedRequest,
  type PlanSettings,
  type PolicyViolation,
  UNKNOWN_TEXT,
} from "../results/index.ts";
import { guardedConsequence } from "../settings/guarded.ts";
import type { StackSettingChange } from "../settings/index.ts";

const FOLD_LINES = 30;
/** Longer values are shown as a block, never cut. */
const INLINE_MAX = 120;

export function planMarkdown(plan: Plan): string {
  const changed = plan.agents.filter((a) => a.action !== "unchanged");
  const lines = [`## Agent plan for stack \`${plan.stack}\``, ""];
  if (plan.limits?.length) lines.push(...limitLines(plan.limits, plan.checked ?? []), "");
  if (plan.settings?.changes.length) lines.push(...settingLines(plan.stack, plan.settings), "");
  if (plan.baseline) lines.push(...baselineLines(plan.baseline), "");
  if (plan.limits?.length && plan.agents.length === 0) {
    // No preview ran: no agent list to show.
  } else if (changed.length === 0) {
    lines.push(`No changes: ${plan.agents.length} agent(s) unchanged.`);
  } else {
    const count = (action: Action) => plan.agents.filter((a) => a.action === action).length;
    lines.push(
      `${count("create")} to create, ${count("replace")} to replace, ${count("remove")} to remove, ${count("unchanged")} unchanged.`,
      "",
      "| agent | kind | action | why |",
      "|---|---|---|---|",
      ...plan.agents.map((a) => `| \`${a.agent}\` | ${a.kind} | ${a.action} | ${tableCell(a.why)} |`),
    );
  }
  if (plan.overlays.length > 0) lines.push("", `Overlays applied: ${plan.overlays.map((o) => `\`${o}\``).join(", ")}.`);
  if (plan.behave && changed.length > 0) lines.push("", ...behaveSummaryLines(plan.behave));
  if (plan.policy) {
    const { mandatory, advisory, other } = plan.policy;
    lines.push("", `**Policy:** ${mandatory} mandatory, ${advisory} advisory violation(s).`, ...violationLines(other));
  }
  const shown = plan.agents.filter(
    (a) => (a.action !== "unchanged" && (a.fields.length > 0 || a.request || a.behaviour)) || a.violations?.length,
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

/**
 * The plan's job summary: the behaviour preview's, unless the plan fails on its own account (a
 * guarded setting changed, a mandatory violation): then ❌ with the reasons, never a ✅.
 */
export function planJobSummary(plan: Plan, behaviourSummary: (report: NonNullable<Plan["behave_report"]>) => string) {
  const reasons: string[] = [];
  const held = (plan.settings?.changes ?? []).filter((c) => c.guarded);
  if (held.length > 0) {
    reasons.push(`the pull request changes ${held.map((c) => `\`${c.key}\``).join(", ")}: a human must review it`);
  }
  if (plan.policy?.mandatory) reasons.push(`${plan.policy.mandatory} mandatory policy violation(s)`);
  if (reasons.length === 0 && plan.behave && plan.behave.scenarios === 0) {
    // Nothing was played: no ✅ over an empty table (nothing checked is never passed), but what the plan is.
    const changed = plan.agents.filter((a) => a.action !== "unchanged").length;
    const skipped = plan.behave.not_previewed.length;
    return `### Agent plan for stack \`${plan.stack}\`: ${changed} agent(s) change; no scenario played (${skipped} changed agent(s) could not be previewed, each with its reason in the plan)`;
  }
  if (reasons.length === 0) return plan.behave_report ? behaviourSummary(plan.behave_report) : undefined;
  const behave = plan.behave ? ["", ...behaveSummaryLines(plan.behave)] : [];
  return [`### ❌ Agent plan for stack \`${plan.stack}\`: ${reasons.join("; ")}`, ...behave].join("\n");
}

/** What the run could not do, said before anything it did. */
function limitLines(limits: string[], checked: string[]): string[] {
  const done = checked.length > 0 ? [">", "> It checked:", ...checked.map((c) => `> - ${markdownText(c)}`)] : [];
  return ["> **This plan is partial.** It could not:", ...limits.map((l) => `> - ${markdownText(l)}`), ...done];
}

/** After merge, what a changed guarded setting makes the stack's deploy do. */
function consequence(stack: string, change: StackSettingChange): string {
  const to =
    change.after !== undefined
      ? codeSpan(change.after)
      : change.change === "removed"
        ? "what the environment names, if anything"
        : "the new value";
  return guardedConsequence(change.key, stack, to);
}

/** What the settings were compared with: the pull request's base, the last deploy, or none (a first deploy). */
function settingsHeading(settings: PlanSettings): string {
  const deployed = settings.deployed;
  if (settings.base !== undefined) return `Stack settings changed (against ${codeSpan(settings.base)})`;
  if (deployed && "ended" in deployed) {
    return `Stack settings changed since the last deploy (update ${deployed.update}, ${deployed.ended})`;
  }
  return "Stack settings of the first deploy (the stack has never been deployed)";
}

/** Each changed agents:* setting; those the preview read from the base first, marked. */
function settingLines(stack: string, settings: PlanSettings): string[] {
  const { changes } = settings;
  const held = changes.filter((c) => c.guarded);
  const value = (v: string | undefined) => (v === undefined ? "(unset)" : codeSpan(v));
  const line = (c: StackSettingChange) => {
    const what = c.secret ? `${c.change} (secret, value not shown)` : `${value(c.before)} → ${value(c.after)}`;
    return c.guarded ? `- ⚠️ \`${c.key}\`: ${what} — **${consequence(stack, c)}**` : `- \`${c.key}\`: ${what}`;
  };
  const lines = [`### ${held.length > 0 ? "⚠️ " : ""}${settingsHeading(settings)}`, ""];
  if (held.length > 0) {
    lines.push(
      "**A human must review this:** these settings decide where the credentials and transcripts go or what code " +
        "runs. This preview used the base's values: nothing was sent to the new ones and no new pack ran.",
      "",
    );
  }
  return [...lines, ...changes.map(line)];
}

function behaveSummaryLines(summary: BehaveSummary): string[] {
  const lines: string[] = [];
  if (summary.scenarios > 0) {
    lines.push(
      `**Behaviour preview** (scenarios played against the deployed versions with the proposed config; test calls): ` +
        `${behaviourCounts(summary)}.`,
    );
  } else lines.push("**Behaviour preview:** no changed agent could be previewed.");
  if (summary.not_previewed.length > 0) {
    lines.push("", "Not previewed:", "", ...summary.not_previewed.map((n) => `- \`${n.agent}\`: ${n.reason}`));
  }
  return lines;
}

/** `2 passed, 1 failed, 1 inconclusive`: a behaviour preview's counts in scenarios, as the behaviour report's. */
export function behaviourCounts(c: {
  passed: number;
  failed: number;
  errors?: number;
  inconclusive?: number;
  not_run?: number;
}): string {
  const more = [
    ...(c.inconclusive ? [`${c.inconclusive} inconclusive`] : []),
    ...(c.errors ? [`${c.errors} could not complete`] : []),
    ...(c.not_run ? [`${c.not_run} not run`] : []),
  ];
  return [`${c.passed} passed`, `${c.failed} failed`, ...more].join(", ");
}

/** Under an agent's diff: each scenario's result with its unmet expectations and nearest transcript lines. */
function behaviourLines(behaviour: AgentBehaviour): string[] {
  if (!behaviour.previewed) return [`**Behaviour:** not previewed: ${behaviour.reason}.`];
  const sections = behaviour.override_sections.map((s) => `\`${s}\``).join(", ");
  const lines = [
    `**Behaviour with the proposed config** (against \`${behaviour.version_id}\`, override_config ${sections}): ` +
      behaviourCounts(behaviour),
    "",
  ];
  for (const scenario of behaviour.scenarios) {
    const runs = scenario.iterations > 1 ? ` (${scenario.passes}/${scenario.iterations} iterations passed)` : "";
    if (scenario.status === "passed") {
      lines.push(`- ✓ \`${scenario.scenario}\`${runs}`);
      continue;
    }
    if (scenario.status === "not_run") {
      lines.push(`- ○ \`${scenario.scenario}\`: ${scenario.error ?? "not run"}`);
      continue;
    }
    if (scenario.status === "inconclusive") {
      lines.push(`- ? \`${scenario.scenario}\`${runs}: inconclusive (its calls decided nothing)`);
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

function displayValue(value: unknown): string {
  if (value === undefined) return "(absent)";
  if (typeof value === "string") return value;
  return stringify(value, { lineWidth: 0 }).trimEnd();
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** A short one-line value as a code span; undefined when it is too long or spans lines (shown as a block instead). */
function inline(value: unknown): string | undefined {
  if (value === undefined) return "_(absent)_";
  if (value === UNKNOWN_TEXT) return `_${UNKNOWN_TEXT}_`;
  const text = typeof value === "string" ? value : JSON.stringify(value);
  if (text.length > INLINE_MAX || /[\r\n]/.test(text)) return undefined;
  return codeSpan(text);
}

/** The plan as JSON for scripts (its behaviour report is written to its own file). */
export function planJson(plan: Plan): string {
  const { behave_report: _calls, ...rest } = plan;
  return `${JSON.stringify(rest, null, 2)}\n`;
}

/** A plan's policy violations, each with its level, rule and pack. */
function violationLines(violations: readonly PolicyViolation[]): string[] {
  if (violations.length === 0) return [];
  return [
    "",
    "**Policy violations:**",
    "",
    ...violations.map(
      (v) => `- **${markdownText(v.level)}** ${codeSpan(v.rule)} (${markdownText(v.pack)}): ${markdownText(v.message)}`,
    ),
  ];
}

/** A re-blessed drift baseline: what `agent-iac drift` holds the stack's versions to changes with this merge. */
function baselineLines(baseline: NonNullable<Plan["baseline"]>): string[] {
  return [
    `### ⚠️ Drift baseline ${baseline.change}: ${codeSpan(baseline.file)} (against ${codeSpan(baseline.base)})`,
    "",
    "**A human must review this:** after merge, `agent-iac drift` decides this stack's versions against it. " +
      "Check its versions, counts and models against the smoke reports it was blessed from.",
  ];
}
