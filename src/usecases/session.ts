// The stack session: the one way a command opens a stack and reads what it holds — its config
// (Pulumi's own, secrets decrypted; from its files where they hold only plain values), the agent
// files of its agents:dir, its connection, judge and policy settings, the agents its state holds
// and their scenarios. Offline readers (no Pulumi: replay, and the operator commands before a stack
// exists) read Pulumi.<stack>.yaml here too, and nowhere else.
import { execFile } from "node:child_process";
import { existsSync } from "node:fs";
import { readdir, writeFile } from "node:fs/promises";
import path from "node:path";
import { parseDocument } from "yaml";
import { AGENT_DIRECTORY_TYPE, PREVIOUS_VERSIONS_OUTPUT, versionsBeforeIn } from "../component/index.ts";
import { inlineAgentsProgram } from "../component/program.ts";
import {
  type AgentDefinition,
  type Diagnostic,
  declaredAgents,
  loadAgents,
  SCENARIO_DIR,
} from "../definitions/index.ts";
import { AgentIacError, BackendError, ConfigError, StackNotFoundError } from "../errors/index.ts";
import { type HeldAgent, type StateResource, stateAgents, stateBodies } from "../provider/index.ts";
import type { PlanSettings } from "../results/index.ts";
import {
  agentsDirSetting,
  type CallerShapeSettings,
  type ConfigReader,
  type Connection,
  configMapReader,
  type JudgeSettings,
  type ProjectContext,
  plainSettings,
  plainStackConfig,
  policyPackOptions,
  pullRequestChanges,
  type ReadProjectFile,
  type ResolvedConnection,
  requireConnection,
  resolveConnection,
  runSettings,
  type StackFileVersions,
  stackFiles,
  withBaseSettings,
  workingTree,
} from "../settings/index.ts";
import {
  createStackHint,
  exportState,
  LOCAL_PASSPHRASE,
  openStack,
  pulumiEnvironment,
  pulumiErrorSummary,
  type Stack,
  stackError,
} from "../workspace/index.ts";
import { invalidFiles } from "./errors.ts";

type StackConfig = Record<string, { value: string; secret?: boolean } | undefined>;

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
  /** Each agent's request body as the state holds it (what it was created with), by key. */
  bodies?: Record<string, Record<string, unknown>>;
};

/** What a session reads of the project and its stack file, with or without Pulumi. */
export type ProjectSession = {
  name: string;
  /** The project the session reads (its directory, state directory and environment). */
  project: ProjectContext;
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
  /** The Automation API's policy pack options for a preview or up (none when the stack names no pack). */
  policy(): ReturnType<typeof policyPackOptions>;
  /** The agent files, or an InvalidFilesError (`consequence`: e.g. "; nothing was previewed"). */
  validFiles(consequence?: string): Promise<AgentDefinition[]>;
  /** Every agent with its scenarios (agent files, AgentDirectory folders, smoke/<key>.yaml). */
  scenarioAgents(held?: HeldAgents): Promise<AgentDefinition[]>;
};

export type StackSession = ProjectSession & {
  stack: Stack;
  /** The Pulumi environment the stack was opened with (backend, passphrase). */
  env: Record<string, string>;
  /** Said before a run when the stack holds secrets that its public passphrase does not protect. */
  secretsWarning: string | undefined;
  held(): Promise<HeldAgents>;
};

/**
 * Where a session's settings come from: `stack`, Pulumi's config of the stack (secrets decrypted);
 * `file`, the plain values of Pulumi.<stack>.yaml (no Pulumi, no network: replay, a fork's plan);
 * `stack-or-file`, the stack's config, or its file's where the stack is not created on this
 * backend yet (a fresh clone running `npm run service`).
 */
type SessionSource = "stack" | "file" | "stack-or-file";

type SessionOptions = {
  project: ProjectContext;
  /** `what` names the failure of a Pulumi call ("the preview failed"). */
  what?: string;
  /** A pull request's stack file at base and head: the guarded settings (where keys and transcripts go, which pack runs) come from the base. */
  base?: StackFileVersions;
  /** Offline (`file`): a missing stack file reads as no settings instead of a StackNotFoundError. */
  optional?: boolean;
};

/** The one way to open a stack: `source` says where its settings come from (default `stack`). Never creates a stack unless `create`. */
export async function openSession(name: string, options: OpenOptions & { source?: "stack" }): Promise<StackSession>;
export async function openSession(
  name: string,
  options: SessionOptions & { source: "file" | "stack-or-file" },
): Promise<ProjectSession>;
export async function openSession(name: string, options: OpenOptions): Promise<ProjectSession> {
  const reads = stackReads(name, options);
  const config = await firstConfig(name, configSources(name, options, reads));
  return reads.answered ? stackSession(name, config, options, reads.answered) : projectSession(name, config, options);
}

