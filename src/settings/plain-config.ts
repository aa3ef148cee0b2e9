// The stack's config read from its files where they say all of it: a command that opens a stack
// then runs one Pulumi CLI command fewer (each starts a 115 MB binary, and `pulumi config
// --show-secrets` stretches the passphrase with 1,000,000 rounds of PBKDF2).
import { stackFiles, workingTree } from "./stack-files.ts";

/** The map `pulumi config --json` prints (the Automation API's ConfigMap). */
type ConfigMap = Record<string, { value: string; secret: boolean }>;

/**
 * The stack's config as `pulumi config --json` gives it (the project's `config:` values and
 * defaults, then the stack file's, wherever stackConfigDir puts it, merge keys applied), read from
 * the files, when they hold nothing but plain values. Undefined, so the caller asks the CLI,
 * wherever the files alone might not say what the CLI would: no stack file (a backend that keeps
 * the config, or a stack not created), a secret, an ESC environment, an object, a list, or a value
 * Pulumi's YAML reads otherwise (an unquoted date, `012`, a large integer, a decimal).
 */
export async function plainStackConfig(workDir: string, stackName: string): Promise<ConfigMap | undefined> {
  // A file that is no YAML: the CLI says what is wrong with it.
  const files = await stackFiles(workingTree(workDir), stackName).catch(() => undefined);
  if (!files?.plain) return undefined;
  return Object.fromEntries(Object.entries(files.settings).map(([key, { value }]) => [key, { value, secret: false }]));
}
