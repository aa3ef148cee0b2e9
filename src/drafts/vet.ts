// Nothing unchecked is printed: each proposal of the model becomes a scenario only when it is one
// (a persona and a goal, each one line of plain text), names only tools, procedural agents and
// languages the agent has, validates against the agent-file schema (its errors at file:line, as an
// agent file's), repeats no scenario (same persona and goal), fits the call-minute budget and comes
// within the number asked. Every other is dropped with its reason, and the reasons are counted.
import { type AgentDefinition, formatDiagnostic, type SmokeScenario, scenariosInText } from "../definitions/index.ts";
import { yamlText } from "../escape/index.ts";
import { agentLanguages, agentTools } from "./model.ts";
import type { Scrubber } from "./pii.ts";

type DropKind =
  | "not a scenario"
  | "not plain text"
  | "unknown tool"
  | "unknown procedure"
  | "unknown language"
  | "invalid"
  | "duplicate"
  | "over budget"
  | "more than asked"
  | "failed the check";

/** How each reason reads in the count ("5 proposed, 4 kept: 1 named a tool the agent does not have"). */
const COUNTED: Record<DropKind, string> = {
  "not a scenario": "was not a scenario (a persona and a goal are needed)",
  "not plain text": "held text that is not one line of plain text",
  "unknown tool": "named a tool the agent does not have",
  "unknown procedure": "named a procedural agent the agent does not link",
  "unknown language": "named a language the agent does not speak",
  invalid: "did not validate against the agent-file schema",
  duplicate: "repeated an existing scenario (same persona and goal)",
  "over budget": "did not fit the call-minute budget",
  "more than asked": "came beyond the number asked",
  "failed the check": "failed on the pinned version",
};

export type Dropped = { name: string; kind: DropKind; reason: string };

export type Kept = {
  /** As printed (the YAML list item). */
  scenario: Record<string, unknown>;
  /** As the agent file's loader reads it (defaults applied). */
  parsed: SmokeScenario;
};

export type VetOptions = {
  agent: AgentDefinition;
  /** The scenarios the agent has already (persona and goal not to repeat, names not to reuse). */
  existing: readonly SmokeScenario[];
  channel: { callee_no: string };
  context?: Record<string, unknown> | undefined;
  scrubber: Scrubber;
  /** How many may be kept; proposals beyond are dropped. */
  count: number;
  maxCallMinutes?: number | undefined;
  /** Derive: what the call did (its tools, its procedures, its length) stands, not what the model says. */
  facts?: { tools: string[]; procedures: Record<string, string>; maxTurns: number } | undefined;
  /** Where a schema error is said to be (`proposed scenario N:line:column`). */
  label: string;
};

/** Longest persona, goal or rubric kept: a sentence or two. */
const MAX_TEXT = 500;
/** A persona's lines when the model gives no usable max_turns. */
const DEFAULT_TURNS = 6;

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value);

/** One line of plain text: no line break, control character or bidi override, and not too long. */
function plainText(value: string): boolean {
  // biome-ignore lint/suspicious/noControlCharactersInRegex: finding control characters is the point.
  return value.length <= MAX_TEXT && !/[\u0000-\u001f\u007f-\u009f\u2028\u2029\u202a-\u202e\u2066-\u2069]/.test(value);
}

/** A name as the agent file writes them: lower-case words joined by dashes. */
function slug(text: string, fallback: string): string {
  const words = text
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, "-")
    .replace(/^-+|-+$/g, "")
    .slice(0, 60)
    .replace(/-+$/, "");
  return words || fallback;
}

/**
 * The name of a scenario from what the model wrote: scrubbed like what it read (a name may echo a
 * number), slugged, and scrubbed again, since slugging joins what the scrubber saw apart
 * (`card 4111|1111|1111|1111` becomes `card-4111-1111-1111-1111`).
 */
function scrubbedSlug(written: string, scrubber: Scrubber, fallback: string): string {
  const name = slug(scrubber.text(written), fallback);
  const again = scrubber.text(name);
  return again === name ? name : slug(again, fallback);
}

const normalized = (text: string | undefined) =>
  (text ?? "")
    .toLowerCase()
    .replace(/[^\p{L}\p{N}]+/gu, " ")
    .trim();
const sameAs = (persona: string | undefined, goal: string | undefined) =>
  `${normalized(persona)}\u0000${normalized(goal)}`;

const strings = (value: unknown): string[] | undefined =>
  value === undefined || value === null
    ? []
    : Array.isArray(value) && value.every((item) => typeof item === "string")
      ? value
      : undefined;

