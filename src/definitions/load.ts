// The loader: every agents/<key>.yaml (with the selected stack's overlay merged over it) → validated
// agent definitions with prompt files read, plus every problem found, each at its file:line.
import { readdir, realpath } from "node:fs/promises";
import path from "node:path";
import type { z } from "zod";
import {
  type ConversationalAgentConfig,
  conversationalAgentConfig,
  deepMerge,
  type ProceduralAgentConfig,
  proceduralAgentConfig,
} from "../contract/index.ts";
import { didYouMean } from "../errors/index.ts";
import { compareDiagnostics, type Diagnostic, formatDiagnostic, moreErrors } from "./diagnostic.ts";
import { diagnosticAt, FILE_PARSE, issuesToDiagnostics, MAX_ERRORS_PER_FILE, position } from "./issues.ts";
import { type FieldLocation, fieldLocation } from "./locate.ts";
import {
  conversationalConfigFile,
  conversationalFile,
  KEY_PATTERN,
  proceduralFile,
  type SmokeScenarioFile,
} from "./schema.ts";
import {
  clip,
  displayPath,
  type Loaded,
  loadYaml,
  MAX_PROMPT_BYTES,
  type PathSegment,
  readText,
  type Source,
  showingPathsFrom,
} from "./source.ts";

export type SmokeScenario = Omit<SmokeScenarioFile, "override_config"> & {
  override_config?: ConversationalAgentConfig;
};

export type AgentDefinition = {
  key: string;
  kind: "conversational" | "procedural";
  /** The base file, as shown in diagnostics. */
  file: string;
  /** The overlay merged over it (`agents/<key>.<stack>.yaml`), if one applied. */
  overlay?: string;
  name: string;
  description: string;
  /** Exactly what is sent: a prompt `file` is already replaced by its text. */
  config: ConversationalAgentConfig | ProceduralAgentConfig;
  /** Procedural agent keys (empty for procedural agents). */
  postprocessAgents: string[];
  protect: boolean;
  /** Normalized, defaults applied. */
  smoke: SmokeScenario[];
  /** Named partial configs to try (`variants:`, prompt files read): never sent on create. */
  variants?: Record<string, ConversationalAgentConfig>;
};

/** Where a field of a loaded agent is written; `offset` is a position inside a text field's value. */
export type FieldLocator = (key: string, path: readonly PathSegment[], offset?: number) => FieldLocation;

export type LoadResult = {
  agents: AgentDefinition[];
  errors: Diagnostic[];
  /** Where each agent's fields are written (for findings about valid agents, e.g. `validate --policy`). */
  locate?: FieldLocator;
};

const MAX_FILES = 1000;
const EXTENSIONS = [".yaml", ".yml"];

type FileEntry = { absolute: string; key: string; stack?: string };

type Evaluated = {
  key: string;
  sources: Source[];
  /** The merged raw value, when it is a mapping (for reference checks despite other errors). */
  raw?: Record<string, unknown>;
  /** Prompt files read, by the JSON of their owner's path (`["config"]`). */
  promptFiles?: Map<string, string>;
  definition?: AgentDefinition;
  errors: Diagnostic[];
};

/**
 * Loads every agent in `dir`. With `stack`, `<key>.<stack>.yaml` overlays are merged over their
 * base files and other stacks' overlays are ignored; without it, every overlay is checked against
 * its base (errors only) and the base definitions are returned. `from` (absolute) is the directory
 * the user works in (the run's project): a relative `dir` is read from it, paths are shown from it.
 * Never throws.
 */
export async function loadAgents(
  dir: string,
  options: { stack?: string | undefined; from: string },
): Promise<LoadResult> {
  return showingPathsFrom(options.from, () => loadFrom(path.resolve(options.from, dir), options.stack));
}

/** `dir` is absolute. */
async function loadFrom(dir: string, stack: string | undefined): Promise<LoadResult> {
  try {
    return await load(dir, stack);
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    return {
      agents: [],
      errors: [
        {
          file: displayPath(dir),
          line: 1,
          column: 1,
          field: "(directory)",
          message: `cannot load the agents: ${message}`,
        },
      ],
    };
  }
}

