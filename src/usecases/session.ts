// The stack session: the one way a command opens a stack and reads what it holds — its config
// (Pulumi's own, secrets decrypted), the agent files of its agents:dir, its connection, judge and
// policy settings, the agents its state holds and their scenarios. Offline readers (no Pulumi:
// replay, and the operator commands before a stack exists) read Pulumi.<stack>.yaml here too, and
// nowhere else.
import { execFile } from "node:child_process";
import { existsSync } from "node:fs";
import { readdir, readFile, writeFile } from "node:fs/promises";
import path from "node:path";
import { parse, parseDocument } from "yaml";
import { type CallerShapeSettings, resolveCallerShapeSettings } from "../caller/index.ts";
import { AGENT_DIRECTORY_TYPE, PREVIOUS_VERSIONS_OUTPUT, versionsBeforeIn } from "../component/index.ts";
import {
  type AgentDefinition,
  type Diagnostic,
  declaredAgents,
  loadAgents,
  SCENARIO_DIR,
} from "../definitions/index.ts";
import { AgentIacError, BackendError, ConfigError, StackNotFoundError } from "../errors/index.ts";
import { type HeldAgent, type StateResource, stateAgents } from "../provider/index.ts";
import type { PlanSettings } from "../report/index.ts";
import {
  type ConfigReader,
  type Connection,
  configMapReader,
  type JudgeSettings,
  policyPackOptions,
  resolveConnection,
  resolveJudge,
  type StackFileVersions,
  settingChanges,
  stackFileSettings,
  withBaseSettings,
} from "../settings/index.ts";
import {
  createStackHint,
  LOCAL_PASSPHRASE,
  openStack,
  pulumiEnvironment,
  pulumiErrorSummary,
  type Stack,
  stackError,
} from "../workspace/index.ts";
import { invalidFiles } from "./errors.ts";

export type StackConfig = Record<string, { value: string; secret?: boolean } | undefined>;

/**
 * What the stack's state holds: its agents, which of them the outputs pin differently, its
 * AgentDirectory folders, and the version each agent held before its current one (the program's
 * `previous_versions` output: what its last replace left).
 */
export type HeldAgents = {
  agents: Record<string, HeldAgent>;
  stale: string[];
  directories: string[];
  previous: Record<string, string>;
  /** Whether the stack's outputs carry `previous_versions` at all (stacks deployed before it existed do not). */
  previousRecorded: boolean;
};

export type StackSession = {
  name: string;
  stack: Stack;
  /** The Pulumi environment the stack was opened with (backend, passphrase). */
  env: Record<string, string>;
  config: StackConfig;
  settings: ConfigReader;
  /** The stack's agents:dir, absolute. */
  dir: string;
  /** The agent files (read once, when first asked for): the definitions and every problem at its file:line. */
  agentFiles(): Promise<{ agents: AgentDefinition[]; errors: Diagnostic[] }>;
  connection: Connection;
  judge: JudgeSettings;
  /** The caller's control-message settings (agents:callerMessage, agents:callerEnd). */
  caller: CallerShapeSettings;
  /** Said before a run when the stack holds secrets that its public passphrase does not protect. */
  secretsWarning: string | undefined;
  /** The Automation API's policy pack options for a preview or up (none when the stack names no pack). */
  policy(): ReturnType<typeof policyPackOptions>;
  /** The agent files, or an InvalidFilesError (`consequence`: e.g. "; nothing was previewed"). */
  validFiles(consequence?: string): Promise<AgentDefinition[]>;
  held(): Promise<HeldAgents>;
  /** Every agent with its scenarios (agent files, AgentDirectory folders, smoke/<key>.yaml). */
  scenarioAgents(held?: HeldAgents): Promise<AgentDefinition[]>;
};

