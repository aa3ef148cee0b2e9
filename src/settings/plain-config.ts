// The stack's config read from its files where they say all of it: a command that opens a stack
// then runs one Pulumi CLI command fewer (each starts a 115 MB binary, and `pulumi config
// --show-secrets` stretches the passphrase with 1,000,000 rounds of PBKDF2).
import { readFile } from "node:fs/promises";
import path from "node:path";
import { parse } from "yaml";
import { parseStackFile } from "./changes.ts";

/** The map `pulumi config --json` prints (the Automation API's ConfigMap). */
type ConfigMap = Record<string, { value: string; secret: boolean }>;

type Scalar = string | number | boolean;

/** A value `pulumi config --json` prints as the same string: a string, a boolean or an integer. */
const plainScalar = (value: unknown): value is Scalar =>
  typeof value === "string" || typeof value === "boolean" || (typeof value === "number" && Number.isInteger(value));

/**
 * The stack's config as `pulumi config --json` gives it (Pulumi.yaml's defaults, then the values of
 * Pulumi.<stack>.yaml, each key in its namespace), read from the two files, when they hold nothing
 * but plain values. Undefined, so the caller asks the CLI, wherever the files alone might not say
 * what the CLI would: no stack file (a backend that keeps the config, or a stack not created), a
 * secret, an ESC environment, a stack config directory elsewhere, an object, a list or a decimal.
 */
export async function plainStackConfig(workDir: string, stackName: string): Promise<ConfigMap | undefined> {
  // A file that is missing or is no YAML: the CLI says what is wrong with it.
  const read = (file: string, parseText: (text: string) => unknown) =>
    readFile(path.join(workDir, file), "utf8")
      .then(parseText)
      .catch(() => undefined);
  const stackFileName = `Pulumi.${stackName}.yaml`;
  const [project, stackFile] = await Promise.all([
    read("Pulumi.yaml", parse),
    read(stackFileName, (text) => parseStackFile(text, stackFileName)),
  ]);
  if (!isRecord(project) || typeof project.name !== "string" || project.stackConfigDir !== undefined) return undefined;
  if (!isRecord(stackFile) || stackFile.environment !== undefined) return undefined;
  if (!optionalRecord(project.config) || !optionalRecord(stackFile.config)) return undefined;
  const namespaced = (key: string) => (key.includes(":") ? key : `${project.name}:${key}`);
  const config: ConfigMap = {};
  for (const [key, entry] of Object.entries(recordOr(project.config))) {
    // A declared key: a value, or { type, default | value, description }; a secret one goes to the CLI.
    if (isRecord(entry) && entry.secret === true) return undefined;
    const value = isRecord(entry) ? (entry.value ?? entry.default) : entry;
    if (value === undefined) continue;
    if (!plainScalar(value)) return undefined;
    config[namespaced(key)] = { value: String(value), secret: false };
  }
  for (const [key, value] of Object.entries(recordOr(stackFile.config))) {
    if (!plainScalar(value)) return undefined;
    config[namespaced(key)] = { value: String(value), secret: false };
  }
  return config;
}

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value);

const optionalRecord = (value: unknown) => value === undefined || value === null || isRecord(value);

const recordOr = (value: unknown): Record<string, unknown> => (isRecord(value) ? value : {});