type OpenOptions = SessionOptions & {
  source?: SessionSource;
  create?: boolean;
  /** The caller reads what the state holds first thing: it is exported beside the config, at once. */
  readState?: boolean;
};

/** One source of the stack's config: the config, or undefined for "ask the next". */
type ConfigSource = () => Promise<StackConfig | undefined>;

/**
 * Where the config comes from, in the order asked: the files first (no CLI run), then the CLI.
 * `file`: the stack file's plain values. `stack-or-file`: Pulumi.yaml and the stack file where they
 * hold only plain values (what the CLI would say, created or not), then the stack, then, where the
 * backend holds no such stack yet, the stack file's plain values. `stack`: the files where they hold
 * only plain values and the caller reads the state first thing (the export alone then says the
 * stack exists: one CLI run), then the stack's config.
 */
function configSources(name: string, options: OpenOptions, reads: StackReads): ConfigSource[] {
  const fileValues = (optional: boolean) => () =>
    stackFileConfig(name, options.project.dir).catch((error: unknown) => {
      if (optional && error instanceof StackNotFoundError) return {} as StackConfig;
      throw error;
    });
  switch (options.source) {
    case "file":
      return [fileValues(options.optional === true)];
    case "stack-or-file":
      return [() => plainStackConfig(options.project.dir, name), reads.configUnlessMissing, fileValues(false)];
    default:
      return options.readState ? [reads.plainFilesBesideState, reads.config] : [reads.config];
  }
}

/** The config of the first source that has it: the last source of every chain answers or throws. */
async function firstConfig(name: string, sources: ConfigSource[]): Promise<StackConfig> {
  for (const source of sources) {
    const config = await source();
    if (config) return config;
  }
  throw new BackendError(`no source gave the config of stack ${name}`);
}

/** A stack the Automation API opened, and its export when it was read at open. */
type OpenedStack = {
  stack: Stack;
  /** The Pulumi environment the stack was opened with (backend, passphrase). */
  env: Record<string, string>;
  /** The export read at open (readState): the first `held()` takes it, later ones read the state again. */
  prefetched: Promise<HeldAgents | Error> | undefined;
};

type StackReads = {
  /** The stack, once a source answered from it (it exists): the session is then a StackSession. */
  answered: OpenedStack | undefined;
  /** Pulumi's config of the stack (secrets decrypted), the state exported beside it (readState: two CLI runs at once). */
  config: () => Promise<StackConfig>;
  /** The same, or undefined where the backend holds no such stack. */
  configUnlessMissing: ConfigSource;
  /** The plain files' config, where they hold only plain values, and the state exported. */
  plainFilesBesideState: ConfigSource;
};

/**
 * The sources that run the Pulumi CLI, over one stack opened by the first of them that runs, with
 * no `pulumi stack select`. A stack to create (`create`) is created when the first read says it is
 * missing: an existing one (the usual case) costs no select run, and the user's selected stack
 * stays as it was. Their failures are the CLI's own lines (backendError), a missing stack ours.
 */
function stackReads(name: string, options: OpenOptions): StackReads {
  const { project } = options;
  let env: Record<string, string> | undefined;
  let opening: Promise<OpenedStack> | undefined;
  const environment = () => {
    env ??= pulumiEnvironment({ base: project.env, projectDir: project.dir });
    return env;
  };
  const failing = async <T>(read: () => Promise<T>): Promise<T> => {
    try {
      return await read();
    } catch (error) {
      throw backendError(options.what ?? `reading stack ${name} failed`, stackError(error, name));
    }
  };
  const open = (env: Record<string, string>) => {
    opening ??= openStackIn(name, project, env);
    return opening;
  };
  const created = async (opened: OpenedStack, error: unknown) => {
    if (!options.create || !(stackError(error, name) instanceof StackNotFoundError)) throw error;
    await opened.stack.workspace.createStack(name);
    opened.prefetched = undefined; // read before the stack existed
  };
  const reads: StackReads = {
    answered: undefined,
    config: () => {
      const env = environment();
      return failing(async () => {
        const opened = await open(env);
        if (options.readState) opened.prefetched = stackAgents(opened.stack).catch((error: unknown) => error as Error);
        const config = await opened.stack.getAllConfig().catch(async (error: unknown) => {
          await created(opened, error);
          return opened.stack.getAllConfig();
        });
        reads.answered = opened;
        return config;
      });
    },
    configUnlessMissing: () =>
      reads.config().catch((error: unknown) => {
        if (error instanceof StackNotFoundError) return undefined;
        throw error;
      }),
    plainFilesBesideState: () => {
      const env = environment();
      return failing(async () => {
        const opened = await open(env);
        const plain = await plainStackConfig(project.dir, name);
        if (!plain) return undefined;
        const held = await stackAgents(opened.stack).catch((error: unknown) => error as Error);
        opened.prefetched = Promise.resolve(held);
        if (held instanceof Error && stackError(held, name) instanceof StackNotFoundError) await created(opened, held);
        reads.answered = opened;
        return plain;
      });
    },
  };
  return reads;
}

