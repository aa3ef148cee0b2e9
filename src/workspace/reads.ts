// Two reads of a stack that cost one Pulumi CLI run fewer, or a cheaper one, than the Automation
// API's. Every CLI run starts a 115 MB Go binary (about 0.3 s of CPU), and one that shows secrets
// stretches the passphrase with 1,000,000 rounds of PBKDF2 (about 0.25 s more): a command that opens
// a stack paid both on every run.
import { readFile } from "node:fs/promises";
import path from "node:path";
import type * as pulumi from "@pulumi/pulumi";
import { parse } from "yaml";

type Stack = pulumi.automation.Stack;

/**
 * `pulumi stack export` without `--show-secrets` (the Automation API's `exportStack` always shows
 * them): secret values stay wrapped and encrypted, so the CLI needs no passphrase to print the state.
 */
export async function exportState(stack: Stack): Promise<pulumi.automation.Deployment> {
  const workspace = stack.workspace as pulumi.automation.LocalWorkspace;
  // The run every Automation API read goes through (LocalWorkspace's own, internal in the SDK's
  // types): the same CLI, environment and directory, and its failures as the same error classes.
  const command = workspace.pulumiCommand as unknown as InternalPulumiCommand;
  const env = { ...(workspace.pulumiHome ? { PULUMI_HOME: workspace.pulumiHome } : {}), ...workspace.envVars };
  const result = await command.run(["stack", "export", "--stack", stack.name], workspace.workDir, env);
  return JSON.parse(result.stdout);
}

type InternalPulumiCommand = {
  run(args: string[], cwd: string, env: Record<string, string>): Promise<{ stdout: string }>;
};

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
export async function plainStackConfig(
  workDir: string,
  stackName: string,
): Promise<pulumi.automation.ConfigMap | undefined> {
  // A file that is missing or is no YAML: the CLI says what is wrong with it.
  const read = (file: string) =>
    readFile(path.join(workDir, file), "utf8")
      .then((text) => parse(text) as unknown)
      .catch(() => undefined);
  const [project, stackFile] = await Promise.all([read("Pulumi.yaml"), read(`Pulumi.${stackName}.yaml`)]);
  if (!isRecord(project) || typeof project.name !== "string" || project.stackConfigDir !== undefined) return undefined;
  if (!isRecord(stackFile) || stackFile.environment !== undefined) return undefined;
  if (!optionalRecord(project.config) || !optionalRecord(stackFile.config)) return undefined;
  const namespaced = (key: string) => (key.includes(":") ? key : `${project.name}:${key}`);
  const config: pulumi.automation.ConfigMap = {};
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
