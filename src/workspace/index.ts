// The Pulumi CLI environment shared by the commands and the tests: the toolchain on PATH, offline
// settings, the backend the user chose (or the project-local file backend on a fresh machine),
// and stacks opened through the Automation API on a project directory.
import { spawn } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, symlinkSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import * as pulumi from "@pulumi/pulumi";
import { BackendError, ConfigError, StackNotFoundError } from "../errors/index.ts";
import { stackWithoutSelect, upWithoutReads } from "../pulumi-seams/index.ts";

const { LocalWorkspace, PulumiCommand } = pulumi.automation;
export type Stack = pulumi.automation.Stack;

/** The agent-iac checkout (the directory holding package.json and Pulumi.yaml). */
export const projectRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");

/**
 * The default backend when the user chose none: a gitignored directory in the Pulumi project the
 * commands run in (the checkout, or a project that installed agent-iac: never inside
 * node_modules, where an `npm install` would delete it).
 */
export function localBackendDir(projectDir: string): string {
  return path.join(projectDir, ".pulumi-state");
}

/**
 * A passphrase for stacks on the local file backend when the user sets none. It protects nothing
 * (it is in this file); real stacks set PULUMI_CONFIG_PASSPHRASE or use another secrets provider.
 */
export const LOCAL_PASSPHRASE = "agent-iac-local-only";

let toolchainReady: Promise<{ dir: string; entries: string[] }> | undefined;
let pulumiCommand: Promise<pulumi.automation.PulumiCommand> | undefined;

/**
 * Runs scripts/ensure-pulumi once per process (it builds the CLI on a first run, printing progress
 * to stderr). Returns the CLI's directory ("" when the `pulumi` already on PATH is used). It changes
 * nothing of the process: the toolchain reaches the CLI through the PATH of its environment
 * (`toolchainPath`, which `openStack` puts in the Automation API's envVars). The build (and the
 * SDK's `pulumi version` in pulumiCli) inherit the process's environment, not a run's: the
 * toolchain is the process's, built once and shared by every run in it.
 */
export async function ensurePulumi(): Promise<string> {
  return (await toolchain()).dir;
}

/**
 * `current` (the run's PATH) with the toolchain first: the CLI, its plugins and this project's Node.
 * The PATH of every Pulumi CLI run, given in its environment, never written into the process's.
 */
export async function toolchainPath(current: string | undefined): Promise<string> {
  const prefix = (await toolchain()).entries.join(path.delimiter);
  if (current === prefix || current?.startsWith(`${prefix}${path.delimiter}`)) return current;
  return [prefix, current].filter(Boolean).join(path.delimiter);
}

function toolchain(): Promise<{ dir: string; entries: string[] }> {
  toolchainReady ??= (async () => {
    const script = path.join(projectRoot, "scripts", "ensure-pulumi");
    // Its progress (stderr) goes straight to the user: a first build takes minutes and says so.
    const { code, stdout } = await new Promise<{ code: number | null; stdout: string }>((resolve, reject) => {
      const child = spawn(script, [], { cwd: projectRoot, stdio: ["ignore", "pipe", "inherit"] });
      let out = "";
      child.stdout.setEncoding("utf8").on("data", (chunk: string) => {
        out += chunk;
      });
      child.on("error", reject);
      child.on("close", (status) => resolve({ code: status, stdout: out }));
    });
    if (code !== 0) {
      // Its exit 2: nothing to build with (no @pulumi/pulumi, no CLI and no Go): the machine's setup.
      const message = `scripts/ensure-pulumi failed (exit ${code}); its output is above`;
      throw code === 2 ? new ConfigError(message) : new BackendError(message);
    }
    const dir = stdout.trim().split("\n").at(-1) ?? "";
    // The CLI spawns the language host and the dynamic-provider plugin from PATH, and they spawn
    // `node`: this project's Node (>= 22) must come before the machine's.
    // The dynamic-provider plugin ships in @pulumi/pulumi (a `pulumi` from PATH may lack it).
    const entries = [
      dir,
      path.dirname(process.execPath),
      path.join(projectRoot, "node_modules", ".bin"),
      path.join(projectRoot, "node_modules", "@pulumi", "pulumi"),
    ].filter(Boolean);
    return { dir, entries };
  })();
  return toolchainReady;
}

