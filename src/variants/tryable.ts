// What a variant may change, decided before any call: a variant is a partial `config` of an agent
// the stack holds, played as override_config. Like `plan --behave`, every changed top-level config
// section is sent whole (the service does not document its merge rules); what a conversation
// cannot carry is refused with the reason: removing a field or section, the agent's name,
// description or postprocess_agents, a new agent (nothing deployed to call).
import { isDeepStrictEqual } from "node:util";
import { deepMerge } from "../contract/index.ts";
import type { AgentDefinition } from "../definitions/index.ts";

type Json = Record<string, unknown>;
const isRecord = (value: unknown): value is Json =>
  typeof value === "object" && value !== null && !Array.isArray(value);
const same = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b);

/** Why each top-level key outside `config` cannot be tried. */
const NOT_CONFIG: Record<string, string> = {
  name: "`name` is the agent's, not its config's: a conversation cannot override it (deploy a replacement)",
  description: "`description` is the agent's, not its config's: a conversation cannot override it",
  postprocess_agents:
    "`postprocess_agents` changes the linked procedural agents: their procedures run only after deploy",
  kind: "a variant is a partial config of an agent the stack holds, not a new agent: nothing is deployed to call",
  config: "write the config's sections at the top of the variant (runtime, tool, language, …), not under `config:`",
  smoke: "`smoke` scenarios are not config: try a variant on the agent's own scenarios (--scenario)",
  variants: "a variant cannot hold variants",
};

/** Why the raw variant (as written) cannot be tried, or undefined. `null` anywhere is a removal. */
export function untryable(raw: unknown): string | undefined {
  if (!isRecord(raw)) return "a variant must be a mapping of config sections (runtime, tool, language, …)";
  for (const key of Object.keys(raw)) {
    const why = NOT_CONFIG[key];
    if (why) return why;
  }
  const removed = removals(raw, []);
  if (removed.length > 0) {
    return `${removed.map((p) => `\`${p}\``).join(", ")} removed: override_config can add and change fields, not remove them`;
  }
  return undefined;
}

function removals(value: unknown, at: string[]): string[] {
  if (value === null) return [at.join(".")];
  if (Array.isArray(value)) return value.flatMap((v, i) => removals(v, [...at, String(i)]));
  if (!isRecord(value)) return [];
  return Object.entries(value).flatMap(([k, v]) => removals(v, [...at, k]));
}

/** Why the agent cannot be tried at all (a procedural one, none held, no scenarios), or undefined. */
export function agentUntryable(
  definition: AgentDefinition | undefined,
  agent: string,
  versionId: string | undefined,
): string | undefined {
  if (!definition) return `no agent "${agent}" in the agent files`;
  if (definition.kind === "procedural") {
    return "a procedural agent: its effect shows through the conversational agents' `procedures` expectations only after deploy";
  }
  if (!versionId) return "a new agent: the stack holds no version of it to call (deploy it first)";
  if (definition.smoke.length === 0) return "it has no smoke scenarios to play";
  return undefined;
}

/**
 * The config the variant stands for (its partial merged over the agent's, a prompt replaced whole),
 * and what is sent: every top-level section that differs, whole. Undefined: it changes nothing.
 */
export function variantOverride(
  base: Record<string, unknown>,
  partial: Record<string, unknown>,
): { config: Json; override: Json } | undefined {
  const config = deepMerge(base, partial, { replaceWhole: ["prompt"] }) as Json;
  const override: Json = {};
  for (const [section, value] of Object.entries(config)) {
    if (!same(base[section], value)) override[section] = value;
  }
  return Object.keys(override).length === 0 ? undefined : { config, override };
}

/** A value as the state stores it (JSON: no undefined), an empty list the same as none (as the provider diffs). */
const stored = (value: unknown): unknown => {
  const json = value === undefined ? undefined : JSON.parse(JSON.stringify(value));
  return Array.isArray(json) && json.length === 0 ? undefined : json;
};

/**
 * Where the agent file's request body differs from the body its deployed version was created with:
 * `name`, `description`, `postprocess_agents`, or each differing top-level config section
 * (`config.tool`, …); [] when they agree. `try` plays variants on the deployed version, so a file
 * that differs would make the base something other than the file, and each variant's override a
 * change computed against a config the service does not run.
 */
export function deployedDifferences(file: Json, deployed: Json): string[] {
  const differing: string[] = [];
  for (const field of ["name", "description", "postprocess_agents"]) {
    if (!isDeepStrictEqual(stored(file[field]), stored(deployed[field]))) differing.push(field);
  }
  const [ours, theirs] = [file.config, deployed.config].map((c) => (isRecord(c) ? c : {})) as [Json, Json];
  for (const section of [...new Set([...Object.keys(ours), ...Object.keys(theirs)])].sort()) {
    if (!isDeepStrictEqual(stored(ours[section]), stored(theirs[section]))) differing.push(`config.${section}`);
  }
  return differing;
}