/** `what` names the failure of a Pulumi call ("the preview failed"). Never creates a stack unless `create`. */
export async function openSession(
  name: string,
  options: {
    what?: string;
    create?: boolean;
    workDir?: string;
    /** A pull request's stack file at base and head: the guarded settings (where keys and transcripts go, which pack runs) come from the base. */
    base?: StackFileVersions;
    /** The caller reads what the state holds first thing: it is exported beside the config, at once. */
    readState?: boolean;
  } = {},
): Promise<StackSession> {
  const workDir = options.workDir ?? process.cwd();
  const env = pulumiEnvironment();
  let stack: Stack;
  let config: StackConfig;
  // The export read at open (readState): the first `held()` takes it, later ones read the state again.
  let prefetched: Promise<HeldAgents | Error> | undefined;
  try {
    stack = await openStack({ stackName: name, workDir, create: false, env });
    // The state is read beside the config where the caller will read it (two CLI runs at once).
    if (options.readState) prefetched = stackAgents(stack).catch((error: unknown) => error as Error);
    // A stack to create is created when the first read says it is missing: an existing one (the
    // usual case) costs no `pulumi stack select` run, and the user's selected stack stays as it was.
    config = await stack.getAllConfig().catch(async (error: unknown) => {
      if (!options.create || !(stackError(error, name) instanceof StackNotFoundError)) throw error;
      await stack.workspace.createStack(name);
      prefetched = undefined; // read before the stack existed
      return stack.getAllConfig();
    });
  } catch (error) {
    throw backendError(options.what ?? `opening stack ${name} failed`, stackError(error, name));
  }
  const settings = options.base ? withBaseSettings(configMapReader(config), options.base) : configMapReader(config);
  const dir = path.resolve(workDir, config["agents:dir"]?.value ?? "agents");
  let files: ReturnType<typeof agentFilesOf> | undefined;
  const agentFiles = () => {
    files ??= agentFilesOf(name, config["agents:dir"]?.value, workDir);
    return files;
  };
  const session: StackSession = {
    name,
    stack,
    env,
    config,
    settings,
    dir,
    agentFiles,
    connection: resolveConnection(settings),
    judge: resolveJudge(settings),
    caller: resolveCallerShapeSettings(settings),
    secretsWarning: publicSecretsWarning(name, config, env),
    policy: () => policyPackOptions(settings, workDir),
    validFiles: async (consequence = "") => {
      const { agents, errors } = await agentFiles();
      if (errors.length > 0) throw invalidFiles(errors, "the agent files", consequence);
      return agents;
    },
    held: async () => {
      const first = prefetched;
      prefetched = undefined;
      const held = await (first ?? stackAgents(stack)).catch((error: unknown) => error as Error);
      if (held instanceof Error) throw backendError("reading the stack's state failed", held);
      return held;
    },
    scenarioAgents: async (held) =>
      scenarioAgents({ stackName: name, dir, fromFiles: await session.validFiles(), held }),
  };
  return session;
}

/**
 * A warning when the stack holds secrets encrypted with the public local-only passphrase (the dev
 * stack's): anyone who reads its stack file can decrypt them, so a real key does not belong there.
 */
function publicSecretsWarning(name: string, config: StackConfig, env: Record<string, string>): string | undefined {
  if (env.PULUMI_CONFIG_PASSPHRASE !== LOCAL_PASSPHRASE || env.PULUMI_CONFIG_PASSPHRASE_FILE) return undefined;
  const secrets = Object.keys(config).filter((key) => config[key]?.secret);
  if (secrets.length === 0) return undefined;
  return (
    `warning: stack ${name} holds ${secrets.join(", ")} as a secret, but its secrets are encrypted with the public ` +
    `local-only passphrase: anyone who can read Pulumi.${name}.yaml can decrypt them. Keep real keys out of this ` +
    `stack (\`pulumi config rm KEY --stack ${name}\`) and give them in the environment (AGENT_IAC_API_KEY, ` +
    `AGENT_IAC_JUDGE_API_KEY, AGENT_IAC_CALLER_API_KEY), or use a stack with a passphrase of your own.\n`
  );
}

/** The base a pull request's plan compares with: `--base REF`, else a GitHub Actions pull request's base branch. */
export function pullRequestBase(flag: string | undefined, env: NodeJS.ProcessEnv = process.env): string | undefined {
  if (flag) return flag;
  const event = env.GITHUB_EVENT_NAME;
  const branch = env.GITHUB_BASE_REF;
  return (event === "pull_request" || event === "pull_request_target") && branch ? `origin/${branch}` : undefined;
}

