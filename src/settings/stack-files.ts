// The stack's config files, read as Pulumi reads them: the one owner of Pulumi.<stack>.yaml. Its
// name (a qualified name's last segment, the project file's extension), where it is
// (Pulumi.yaml's stackConfigDir), the project's `config:` values and defaults under it, YAML merge
// keys, an ESC `environment:`; one parser, and the one place that drops secrets. The pull request
// guard, the cheaper config read and every offline reader use it, so all read what Pulumi uses
// (sdk/go/common/workspace: DetectProjectStackPath, ProjectStackPath, findProjectInDir).
import { readFile } from "node:fs/promises";
import path from "node:path";
import { type Document, isMap, isScalar, isSeq, type Node, parseDocument, type Scalar } from "yaml";
import { ConfigError } from "../errors/index.ts";

/** The project file names, in the order Pulumi looks for them (encoding.Exts). */
const PROJECT_FILES = ["Pulumi.json", "Pulumi.yaml", "Pulumi.yml"] as const;

/** Reads a file of the project by its path relative to the project (the working tree, or git at a ref); undefined: none. */
export type ReadProjectFile = (file: string) => Promise<string | undefined>;

/**
 * One setting as Pulumi resolves it: a plain value, or a secret's ciphertext (compared, never
 * shown). `exact: false` where the file read may not give the string Pulumi gives (an unquoted
 * date, `012`, a large integer, an object, a value only a merge key sets): compared, never used.
 */
export type StackSetting = { value: string; secret: boolean; exact?: boolean };
export type StackFileSettings = Record<string, StackSetting>;

/** What the project's files say of a stack's config, and where each part of it comes from. */
export type StackFiles = {
  /** The stack file's path relative to the project, where Pulumi reads it. */
  stackFile: string;
  /** Whether the stack file exists. */
  found: boolean;
  /** Each setting, namespaced: the project's `config:` values and defaults, then the stack file's. */
  settings: StackFileSettings;
  /** Where config comes from besides the settings: a change of one moves every setting. */
  sources: {
    /** The stack file's `environment:` (ESC), as JSON: its values cannot be read offline. */
    environment?: string;
    /** Each key the project file declares under `config:`, its declaration as JSON. */
    declared: Record<string, string>;
  };
  /** The stack file's secretsprovider (undefined: a passphrase, or no file). */
  secretsProvider?: string;
  /**
   * Whether the files say all of what `pulumi config --json` prints: a stack file, no ESC
   * environment, no secret, and every value exact.
   */
  plain: boolean;
};

/** The stack's own name: the last segment of `organization/project/stack`, as Pulumi names its file. */
function stackBaseName(stack: string): string {
  return stack.split("/").at(-1) ?? stack;
}

/** The files of the working tree `dir` (a file that cannot be read counts as none). */
export const workingTree =
  (dir: string): ReadProjectFile =>
  (file) =>
    readFile(path.join(dir, file), "utf8").catch(() => undefined);

/** The stack's config files as Pulumi resolves them; a file that is no YAML is a ConfigError naming it (`where`: e.g. " at origin/main"). */
export async function stackFiles(read: ReadProjectFile, stack: string, where = ""): Promise<StackFiles> {
  const project = await projectFile(read, where);
  const js = project ? recordOr(project.doc.toJS({ maxAliasCount: 100 })) : {};
  const name = typeof js.name === "string" ? js.name : undefined;
  // stackConfigDir, or its older name: a `config:` that is a string.
  const dir =
    typeof js.stackConfigDir === "string" ? js.stackConfigDir : typeof js.config === "string" ? js.config : "";
  const ext = project ? path.extname(project.file) : ".yaml";
  const stackFile = path.posix.normalize(path.posix.join(dir, `Pulumi.${stackBaseName(stack)}${ext}`));
  const namespaced = (key: string) => (key.includes(":") || !name ? key : `${name}:${key}`);
  const settings: StackFileSettings = {};
  const declared: Record<string, string> = {};
  let plain = name !== undefined;
  // The project's declarations: a value, or { type, default | value, secret, description }.
  const projectConfig = project && typeof js.config === "object" ? entries(project.doc, ["config"]) : [];
  for (const [key, value, node] of projectConfig) {
    declared[namespaced(key)] = JSON.stringify(value);
    const entry = isRecord(value) ? (value.value ?? value.default) : value;
    const entryNode = isRecord(value) ? (nodeAt(node, "value") ?? nodeAt(node, "default")) : node;
    if (isRecord(value) && value.secret === true) plain = false;
    if (entry === undefined || entry === null) continue;
    settings[namespaced(key)] = setting(entry, entryNode);
  }
  const text = await read(stackFile);
  const doc = text === undefined ? undefined : parseYaml(text, `${stackFile}${where}`);
  const file = recordOr(doc?.toJS({ maxAliasCount: 100 }));
  const stackConfig = doc ? configSettings(doc, namespaced) : { settings: {}, empty: false };
  Object.assign(settings, stackConfig.settings);
  // Pulumi reads an empty value as "" (and warns): the CLI says it.
  if (stackConfig.empty) plain = false;
  // A `config:` that is no map: Pulumi says what is wrong with it.
  if (!optionalRecord(file.config) || !(typeof js.config === "string" || optionalRecord(js.config))) plain = false;
  const environment = file.environment === undefined ? undefined : JSON.stringify(file.environment);
  const exact = Object.values(settings).every((s) => s.exact !== false && !s.secret);
  return {
    stackFile,
    found: text !== undefined,
    settings,
    sources: { ...(environment ? { environment } : {}), declared },
    ...(typeof file.secretsprovider === "string" ? { secretsProvider: file.secretsprovider } : {}),
    plain: plain && text !== undefined && environment === undefined && exact,
  };
}