async function load(dir: string, stack: string | undefined): Promise<LoadResult> {
  const errors: Diagnostic[] = [];
  const directoryError = (message: string): LoadResult => ({
    agents: [],
    errors: [{ file: displayPath(dir), line: 1, column: 1, field: "(directory)", message }],
  });
  let names: string[];
  try {
    const entries = await readdir(dir, { withFileTypes: true });
    names = entries
      // Anything but a directory: a FIFO or a device named *.yaml is refused below, never skipped.
      .filter((e) => !e.isDirectory() && !e.name.startsWith("."))
      .map((e) => e.name)
      .filter((name) => EXTENSIONS.includes(path.extname(name)))
      .sort();
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    return directoryError(code === "ENOENT" ? "no such directory" : `cannot read the directory (${code})`);
  }
  if (names.length > MAX_FILES)
    return directoryError(`too many agent files (${names.length}; the limit is ${MAX_FILES})`);

  // Prompt files may live anywhere in the project: the directory that holds the agents directory.
  const root = path.dirname(dir);
  const { bases, overlays } = await classify(dir, root, names, errors);
  // Pulumi may name a stack "org/project/stack"; overlays use the stack's own name.
  const stackName = stack?.split("/").at(-1);
  const evaluated: Evaluated[] = [];
  for (const base of bases.values()) {
    const loadedBase = await loadYaml(base.absolute);
    const mine = overlays.filter((o) => o.key === base.key);
    if (stackName !== undefined) {
      const overlay = mine.find((o) => o.stack === stackName);
      evaluated.push(
        await evaluate(base.key, loadedBase, overlay ? await loadYaml(overlay.absolute) : undefined, root),
      );
    } else {
      evaluated.push(await evaluate(base.key, loadedBase, undefined, root));
      // No stack selected: still check every overlay against its base, for CI on pull requests.
      for (const overlay of mine) {
        const checked = await evaluate(base.key, loadedBase, await loadYaml(overlay.absolute), root);
        errors.push(...checked.errors);
      }
    }
  }
  for (const agent of evaluated) errors.push(...agent.errors);
  errors.push(...referenceErrors(evaluated));

  const agents = evaluated
    .flatMap((e) => (e.definition && e.errors.length === 0 ? [e.definition] : []))
    .sort((a, b) =>
      a.kind === b.kind ? (a.key < b.key ? -1 : a.key > b.key ? 1 : 0) : a.kind === "procedural" ? -1 : 1,
    );
  const byKey = new Map(evaluated.map((e) => [e.key, e]));
  const locate: FieldLocator = (key, p, offset) => {
    const agent = byKey.get(key);
    const text = agent?.definition ? getIn(agent.definition, p) : undefined;
    return fieldLocation(agent?.sources ?? [], agent?.promptFiles ?? new Map(), p, text, offset);
  };
  return { agents, errors: capPerFile(dedupe(errors)).sort(compareDiagnostics), locate };
}

/** File names → base files and overlays by key; bad names, twins, orphans and escapes become errors. */
async function classify(dir: string, root: string, names: string[], errors: Diagnostic[]) {
  const bases = new Map<string, FileEntry>();
  const overlays: FileEntry[] = [];
  for (const name of names) {
    const absolute = path.join(dir, name);
    const file = displayPath(absolute);
    const [key = "", ...rest] = name.slice(0, -path.extname(name).length).split(".");
    if (!KEY_PATTERN.test(key) || key.length > 100 || (rest.length > 0 && rest.some((part) => part === ""))) {
      errors.push({
        file,
        line: 1,
        column: 1,
        field: "(file name)",
        message: `"${name}" is not a usable agent file name: use <key>.yaml or <key>.<stack>.yaml, the key in lowercase letters, digits and dashes`,
      });
      continue;
    }
    const entry: FileEntry = { absolute, key, ...(rest.length > 0 ? { stack: rest.join(".") } : {}) };
    if (entry.stack !== undefined) {
      const twin = overlays.find((o) => o.key === key && o.stack === entry.stack);
      if (twin) errors.push(duplicateFile(file, twin));
      else overlays.push(entry);
    } else {
      const twin = bases.get(key);
      if (twin) errors.push(duplicateFile(file, twin));
      else bases.set(key, entry);
    }
  }
  for (const overlay of overlays) {
    if (!bases.has(overlay.key)) {
      errors.push({
        file: displayPath(overlay.absolute),
        line: 1,
        column: 1,
        field: "(file)",
        message: `overlay without a base file: there is no ${overlay.key}.yaml to merge it over`,
      });
    }
  }

  // Agent files too: one that is a symlink is read only if it resolves inside the project.
  for (const entry of [...bases.values(), ...overlays]) {
    const outside = await outsideProject(entry.absolute, root, "agent files");
    if (!outside) continue;
    errors.push({
      file: displayPath(entry.absolute),
      line: 1,
      column: 1,
      field: "(file)",
      message: `the file ${outside}`,
    });
    if (entry.stack === undefined) bases.delete(entry.key);
    else overlays.splice(overlays.indexOf(entry), 1);
  }
  return { bases, overlays };
}