const git = (args: string[], cwd: string) =>
  new Promise<{ ok: boolean; stdout: string }>((resolve) => {
    execFile("git", args, { cwd, maxBuffer: 16 * 1024 * 1024 }, (error, stdout) =>
      resolve({ ok: !error, stdout: String(stdout) }),
    );
  });

/**
 * The stack file's settings at `ref` and in the working tree, and each agents:* setting that
 * differs. A stack file the base does not have counts as empty (every setting is added). A ref
 * git does not know is a configuration error: a plan never guesses its base.
 */
export async function stackSettingsAgainst(
  stackName: string,
  ref: string,
  workDir = process.cwd(),
): Promise<StackFileVersions & { settings: PlanSettings }> {
  const file = `Pulumi.${stackName}.yaml`;
  const known = await git(["rev-parse", "--verify", "--quiet", `${ref}^{commit}`], workDir);
  if (!known.ok) {
    throw new ConfigError(
      `--base ${ref}: not a commit of this repository here (in GitHub Actions, check out with fetch-depth: 0, or \`git fetch origin <branch>\`); nothing was previewed`,
    );
  }
  const atBase = await git(["show", `${ref}:./${file}`], workDir);
  const base = stackFileSettings(atBase.ok ? atBase.stdout : undefined, `${file} at ${ref}`);
  const head = stackFileSettings(await readFile(path.join(workDir, file), "utf8").catch(() => undefined), file);
  return { base, head, settings: { base: ref, changes: settingChanges(base, head) } };
}

/** A failure of the Pulumi CLI in its own lines; an error of ours (a missing stack, a toolchain failure) as it is. */
export function backendError(what: string, error: unknown): unknown {
  // Ours already says what happened (a missing stack, a toolchain failure, a refused setting).
  if (error instanceof AgentIacError) return error;
  return new BackendError(`${what}: ${pulumiErrorSummary(error)}`, { cause: error });
}

/** The agent files of a directory setting (default agents/); a project that declares agents only in code has none. */
async function agentFilesOf(
  stackName: string,
  setting: string | undefined,
  workDir: string,
): Promise<{ dir: string; agents: AgentDefinition[]; errors: Diagnostic[] }> {
  const dir = path.resolve(workDir, setting ?? "agents");
  if (setting === undefined && !existsSync(dir)) return { dir, agents: [], errors: [] };
  return { dir, ...(await loadAgents(dir, { stack: stackName })) };
}

/** The plain values of Pulumi.<stack>.yaml (a secret there cannot be read without Pulumi). */
async function stackFileConfig(stackName: string, workDir = process.cwd()): Promise<StackConfig> {
  const file = path.join(workDir, `Pulumi.${stackName}.yaml`);
  const text = await readFile(file, "utf8").catch(() => undefined);
  if (text === undefined) throw new StackNotFoundError(stackName, { hint: createStackHint(stackName) });
  let values: Record<string, unknown>;
  try {
    values = (parse(text) as { config?: Record<string, unknown> } | null)?.config ?? {};
  } catch (error) {
    throw new ConfigError(`Pulumi.${stackName}.yaml: ${(error as Error).message}`);
  }
  return Object.fromEntries(
    Object.entries(values).flatMap(([key, value]) => (typeof value === "string" ? [[key, { value }]] : [])),
  );
}

/**
 * A copy of Pulumi.<stack>.yaml with some settings replaced, in `stateDir` (e.g. agents:baseUrl of
 * the simulator a run started), for the Automation API's `configFile`; the stack's own file is untouched.
 */
export async function stackFileCopy(
  stackName: string,
  settings: Record<string, string>,
  dirs: { workDir: string; stateDir: string },
): Promise<string> {
  const source = path.join(dirs.workDir, `Pulumi.${stackName}.yaml`);
  const document = parseDocument(await readFile(source, "utf8").catch(() => "config: {}\n"));
  for (const [key, value] of Object.entries(settings)) document.setIn(["config", key], value);
  const target = path.join(dirs.stateDir, `Pulumi.${stackName}.run.yaml`);
  await writeFile(target, document.toString());
  return target;
}