/** The stack of the project through the Automation API, its program inline where it is the agents program. */
async function openStackIn(name: string, project: ProjectContext, env: Record<string, string>): Promise<OpenedStack> {
  const program = inlineAgentsProgram(project.dir, { ...project.env, ...env });
  const { secretsProvider } = await stackFiles(workingTree(project.dir), name).catch(() => ({
    secretsProvider: undefined,
  }));
  const stack = await openStack({
    stackName: name,
    workDir: project.dir,
    create: false,
    env,
    base: project.childEnv,
    secretsProvider,
    ...(program ? { program } : {}),
  });
  return { stack, env, prefetched: undefined };
}

/** A session over a stack a source read its config from. */
function stackSession(name: string, config: StackConfig, options: OpenOptions, opened: OpenedStack): StackSession {
  const { stack, env } = opened;
  return {
    ...projectSession(name, config, options),
    stack,
    env,
    secretsWarning: publicSecretsWarning(name, config, env),
    held: async () => {
      const first = opened.prefetched;
      opened.prefetched = undefined;
      const held = await (first ?? stackAgents(stack)).catch((error: unknown) => error as Error);
      if (held instanceof Error) throw backendError("reading the stack's state failed", stackError(held, name));
      return held;
    },
  };
}

/** A session over settings already read: the agent files, connection, judge and policy of the project. */
function projectSession(name: string, config: StackConfig, options: SessionOptions): ProjectSession {
  const { project } = options;
  const head = configMapReader(config);
  const settings = options.base ? withBaseSettings(head, options.base) : head;
  const setting = agentsDirSetting(settings);
  const dir = path.resolve(project.dir, setting ?? "agents");
  let files: ReturnType<typeof agentFilesOf> | undefined;
  const agentFiles = () => {
    files ??= agentFilesOf(name, dir, setting !== undefined, project.dir);
    return files;
  };
  const validFiles = async (consequence = "") => {
    const { agents, errors } = await agentFiles();
    if (errors.length > 0) throw invalidFiles(errors, "the agent files", consequence);
    return agents;
  };
  return {
    name,
    project,
    config,
    settings,
    dir,
    agentFiles,
    ...runSettings(settings, project.env),
    policy: () => policyPackOptions(settings, project.dir),
    validFiles,
    scenarioAgents: async (held) =>
      scenarioAgents({ stackName: name, projectDir: project.dir, dir, fromFiles: await validFiles(), held }),
  };
}

/** A session's connection ready for the service's requests: its address and key (a ConfigError naming the stack when one lacks). */
export function serviceConnection(session: Pick<ProjectSession, "name" | "connection">): ResolvedConnection {
  return requireConnection(session.connection, session.name);
}

/**
 * The connection of a stack for the commands that only talk to the service (lists, events): an
 * explicit address (`overrides.baseUrl`) reads no stack; otherwise the stack's, or its file's.
 */
export async function stackConnection(
  project: ProjectContext,
  stackName: string,
  overrides: { baseUrl?: string | undefined } = {},
): Promise<Connection> {
  if (overrides.baseUrl) return resolveConnection(() => undefined, project.env, overrides);
  return (await openSession(stackName, { project, source: "stack-or-file" })).connection;
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
    `local-only passphrase: anyone who can read its stack file can decrypt them. Keep real keys out of this ` +
    `stack (\`pulumi config rm KEY --stack ${name}\`) and give them in the environment (AGENT_IAC_API_KEY, ` +
    `AGENT_IAC_JUDGE_API_KEY, AGENT_IAC_CALLER_API_KEY), or use a stack with a passphrase of your own.\n`
  );
}

/** The base a pull request's plan compares with: `--base REF`, else a GitHub Actions pull request's base branch. */
export function pullRequestBase(flag: string | undefined, env: NodeJS.ProcessEnv): string | undefined {
  if (flag) return flag;
  const event = env.GITHUB_EVENT_NAME;
  const branch = env.GITHUB_BASE_REF;
  return (event === "pull_request" || event === "pull_request_target") && branch ? `origin/${branch}` : undefined;
}