/**
 * The Automation API's root for the built CLI in `dir`: it runs `<root>/bin/pulumi` (and puts that
 * folder first on the CLI's PATH, for the plugins beside it). The build puts them in `dir` itself,
 * so `dir/bin` is a link to `dir` (made once; a concurrent run may have made it first).
 */
/**
 * The Automation API's handle on the CLI: the built one by its absolute path, else (no build) the
 * `pulumi` on the user's PATH. Its version is asked (a process) once per process.
 */
export function pulumiCli(): Promise<pulumi.automation.PulumiCommand> {
  pulumiCommand ??= ensurePulumi()
    .then((dir) => PulumiCommand.get(dir ? { root: automationRoot(dir) } : undefined))
    .catch((error: unknown) => {
      pulumiCommand = undefined;
      throw error;
    });
  return pulumiCommand;
}

function automationRoot(dir: string): string {
  const bin = path.join(dir, "bin");
  if (!existsSync(path.join(bin, "pulumi"))) {
    try {
      symlinkSync(".", bin);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
    }
  }
  return dir;
}

/** The backend the user logged in to with `pulumi login` (then we leave it alone), if any. */
function pulumiLogin(pulumiHome: string): string | undefined {
  try {
    const credentials = JSON.parse(readFileSync(path.join(pulumiHome, "credentials.json"), "utf8"));
    return typeof credentials.current === "string" && credentials.current !== "" ? credentials.current : undefined;
  } catch {
    return undefined;
  }
}

export type PulumiEnvironmentOptions = {
  /** A backend URL to use; otherwise PULUMI_BACKEND_URL, an existing login, or the local file backend. */
  backendUrl?: string;
  /** A private PULUMI_HOME (tests use one per run). */
  pulumiHome?: string;
  /** Environment to start from: the run's (the command edge's CommandIO). */
  base: NodeJS.ProcessEnv;
  /** The Pulumi project, home of the default local backend. */
  projectDir: string;
};

/** The environment for every Pulumi CLI run: offline, non-interactive, on the chosen backend. */
export function pulumiEnvironment(options: PulumiEnvironmentOptions): Record<string, string> {
  const base = options.base;
  const localDir = localBackendDir(options.projectDir);
  const local = `file://${localDir}`;
  const env: Record<string, string> = {
    PULUMI_SKIP_UPDATE_CHECK: "true",
    PULUMI_DISABLE_AUTOMATIC_PLUGIN_ACQUISITION: "true",
    // One agent's failed create must not stop the independent ones: every failure is reported at once.
    PULUMI_CONTINUE_ON_ERROR: base.PULUMI_CONTINUE_ON_ERROR ?? "true",
  };
  // The run's PATH, which openStack puts the toolchain before (toolchainPath).
  if (base.PATH) env.PATH = base.PATH;
  const pulumiHome = options.pulumiHome ?? base.PULUMI_HOME;
  if (pulumiHome) env.PULUMI_HOME = pulumiHome;
  const backend =
    options.backendUrl ??
    (base.PULUMI_BACKEND_URL || undefined) ??
    (pulumiLogin(pulumiHome ?? path.join(os.homedir(), ".pulumi")) ? undefined : local);
  if (backend) env.PULUMI_BACKEND_URL = backend;
  if (backend === local) mkdirSync(localDir, { recursive: true });
  for (const name of ["PULUMI_CONFIG_PASSPHRASE", "PULUMI_CONFIG_PASSPHRASE_FILE"] as const) {
    if (base[name]) env[name] = base[name];
  }
  // The public passphrase protects nothing: it is only for the checkout's own file backend.
  if (!hasPassphrase(env) && backend === local) env.PULUMI_CONFIG_PASSPHRASE = LOCAL_PASSPHRASE;
  return env;
}