/** A stack's config (secrets decrypted); where the stack is not created yet, its Pulumi.<stack>.yaml's plain values. */
export async function stackConfigOrFile(stackName: string): Promise<StackConfig> {
  try {
    const stack = await openStack({ stackName, workDir: process.cwd(), create: false, env: pulumiEnvironment() });
    return await stack.getAllConfig();
  } catch (error) {
    const failure = backendError(`reading stack ${stackName} failed`, stackError(error, stackName));
    if (!(failure instanceof StackNotFoundError)) throw failure;
    return await stackFileConfig(stackName);
  }
}

/**
 * The connection of a stack for the commands that only talk to the service (lists, events). Where
 * the stack has not been created on this backend yet (a fresh clone running `npm run service`),
 * the plain values of its Pulumi.<stack>.yaml stand in.
 */
export async function stackConnection(stackName: string, overrides: { baseUrl?: string } = {}): Promise<Connection> {
  if (overrides.baseUrl) return resolveConnection(() => undefined, process.env, overrides);
  return resolveConnection(configMapReader(await stackConfigOrFile(stackName)), process.env, overrides);
}

/** The service address of a stack from its Pulumi.<stack>.yaml (else the environment), no Pulumi; undefined when neither says. */
export async function stackFileAddress(stackName: string): Promise<string | undefined> {
  const config = await stackFileConfig(stackName).catch(() => ({}) as StackConfig);
  return resolveConnection(configMapReader(config)).baseUrl;
}

/** Offline (replay): the stack's agent files and judge settings from Pulumi.<stack>.yaml, no Pulumi and no network. */
export async function offlineProject(stackName: string) {
  const config = await stackFileConfig(stackName).catch((error: unknown) => {
    if (error instanceof StackNotFoundError) return {} as StackConfig;
    throw error;
  });
  const { dir, agents, errors } = await agentFilesOf(stackName, config["agents:dir"]?.value, process.cwd());
  if (errors.length > 0) throw invalidFiles(errors);
  // No state offline: smoke/<key>.yaml stands for the agents declared in code.
  const definitions = await scenarioAgents({ stackName, dir, fromFiles: agents });
  return { dir, definitions, judge: resolveJudge(configMapReader(config)) };
}

/**
 * Offline, without credentials (a fork's pull request): the stack file's plain settings (the
 * guarded ones from the base, when given) and its valid agent files. No Pulumi, no network.
 */
export async function offlineStack(
  stackName: string,
  options: { base?: StackFileVersions; consequence?: string } = {},
): Promise<{ agents: AgentDefinition[]; settings: ConfigReader }> {
  const config = await stackFileConfig(stackName);
  const head = configMapReader(config);
  const settings = options.base ? withBaseSettings(head, options.base) : head;
  const { agents, errors } = await agentFilesOf(stackName, config["agents:dir"]?.value, process.cwd());
  if (errors.length > 0) throw invalidFiles(errors, "the agent files", options.consequence ?? "");
  return { agents, settings };
}

/**
 * The agents the stack's state holds (what the last update, even a failed or interrupted one,
 * created), and which of them the stack outputs (written by the last successful update only) pin
 * differently.
 */
async function stackAgents(stack: Stack): Promise<HeldAgents> {
  const state = await stack.exportStack();
  const agents = stateAgents(state.deployment);
  // The agent-file directories of the program's AgentDirectory components (their `dir` output).
  const directories: string[] = [];
  const resources = (state.deployment?.resources ?? []) as StateResource[];
  for (const resource of resources) {
    if (resource.type === AGENT_DIRECTORY_TYPE && typeof resource.outputs?.dir === "string") {
      directories.push(resource.outputs.dir);
    }
  }
  // Agents a program declares without listing them in an `agents` output are not stale.
  const outputs = (await agentsOutput(stack, resources)) as Record<string, { version_id?: string } | undefined>;
  const stale = Object.keys(agents).filter(
    (key) => outputs[key] !== undefined && outputs[key]?.version_id !== agents[key]?.version_id,
  );
  return { agents, stale, directories, ...previousVersionsOf(resources, agents) };
}