/** `git <args>` in the project's directory with the run's environment. */
const git = (args: string[], project: ProjectContext) =>
  new Promise<{ ok: boolean; stdout: string }>((resolve) => {
    execFile("git", args, { cwd: project.dir, env: project.env, maxBuffer: 64 * 1024 * 1024 }, (error, stdout) =>
      resolve({ ok: !error, stdout: String(stdout) }),
    );
  });

/** A project file as it is at git `ref`; undefined where the ref (or the file there) is not. */
export async function fileAtRef(project: ProjectContext, ref: string, file: string): Promise<string | undefined> {
  const shown = await git(["show", `${ref}:./${file}`], project);
  return shown.ok ? shown.stdout : undefined;
}

/**
 * The stack's settings as Pulumi resolves them at `ref` (Pulumi.yaml and the stack file, wherever
 * its stackConfigDir puts it, read from git) and in the working tree, and each change: of an
 * agents:* setting, or of where config comes from. Files the base does not have count as empty
 * (every setting is added). A ref git does not know is a configuration error: a plan never guesses
 * its base.
 */
export async function stackSettingsAgainst(
  stackName: string,
  ref: string,
  project: ProjectContext,
): Promise<StackFileVersions & { settings: PlanSettings }> {
  const known = await git(["rev-parse", "--verify", "--quiet", `${ref}^{commit}`], project);
  if (!known.ok) {
    throw new ConfigError(
      `--base ${ref}: not a commit of this repository here (in GitHub Actions, check out with fetch-depth: 0, or \`git fetch origin <branch>\`); nothing was previewed`,
    );
  }
  const atBase: ReadProjectFile = (file) => fileAtRef(project, ref, file);
  const [base, head] = await Promise.all([
    stackFiles(atBase, stackName, ` at ${ref}`),
    stackFiles(workingTree(project.dir), stackName),
  ]);
  const { changes, ...versions } = pullRequestChanges(base, head);
  return { ...versions, settings: { base: ref, changes } };
}

/** A failure of the Pulumi CLI in its own lines; an error of ours (a missing stack, a toolchain failure) as it is. */
export function backendError(what: string, error: unknown): unknown {
  // Ours already says what happened (a missing stack, a toolchain failure, a refused setting).
  if (error instanceof AgentIacError) return error;
  return new BackendError(`${what}: ${pulumiErrorSummary(error)}`, { cause: error });
}

/** The agent files of the stack's agents:dir; a project that declares agents only in code (no setting, no agents/) has none. */
async function agentFilesOf(
  stackName: string,
  dir: string,
  configured: boolean,
  projectDir: string,
): Promise<{ agents: AgentDefinition[]; errors: Diagnostic[] }> {
  if (!configured && !existsSync(dir)) return { agents: [], errors: [] };
  // Paths in its messages are said from the run's project, not the process's cwd.
  return loadAgents(dir, { stack: stackName, from: projectDir });
}

/** The plain values of the stack's files, as Pulumi resolves them (a secret there cannot be read without Pulumi). */
async function stackFileConfig(stackName: string, workDir: string): Promise<StackConfig> {
  const files = await stackFiles(workingTree(workDir), stackName);
  if (!files.found) throw new StackNotFoundError(stackName, { hint: createStackHint(stackName) });
  return plainSettings(files.settings);
}

/**
 * A copy of the stack file with some settings replaced, in `stateDir` (e.g. agents:baseUrl of
 * the simulator a run started), for the Automation API's `configFile`; the stack's own file is untouched.
 */
export async function stackFileCopy(
  stackName: string,
  settings: Record<string, string>,
  dirs: { workDir: string; stateDir: string },
): Promise<string> {
  const read = workingTree(dirs.workDir);
  const { stackFile } = await stackFiles(read, stackName);
  const document = parseDocument((await read(stackFile)) ?? "config: {}\n");
  for (const [key, value] of Object.entries(settings)) document.setIn(["config", key], value);
  const target = path.join(dirs.stateDir, `${path.basename(stackFile, path.extname(stackFile))}.run.yaml`);
  await writeFile(target, document.toString());
  return target;
}

/**
 * The agents the stack's state holds (what the last update, even a failed or interrupted one,
 * created), and which of them the stack outputs (written by the last successful update only) pin
 * differently.
 */
async function stackAgents(stack: Stack): Promise<HeldAgents> {
  const state = await exportState(stack);
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
  const bodies = stateBodies(state.deployment);
  return { agents, stale, directories, ...previousVersionsOf(resources, agents), bodies };
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
  projectDir: string;
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
  const { projectDir } = sources;
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
