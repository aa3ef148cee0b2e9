// Smoke scenarios of agents declared in TypeScript (`new ConversationalAgent(key, …)`): the file
// smoke/<key>.yaml in the project holds `smoke:`, the same list an agent file holds. It is not a
// resource input, so adding a scenario replaces nothing.
import { access } from "node:fs/promises";
import path from "node:path";
import { z } from "zod";
import type { Diagnostic } from "./diagnostic.ts";
import { diagnosticAt, FILE_PARSE, issuesToDiagnostics } from "./issues.ts";
import { type AgentDefinition, loadAgents, type SmokeScenario } from "./load.ts";
import { smokeScenario } from "./schema.ts";
import { type Loaded, loadYaml, type PathSegment, parseYamlText, showingPathsFrom } from "./source.ts";

/** Where the scenarios of TypeScript-declared agents live, relative to the project. */
export const SCENARIO_DIR = "smoke";

const scenarioFile = z.strictObject({ smoke: z.array(smokeScenario).default([]) });

export type DeclaredOptions = {
  /** The Pulumi project's directory. */
  projectDir: string;
  /** The stack, whose overlays apply to the directories' agent files. */
  stack: string;
  /** The agents the stack holds, by key (resource name): their kind and name are what is read. */
  held: Record<string, { kind: string; name: string }>;
  /** The agent-file directories the stack's AgentDirectory components deploy, relative to the project. */
  directories: readonly string[];
  /** The agents already read from the stack's agent files (agents:dir). */
  fromFiles: readonly AgentDefinition[];
  /** That directory, not read twice. */
  loadedDir?: string;
};

/**
 * The agents the stack holds that its agents:dir does not describe: those of the other directories
 * its AgentDirectory components deploy, and those declared in TypeScript, with the scenarios of
 * smoke/<key>.yaml (none when the file does not exist). Every problem is a diagnostic at its
 * file:line.
 */
export async function declaredAgents(
  options: DeclaredOptions,
): Promise<{ agents: AgentDefinition[]; errors: Diagnostic[] }> {
  const agents: AgentDefinition[] = [];
  const errors: Diagnostic[] = [];
  const known = new Set(options.fromFiles.map((agent) => agent.key));
  const read = new Set(options.loadedDir ? [path.resolve(options.projectDir, options.loadedDir)] : []);
  for (const dir of options.directories) {
    const absolute = path.resolve(options.projectDir, dir);
    if (read.has(absolute)) continue;
    read.add(absolute);
    const loaded = await loadAgents(absolute, { stack: options.stack, from: options.projectDir });
    errors.push(...loaded.errors);
    for (const agent of loaded.agents.filter((a) => !known.has(a.key))) {
      known.add(agent.key);
      agents.push(agent);
    }
  }
  for (const [key, agent] of Object.entries(options.held)) {
    if (known.has(key)) continue;
    const kind = agent.kind === "conversational" ? "conversational" : "procedural";
    const absolute = path.join(options.projectDir, SCENARIO_DIR, `${key}.yaml`);
    const loaded = await showingPathsFrom(options.projectDir, () => scenariosOf(absolute));
    errors.push(...loaded.errors);
    agents.push({
      key,
      kind,
      file: path.relative(options.projectDir, absolute),
      name: agent.name,
      description: "",
      config: {},
      postprocessAgents: [],
      protect: false,
      smoke: kind === "conversational" ? loaded.scenarios : [],
    });
  }
  return { agents, errors };
}

async function scenariosOf(absolute: string): Promise<{ scenarios: SmokeScenario[]; errors: Diagnostic[] }> {
  const exists = await access(absolute).then(
    () => true,
    () => false,
  );
  if (!exists) return { scenarios: [], errors: [] };
  return scenariosIn(await loadYaml(absolute));
}

/**
 * Smoke scenarios written as a scenario file's text (`smoke: [...]`) held in memory, e.g. proposed
 * by a model: the same schema and the same file:line errors as an agent file's `smoke:` list.
 */
export function scenariosInText(file: string, text: string): { scenarios: SmokeScenario[]; errors: Diagnostic[] } {
  return scenariosIn(parseYamlText(file, text));
}

function scenariosIn(loaded: Loaded): { scenarios: SmokeScenario[]; errors: Diagnostic[] } {
  if (!loaded.source || loaded.errors.length > 0) return { scenarios: [], errors: loaded.errors };
  const sources = [loaded.source];
  const parsed = scenarioFile.safeParse(loaded.value ?? {}, FILE_PARSE);
  if (!parsed.success) {
    return { scenarios: [], errors: issuesToDiagnostics(sources, scenarioFile, parsed.error.issues) };
  }
  const errors: Diagnostic[] = [];
  const scenarios = parsed.data.smoke.map((scenario, i): SmokeScenario => {
    const { override_config, ...rest } = scenario;
    if (!override_config) return rest;
    const runtime = override_config.runtime;
    const prompt = runtime?.prompt;
    if (prompt?.file !== undefined) {
      const at: PathSegment[] = ["smoke", i, "override_config", "runtime", "prompt", "file"];
      errors.push(diagnosticAt(sources, at, "give the prompt as text in a scenario file"));
    }
    const { prompt: _written, ...others } = runtime ?? {};
    const sent = prompt ? { ...others, prompt: { type: prompt.type, text: prompt.text ?? "" } } : others;
    const { runtime: _runtime, ...config } = override_config;
    return { ...rest, override_config: { ...config, ...(runtime ? { runtime: sent } : {}) } };
  });
  return { scenarios: errors.length > 0 ? [] : scenarios, errors };
}