export function vet(proposals: readonly unknown[], options: VetOptions): { kept: Kept[]; dropped: Dropped[] } {
  const kept: Kept[] = [];
  const dropped: Dropped[] = [];
  const names = new Set(options.existing.map((s) => s.name));
  const seen = new Map(
    options.existing.filter((s) => s.caller?.persona).map((s) => [sameAs(s.caller?.persona, s.caller?.goal), s.name]),
  );
  for (const [i, proposal] of proposals.entries()) {
    const fallback = `proposed-${i + 1}`;
    const written = isRecord(proposal) && typeof proposal.name === "string" ? proposal.name : "";
    const name = scrubbedSlug(written, options.scrubber, fallback);
    const drop = (kind: DropKind, reason: string) =>
      dropped.push({ name, kind, reason: options.scrubber.text(reason) });
    if (i >= options.count) {
      drop("more than asked", `proposal ${i + 1} of ${proposals.length}, ${options.count} asked`);
      continue;
    }
    const made = scenarioOf(proposal, name, options);
    if ("kind" in made) {
      drop(made.kind, made.reason);
      continue;
    }
    let unique = made.name;
    for (let n = 2; names.has(unique); n++) unique = `${made.name}-${n}`;
    const scenario = { ...made.scenario, name: unique };
    const { scenarios, errors } = scenariosInText(`${options.label} ${i + 1}`, yamlText({ smoke: [scenario] }));
    const parsed = scenarios[0];
    if (errors.length > 0 || !parsed) {
      drop("invalid", errors.map(formatDiagnostic).join("; ") || "no scenario read back");
      continue;
    }
    const key = sameAs(made.persona, made.goal);
    const twin = seen.get(key);
    if (twin !== undefined) {
      drop("duplicate", `the same persona and goal as scenario ${twin}`);
      continue;
    }
    const minutes = (parsed.iterations * parsed.timeout) / 60;
    if (options.maxCallMinutes !== undefined && minutes > options.maxCallMinutes) {
      drop("over budget", `its worst case is ${minutes} call minutes, over the budget of ${options.maxCallMinutes}`);
      continue;
    }
    seen.set(key, unique);
    names.add(unique);
    kept.push({ scenario, parsed });
  }
  return { kept, dropped };
}

type Made = { name: string; persona: string; goal: string; scenario: Record<string, unknown> };

/** The scenario a proposal describes, or why it describes none the agent can run. */
function scenarioOf(proposal: unknown, name: string, options: VetOptions): Made | { kind: DropKind; reason: string } {
  if (!isRecord(proposal) || typeof proposal.persona !== "string" || typeof proposal.goal !== "string") {
    return { kind: "not a scenario", reason: "it has no persona or goal (text)" };
  }
  const judge = strings(proposal.judge);
  const tools = options.facts ? options.facts.tools : strings(proposal.tool_calls);
  if (!judge || !tools) return { kind: "not a scenario", reason: "its judge or tool_calls is not a list of text" };
  const texts = [proposal.persona, proposal.goal, ...judge];
  if (!texts.every(plainText) || typeof proposal.name !== "string" || !plainText(proposal.name)) {
    return {
      kind: "not plain text",
      reason: "a name, persona, goal or rubric holds a line break or control character",
    };
  }
  const { agent, scrubber } = options;
  const has = agentTools(agent);
  const unknownTools = tools.filter((tool) => !has.includes(tool));
  if (unknownTools.length > 0) {
    return {
      kind: "unknown tool",
      reason: `tool(s) ${unknownTools.join(", ")}: the agent has ${has.join(", ") || "none"}`,
    };
  }
  const procedures = options.facts
    ? options.facts.procedures
    : isRecord(proposal.procedures)
      ? proposal.procedures
      : {};
  const unlinked = Object.keys(procedures).filter((key) => !agent.postprocessAgents.includes(key));
  if (unlinked.length > 0) {
    return {
      kind: "unknown procedure",
      reason: `procedural agent(s) ${unlinked.join(", ")}: the agent links ${agent.postprocessAgents.join(", ") || "none"}`,
    };
  }
  const languages = agentLanguages(agent);
  const language = typeof proposal.language === "string" && proposal.language !== "" ? proposal.language : undefined;
  if (language !== undefined && language !== languages.default && !languages.others.includes(language)) {
    return {
      kind: "unknown language",
      reason: `${language}: the agent speaks ${[languages.default, ...languages.others].filter(Boolean).join(", ")}`,
    };
  }
  const persona = scrubber.text(proposal.persona.trim());
  const goal = scrubber.text(proposal.goal.trim());
  const maxTurns =
    options.facts?.maxTurns ?? (typeof proposal.max_turns === "number" ? proposal.max_turns : DEFAULT_TURNS);
  const expect = {
    ...(tools.length > 0 ? { tool_calls: tools } : {}),
    ...(Object.keys(procedures).length > 0 ? { procedures } : {}),
    ...(judge.length > 0 ? { judge: judge.map((rubric) => scrubber.text(rubric)) } : {}),
  };
  const scenario = {
    name,
    channel: { ...options.channel },
    ...(options.context && Object.keys(options.context).length > 0 ? { context: options.context } : {}),
    transport: "ws",
    caller: { persona, goal, max_turns: maxTurns },
    ...(language !== undefined && language !== languages.default
      ? { override_config: { language: { default_language: language } } }
      : {}),
    expect,
  };
  return { name, persona, goal, scenario };
}

/** "5 proposed, 4 kept: 1 named a tool the agent does not have" */
export function countLine(proposed: number, kept: number, dropped: readonly Dropped[]): string {
  const counts = new Map<DropKind, number>();
  for (const drop of dropped) counts.set(drop.kind, (counts.get(drop.kind) ?? 0) + 1);
  const reasons = [...counts].map(([kind, n]) => `${n} ${COUNTED[kind]}`);
  return `${proposed} proposed, ${kept} kept${reasons.length > 0 ? `: ${reasons.join(", ")}` : ""}`;
}