/**
 * The `previous_versions` outputs (src/component/previous.ts) of the stack and of its AgentDirectory
 * components, for the agents it holds; {} before one was written.
 */
function previousVersionsOf(
  resources: StateResource[],
  agents: Record<string, HeldAgent>,
): Pick<HeldAgents, "previous" | "previousRecorded"> {
  const previous: Record<string, string> = {};
  let previousRecorded = false;
  for (const resource of resources) {
    if (resource.delete || (resource.type !== "pulumi:pulumi:Stack" && resource.type !== AGENT_DIRECTORY_TYPE))
      continue;
    const value = resource.outputs?.[PREVIOUS_VERSIONS_OUTPUT];
    previousRecorded ||= typeof value === "object" && value !== null;
    Object.assign(previous, versionsBeforeIn({ [PREVIOUS_VERSIONS_OUTPUT]: value }).previous);
  }
  const current = Object.entries(previous).filter(
    ([key, version]) => agents[key] && agents[key].version_id !== version,
  );
  return { previous: Object.fromEntries(current), previousRecorded };
}

/**
 * The stack's `agents` output. Stack outputs are the root Stack resource's outputs in the state just
 * exported, so they are read there (`stack.outputs()` is two more CLI runs); a secret output is
 * wrapped in the export, and only then is it asked for.
 */
async function agentsOutput(stack: Stack, resources: StateResource[]): Promise<unknown> {
  const root = resources.find((resource) => resource.type === "pulumi:pulumi:Stack" && !resource.delete);
  const value = root?.outputs?.agents;
  if (typeof value === "object" && value !== null && SECRET_SIGNATURE in value) {
    return (await stack.outputs()).agents?.value ?? {};
  }
  return value ?? {};
}

/** The key Pulumi marks a secret value with in exported state. */
const SECRET_SIGNATURE = "4dabf18193072939515e22adb298388d";

/** Said when the outputs lag the state: smoke calls what the stack holds. */
export function staleOutputsNote(stack: string, stale: string[]): string {
  return (
    `note: the outputs of stack ${stack} are from an earlier update (the last one failed or was interrupted); ` +
    `the stack holds other versions of ${stale.join(", ")}: calling the versions the stack holds.\n`
  );
}

type ScenarioSources = {
  stackName: string;
  /** The stack's agents:dir, absolute; its files are `fromFiles`, already read. */
  dir: string;
  fromFiles: AgentDefinition[];
  /** What the state holds; without it (offline), every smoke/<key>.yaml stands for an agent declared in code. */
  held?: { agents: Record<string, HeldAgent>; directories: string[] } | undefined;
};

/**
 * The one scenario loader: every use case that plays scenarios reads them here, from the agent
 * files, the other folders the stack's AgentDirectory components deploy, and smoke/<key>.yaml for
 * agents declared in TypeScript. Problems are an InvalidFilesError, each at its file:line.
 */
async function scenarioAgents(sources: ScenarioSources): Promise<AgentDefinition[]> {
  const projectDir = process.cwd();
  const held = sources.held ?? { agents: await scenarioFileAgents(projectDir), directories: [] };
  const declared = await declaredAgents({
    projectDir,
    stack: sources.stackName,
    held: held.agents,
    directories: held.directories,
    fromFiles: sources.fromFiles,
    loadedDir: sources.dir,
  });
  if (declared.errors.length > 0) throw invalidFiles(declared.errors, "the scenario files");
  return [...sources.fromFiles, ...declared.agents];
}

/** Offline: smoke/<key>.yaml files name conversational agents declared in code. */
async function scenarioFileAgents(projectDir: string): Promise<Record<string, Pick<HeldAgent, "kind" | "name">>> {
  const names = await readdir(path.join(projectDir, SCENARIO_DIR)).catch(() => [] as string[]);
  return Object.fromEntries(
    names
      .filter((name) => name.endsWith(".yaml"))
      .map((name) => name.slice(0, -".yaml".length))
      .map((key) => [key, { kind: "conversational" as const, name: key }]),
  );
}