function duplicateFile(file: string, twin: FileEntry): Diagnostic {
  return {
    file,
    line: 1,
    column: 1,
    field: "(file name)",
    message: `duplicate agent file: ${displayPath(twin.absolute)} defines the same key; keep one`,
  };
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

async function evaluate(key: string, base: Loaded, overlay: Loaded | undefined, root: string): Promise<Evaluated> {
  const sources = [base.source, overlay?.source].filter((s): s is Source => s !== undefined);
  const errors = [...base.errors, ...(overlay?.errors ?? [])];
  if (errors.length > 0 || !base.source) return { key, sources, errors };
  const baseSource = base.source;
  const notMapping = (source: Source, what: string): Diagnostic => ({
    file: source.file,
    line: 1,
    column: 1,
    field: "(document)",
    message: `${what} must be a mapping with kind, name, description and config`,
  });
  if (!isRecord(base.value)) return { key, sources, errors: [notMapping(baseSource, "an agent file")] };
  if (overlay?.source && !isRecord(overlay.value)) {
    return { key, sources, errors: [notMapping(overlay.source, "an overlay")] };
  }
  const overlayValue = overlay?.value as Record<string, unknown> | undefined;
  if (overlayValue && "kind" in overlayValue && overlayValue.kind !== base.value.kind) {
    return { key, sources, errors: [diagnosticAt(sources, ["kind"], "an overlay cannot change an agent's kind")] };
  }
  // An overlay replaces a whole `prompt` (text and file together), unlike override_config.
  const raw = deepMerge(base.value, overlayValue, { replaceWhole: ["prompt"] }) as Record<string, unknown>;

  const kind = raw.kind;
  if (kind !== "conversational" && kind !== "procedural") {
    const message =
      kind === undefined ? 'required: "conversational" or "procedural"' : 'must be "conversational" or "procedural"';
    return { key, sources, raw, errors: [diagnosticAt(sources, ["kind"], message)] };
  }
  // Prompt files are read even when other fields are wrong, so their errors show up too.
  const prompts = await readPromptFiles(raw, sources, root);
  const schema = kind === "conversational" ? conversationalFile : proceduralFile;
  const parsed = schema.safeParse(raw, FILE_PARSE);
  if (!parsed.success) {
    return {
      key,
      sources,
      raw,
      errors: [...issuesToDiagnostics(sources, schema, parsed.error.issues), ...prompts.errors],
    };
  }
  if (prompts.errors.length > 0) return { key, sources, raw, errors: prompts.errors };
  const promptFiles = prompts.files;

  const value = parsed.data;
  const config = withPromptText(value.config, ["config"], prompts.texts);
  const smoke: SmokeScenario[] = [];
  if (value.kind === "conversational") {
    for (const [i, scenario] of value.smoke.entries()) {
      const { override_config, ...rest } = scenario;
      smoke.push(
        override_config
          ? {
              ...rest,
              override_config: withPromptText(override_config, ["smoke", i, "override_config"], prompts.texts),
            }
          : rest,
      );
    }
  }

  const variants: Record<string, ConversationalAgentConfig> = {};
  if (value.kind === "conversational") {
    for (const [name, partial] of Object.entries(value.variants)) {
      variants[name] = withPromptText(partial, ["variants", name], prompts.texts);
    }
  }

  // A safety net: what is sent must satisfy the service's own request schema.
  const service = (kind === "conversational" ? conversationalAgentConfig : proceduralAgentConfig) as z.ZodType;
  const sent = service.safeParse(config, FILE_PARSE);
  if (!sent.success) return { key, sources, raw, errors: issuesToDiagnostics(sources, service, sent.error.issues) };

  const definition: AgentDefinition = {
    key,
    kind,
    file: baseSource.file,
    ...(overlay?.source ? { overlay: overlay.source.file } : {}),
    name: value.name,
    description: value.description,
    config: sent.data as ConversationalAgentConfig | ProceduralAgentConfig,
    postprocessAgents: value.kind === "conversational" ? value.postprocess_agents : [],
    protect: value.protect,
    smoke,
    ...(Object.keys(variants).length > 0 ? { variants } : {}),
  };
  return { key, sources, raw, definition, promptFiles, errors: [] };
}

type PromptHolder = { runtime?: { prompt?: { type: string; text?: string; file?: string } } };
type ResolvedConfig = ConversationalAgentConfig & ProceduralAgentConfig;

/** Where prompts live in a file: the agent's config and each smoke scenario's override_config. */
function promptOwners(raw: Record<string, unknown>): PathSegment[][] {
  const owners: PathSegment[][] = [["config"]];
  if (Array.isArray(raw.smoke)) {
    for (let i = 0; i < raw.smoke.length; i++) owners.push(["smoke", i, "override_config"]);
  }
  if (isRecord(raw.variants)) for (const name of Object.keys(raw.variants)) owners.push(["variants", name]);
  return owners;
}

function getIn(value: unknown, p: readonly PathSegment[]): unknown {
  let current = value;
  for (const segment of p) {
    if (Array.isArray(current) && typeof segment === "number") current = current[segment];
    else if (isRecord(current) && typeof segment === "string" && Object.hasOwn(current, segment))
      current = current[segment];
    else return undefined;
  }
  return current;
}

/**
 * Reads every `runtime.prompt.file` (relative to the YAML file that names it, the overlay's when
 * the overlay sets it). Exactly the file's content is sent, no trimming: like a YAML `|` block,
 * which keeps its final newline. A leading UTF-8 byte order mark is dropped.
 */
async function readPromptFiles(
  raw: Record<string, unknown>,
  sources: readonly Source[],
  root: string,
  owners: PathSegment[][] = promptOwners(raw),
) {
  const texts = new Map<string, string>();
  const files = new Map<string, string>();
  const errors: Diagnostic[] = [];
  for (const owner of owners) {
    const prompt = getIn(raw, [...owner, "runtime", "prompt"]);
    if (!isRecord(prompt) || typeof prompt.file !== "string" || prompt.text !== undefined || prompt.file.trim() === "")
      continue;
    const fieldPath = [...owner, "runtime", "prompt", "file"];
    const where = position(sources, fieldPath);
    const absolute = path.resolve(path.dirname(where.source.absolute), prompt.file);
    const outside = await outsideProject(absolute, root);
    const read = outside ? { error: outside } : await readText(absolute, MAX_PROMPT_BYTES);
    if ("error" in read) {
      errors.push(diagnosticAt(sources, fieldPath, `the prompt file ${displayPath(absolute)} ${read.error}`));
    } else if (read.text.trim() === "") {
      errors.push(diagnosticAt(sources, fieldPath, `the prompt is empty: ${displayPath(absolute)} has no text`));
    } else {
      texts.set(JSON.stringify(owner), read.text);
      files.set(JSON.stringify(owner), displayPath(absolute));
    }
  }
  return { texts, files, errors };
}

/**
 * Prompt and agent files must live in the project (the directory holding agents/), symlinks
 * resolved: their text is sent to the service and shown in plans, so no file may reach outside
 * the repository.
 */
async function outsideProject(absolute: string, root: string, what = "prompt files"): Promise<string | undefined> {
  const real = await realpath(absolute).catch(() => absolute);
  const realRoot = await realpath(root).catch(() => root);
  const relative = path.relative(realRoot, real);
  if (relative === "" || relative.startsWith("..") || path.isAbsolute(relative)) {
    return `is outside the project directory ${displayPath(root) || "."}: ${what} must live in the repository`;
  }
  return undefined;
}

function withPromptText<T extends PromptHolder>(
  config: T,
  owner: PathSegment[],
  texts: Map<string, string>,
): ResolvedConfig {
  const prompt = config.runtime?.prompt;
  const text = texts.get(JSON.stringify(owner));
  if (!prompt || prompt.file === undefined || text === undefined) return config as T & ResolvedConfig;
  return { ...config, runtime: { ...config.runtime, prompt: { type: prompt.type, text } } } as T & ResolvedConfig;
}

/** Links between agents, checked on the raw values so they show up next to any other error. */
function referenceErrors(evaluated: Evaluated[]): Diagnostic[] {
  const kinds = new Map<string, unknown>(evaluated.map((e) => [e.key, e.raw?.kind]));
  const procedural = [...kinds].filter(([, kind]) => kind === "procedural").map(([key]) => key);
  const errors: Diagnostic[] = [];
  for (const agent of evaluated) {
    const raw = agent.raw;
    if (raw?.kind !== "conversational" || agent.sources.length === 0) continue;
    // Locating costs a walk of the file: stop once capPerFile would drop the rest anyway.
    let count = 0;
    const report = (p: PathSegment[], message: string, keyOf = false) => {
      if (count++ <= MAX_ERRORS_PER_FILE) errors.push(diagnosticAt(agent.sources, p, message, { keyOf }));
    };

    const linked = Array.isArray(raw.postprocess_agents) ? raw.postprocess_agents : [];
    const seen = new Set<string>();
    for (const [i, target] of linked.entries()) {
      if (typeof target !== "string") continue;
      const shown = JSON.stringify(clip(target));
      const p = ["postprocess_agents", i];
      if (seen.has(target)) report(p, `${shown} is listed twice`);
      seen.add(target);
      if (target === agent.key) {
        report(p, "an agent cannot link itself: postprocess_agents lists procedural agents");
      } else if (!kinds.has(target)) {
        const suggestion = didYouMean(target, procedural.length > 0 ? procedural : [...kinds.keys()]);
        report(
          p,
          `unknown agent ${shown} (no ${clip(target)}.yaml)${suggestion ? ` (did you mean "${suggestion}"?)` : ""}`,
        );
      } else if (kinds.get(target) === "conversational") {
        report(p, `${shown} is a conversational agent: postprocess_agents lists procedural agents`);
      }
    }

    const scenarios = Array.isArray(raw.smoke) ? raw.smoke : [];
    const names = new Set<string>();
    for (const [i, scenario] of scenarios.entries()) {
      if (!isRecord(scenario)) continue;
      if (typeof scenario.name === "string") {
        if (names.has(scenario.name)) {
          report(["smoke", i, "name"], `duplicate scenario name ${JSON.stringify(clip(scenario.name))}`);
        }
        names.add(scenario.name);
      }
      const procedures =
        isRecord(scenario.expect) && isRecord(scenario.expect.procedures) ? scenario.expect.procedures : {};
      for (const target of Object.keys(procedures)) {
        if (seen.has(target) && kinds.get(target) === "procedural") continue;
        // A linked agent whose own file is broken: its errors are reported there.
        if (seen.has(target) && kinds.has(target) && kinds.get(target) === undefined) continue;
        const p = ["smoke", i, "expect", "procedures", target];
        const shown = JSON.stringify(clip(target));
        const message = !kinds.has(target)
          ? `unknown agent ${shown}`
          : kinds.get(target) === "conversational"
            ? `${shown} is a conversational agent, not a procedural one`
            : `${shown} is not linked in postprocess_agents, so it never runs after this agent's calls`;
        report(p, message, true);
      }
    }
  }
  return errors;
}

function dedupe(errors: Diagnostic[]): Diagnostic[] {
  const seen = new Set<string>();
  return errors.filter((d) => {
    const text = formatDiagnostic(d);
    if (seen.has(text)) return false;
    seen.add(text);
    return true;
  });
}

function capPerFile(errors: Diagnostic[]): Diagnostic[] {
  const byFile = new Map<string, Diagnostic[]>();
  for (const d of errors) {
    const list = byFile.get(d.file);
    if (list) list.push(d);
    else byFile.set(d.file, [d]);
  }
  return [...byFile.values()].flatMap((list) => {
    if (list.length <= MAX_ERRORS_PER_FILE) return list;
    const shown = list.sort(compareDiagnostics).slice(0, MAX_ERRORS_PER_FILE);
    return [...shown, moreErrors(shown.at(-1) as Diagnostic, list.length - MAX_ERRORS_PER_FILE)];
  });
}

/**
 * A variant file (`agent-iac try --variant NAME=FILE`): a partial conversational `config`, checked
 * by the agent file's own schema with file:line errors, its prompt `file` read relative to it and
 * kept inside the project (`root`, the directory that holds agents/). `from` as loadAgents' (a
 * relative `file` is read from it, paths are shown from it).
 */
export function loadConfigFile(
  file: string,
  root: string,
  from: string,
): Promise<{ raw?: unknown; config?: ConversationalAgentConfig; errors: Diagnostic[] }> {
  return showingPathsFrom(from, () => configFile(path.resolve(from, file), path.resolve(from, root)));
}

async function configFile(
  absolute: string,
  root: string,
): Promise<{ raw?: unknown; config?: ConversationalAgentConfig; errors: Diagnostic[] }> {
  const loaded = await loadYaml(absolute);
  if (loaded.errors.length > 0 || !loaded.source) return { errors: loaded.errors };
  const sources = [loaded.source];
  const raw = loaded.value;
  if (!isRecord(raw)) {
    const message = "a variant file must be a mapping of config sections (runtime, tool, language, …)";
    return { raw, errors: [{ file: loaded.source.file, line: 1, column: 1, field: "(document)", message }] };
  }
  const prompts = await readPromptFiles(raw, sources, root, [[]]);
  const parsed = conversationalConfigFile.safeParse(raw, FILE_PARSE);
  if (!parsed.success) {
    const errors = [...issuesToDiagnostics(sources, conversationalConfigFile, parsed.error.issues), ...prompts.errors];
    return { raw, errors };
  }
  if (prompts.errors.length > 0) return { raw, errors: prompts.errors };
  return { raw, config: withPromptText(parsed.data, [], prompts.texts), errors: [] };
}