/** The plain values of the settings: the one place a secret is dropped (it cannot be read without Pulumi). */
export function plainSettings(settings: StackFileSettings): Record<string, { value: string }> {
  return Object.fromEntries(
    Object.entries(settings).flatMap(([key, { value, secret }]) => (secret ? [] : [[key, { value }]])),
  );
}

/** The settings of a stack file's `config:`, namespaced; `empty`: some key has no value. */
function configSettings(doc: Document, namespaced: (key: string) => string) {
  const settings: StackFileSettings = {};
  let empty = false;
  for (const [key, value, node] of entries(doc, ["config"])) {
    if (value === null || value === undefined) empty = true;
    else if (isRecord(value) && "secure" in value)
      settings[namespaced(key)] = { value: String(value.secure), secret: true, exact: true };
    else settings[namespaced(key)] = setting(value, node);
  }
  return { settings, empty };
}

/** The project file: the first of Pulumi.json, Pulumi.yaml, Pulumi.yml there is. */
async function projectFile(read: ReadProjectFile, where: string): Promise<{ file: string; doc: Document } | undefined> {
  for (const file of PROJECT_FILES) {
    const text = await read(file);
    if (text !== undefined) return { file, doc: parseYaml(text, `${file}${where}`) };
  }
  return undefined;
}

/** The one parser: YAML with merge keys (`<<`), as Pulumi's Go YAML reads them; JSON is YAML. */
function parseYaml(text: string, file: string): Document {
  const doc = parseDocument(text, { merge: true, prettyErrors: true });
  const error = doc.errors[0];
  if (error) throw new ConfigError(`${file}: ${error.message}`);
  return doc;
}

/** The entries of the map at `at` (its values resolved, merge keys applied) with each value's node where it is written there. */
function entries(doc: Document, at: string[]): [string, unknown, Node | undefined][] {
  const map = recordOr(recordOr(doc.toJS({ maxAliasCount: 100 }))[at[0] as string]);
  const node = doc.getIn(at, true);
  return Object.entries(map).map(([key, value]) => [key, value, nodeAt(node, key)]);
}

/** The value node of `key` written in the map `node` itself (not one a merge key brings in). */
function nodeAt(node: unknown, key: string): Node | undefined {
  if (!isMap(node)) return undefined;
  const pair = node.items.find((item) => isScalar(item.key) && item.key.value === key);
  return (pair?.value ?? undefined) as Node | undefined;
}

/** A value as the string Pulumi's config gives, and whether the file read is sure of it. */
function setting(value: unknown, node: Node | undefined): StackSetting {
  if (typeof value === "object" && value !== null) return { value: JSON.stringify(value), secret: false, exact: false };
  return { value: String(value), secret: false, exact: exactScalar(node) };
}

/**
 * Whether a scalar reads as the same string in Pulumi's Go YAML as here: a quoted or block string,
 * `true`/`false`, a small decimal integer, or a plain string that starts with no digit, sign or dot
 * (Go reads `2025-06-19` as a timestamp, `012` as octal, `1_000` as 1000, a large integer as a float).
 */
function exactScalar(node: Node | undefined): boolean {
  if (!isScalar(node) || node.tag !== undefined || isSeq(node)) return false;
  const { value, type } = node as Scalar;
  const source = (node as Scalar & { source?: string }).source ?? "";
  if (typeof value === "string") return type !== "PLAIN" || !/^[-+.\d]/.test(source);
  if (typeof value === "boolean") return /^(true|false|True|False|TRUE|FALSE)$/.test(source);
  if (typeof value === "number") return type === "PLAIN" && /^(0|-?[1-9]\d{0,14})$/.test(source);
  return false;
}

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value);

const optionalRecord = (value: unknown) => value === undefined || value === null || isRecord(value);

const recordOr = (value: unknown): Record<string, unknown> => (isRecord(value) ? value : {});