const hasPassphrase = (env: Record<string, string | undefined>) =>
  Boolean(env.PULUMI_CONFIG_PASSPHRASE || env.PULUMI_CONFIG_PASSPHRASE_FILE);

/**
 * A stack on a self-managed backend (file, postgres, s3, gs, azblob) encrypts its secrets with a passphrase
 * unless its stack file names another secrets provider (`provider`, read from the stack file by
 * src/settings, which owns it). Without one set, stop before Pulumi writes a salt into the
 * tracked stack file or prompts: a ConfigError.
 */
export function assertSecretsProvider(
  provider: string | undefined,
  workDir: string,
  stackName: string,
  env: NodeJS.ProcessEnv,
): void {
  if (hasPassphrase(env)) return;
  const backend = env.PULUMI_BACKEND_URL ?? pulumiLogin(env.PULUMI_HOME ?? path.join(os.homedir(), ".pulumi")) ?? "";
  if (/^https?:\/\//.test(backend)) return; // Pulumi Cloud (or self-hosted): its own secrets manager.
  if (provider && !provider.startsWith("passphrase")) return;
  throw new ConfigError(`stack ${stackName} on ${backend || "this backend"} needs a passphrase for its secrets`, {
    hint:
      "set PULUMI_CONFIG_PASSPHRASE or PULUMI_CONFIG_PASSPHRASE_FILE, or give the stack another secrets provider\n" +
      `(pulumi stack init ${stackName} --secrets-provider <awskms://…|gcpkms://…|azurekeyvault://…|hashivault://…>).\n` +
      `The local-only default passphrase applies only to the project's own backend (${localBackendDir(workDir)}).`,
  });
}

export type OpenStackOptions = {
  stackName: string;
  /** The Pulumi project directory (default: the checkout). */
  workDir?: string;
  /** Create the stack when it does not exist (default true). */
  create?: boolean;
  /** The Pulumi CLI's settings (pulumiEnvironment): backend, passphrase, PULUMI_HOME, PATH. */
  env: Record<string, string>;
  /**
   * The rest of the CLI's environment, under `env`: the run's, never the process's (ProjectContext's
   * childEnv: a variable of the process that the run lacks is undefined, so the SDK's spawn, which
   * puts the process's environment under the one it is given, passes none of them on). The CLI's
   * children inherit it: the dynamic provider reads AGENT_IAC_API_KEY and the rest from it. None
   * (a script or a test that is the process): the SDK puts the process's environment under `env`.
   */
  base?: NodeJS.ProcessEnv;
  /**
   * The project's program as an inline program: it then runs in this process (which has
   * `@pulumi/pulumi` loaded already) instead of a Node process the CLI starts from Pulumi.yaml's
   * `main` (about 2.4 s of CPU per update or preview, most of it loading the SDK).
   */
  program?: pulumi.automation.PulumiFn;
  /** The stack file's secretsprovider (src/settings reads it): none, a passphrase is needed. */
  secretsProvider?: string | undefined;
};

/** The safe way to create a stack, said wherever a stack is missing. */
export function createStackHint(stack: string): string {
  return (
    `create it with your own secrets provider, never the local-only default passphrase:\n` +
    `  PULUMI_CONFIG_PASSPHRASE='<a passphrase of your own>' pulumi stack init ${stack}\n` +
    `  (or: pulumi stack init ${stack} --secrets-provider <awskms://…|gcpkms://…|azurekeyvault://…|hashivault://…>)`
  );
}

/**
 * Opens (or creates) a stack of the project in `workDir` through the Automation API. With
 * `create: false` it runs no `pulumi stack select` (a CLI run of ~0.5–1 s, and it would change the
 * stack the user has selected): every command the Automation API runs names the stack with
 * `--stack`, and the first one says when the backend does not hold it — a StackNotFoundError
 * through `stackError`. The Pulumi CLI's other failures are its own errors.
 */
export async function openStack(options: OpenStackOptions): Promise<Stack> {
  const command = await pulumiCli();
  const workDir = options.workDir ?? projectRoot;
  if (!existsSync(path.join(workDir, "Pulumi.yaml"))) {
    throw new ConfigError(`no Pulumi.yaml in ${workDir}`);
  }
  const envVars = { ...options.base, ...options.env, PATH: await toolchainPath(options.env.PATH) };
  assertSecretsProvider(options.secretsProvider, workDir, options.stackName, envVars);
  const program = options.program ? { program: options.program } : {};
  // Typed as strings in the SDK; its undefined entries are the process's variables the run unsets.
  const workspace = await LocalWorkspace.create({
    envVars: envVars as Record<string, string>,
    pulumiCommand: command,
    workDir,
    ...program,
  });
  if (options.create !== false) return pulumi.automation.Stack.createOrSelect(options.stackName, workspace);
  return stackWithoutSelect(options.stackName, workspace);
}

/** What an update changed, per operation ("create", "replace", "same"…), from its summary event. */
export type ResourceChanges = Record<string, number>;

/**
 * `pulumi up --yes` through the Automation API, without the three CLI runs its `up` makes after the
 * update (`stack output` twice and `stack history`, about 1.3 s of CPU and 1 s of wall time) only to
 * fill a result that nothing here reads: what the update changed comes from its own summary event.
 * Callers read what the stack holds from its state afterwards, as they always did.
 */
export async function upStack(
  stack: Stack,
  options: pulumi.automation.UpOptions,
): Promise<{ changes: ResourceChanges; stdout: string; stderr: string }> {
  let changes: ResourceChanges = {};
  const onEvent = (event: pulumi.automation.EngineEvent) => {
    if (event.summaryEvent) changes = { ...event.summaryEvent.resourceChanges };
    options.onEvent?.(event);
  };
  const { stdout, stderr } = await upWithoutReads(stack, { ...options, onEvent });
  return { changes, stdout, stderr };
}

/**
 * The Automation API's StackNotFoundError (from whichever command first named a stack the backend
 * does not hold) as ours, with the safe way to create it; any other error as it is.
 */
export function stackError(error: unknown, stackName: string): unknown {
  if (error instanceof pulumi.automation.StackNotFoundError) {
    return new StackNotFoundError(stackName, { hint: createStackHint(stackName), cause: error });
  }
  // A self-managed backend's stacks are `dev` or `organization/<project>/dev`: another qualified name is a usage error.
  if (/organization name must be 'organization'/.test(pulumiErrorSummary(error))) {
    const own = stackName.split("/").at(-1) ?? stackName;
    return new ConfigError(
      `--stack ${stackName}: a self-managed backend (file://, s3://, postgres://…) names a stack "${own}" or "organization/<project>/${own}" (the project's name from Pulumi.yaml); "acme/…" or "<project>/${own}" name a Pulumi Cloud stack`,
      { cause: error },
    );
  }
  return error;
}

/**
 * The Pulumi CLI's own error lines from an Automation API failure, without the wrapper's
 * "code: … stdout: … stderr: … err?: …" dump (which repeats everything twice).
 */
export function pulumiErrorSummary(error: unknown): string {
  const message = (error instanceof Error ? error.message : String(error)).trim();
  const stderr = /\n stderr: ([\s\S]*?)(?:\n err\?: |$)/.exec(message)?.[1];
  if (stderr === undefined) return message;
  const lines = stderr
    .split("\n")
    .filter((line) => line.trim() !== "" && !/^Command failed with exit code \d+: /.test(line));
  return lines.join("\n").trim() || message;
}

export { StackLockedError, StackNotFoundError } from "../errors/index.ts";
export { type Interrupts, interruptible, isLockError, lockedStackError } from "./interrupt.ts";
export { isRegistrationNoise, pulumiLogFilter, stripEscapes } from "./output.ts";
export { exportState } from "./reads.ts";
