// Where to connect: the one module that reads the connection settings, for the Pulumi program, the
// provider runtime and every command. Precedence, per setting: the stack's config
// (agents:baseUrl, agents:apiKey, agents:serviceVersion), then the environment (AGENT_IAC_BASE_URL,
// AGENT_IAC_API_KEY), then — for the key only, and only when the address is loopback — the local
// simulator's public dev key. An empty value counts as unset everywhere.
import { existsSync } from "node:fs";
import path from "node:path";
import { isLoopbackHost, serviceVersionShape } from "../contract/index.ts";
import { ConfigError } from "../errors/index.ts";
import { plainSettings, stackFiles, workingTree } from "./stack-files.ts";

export {
  pullRequestChanges,
  type StackFileVersions,
  type StackSettingChange,
  settingChanges,
  withBaseSettings,
} from "./changes.ts";
export { GUARDED_KEYS } from "./guarded.ts";
export { plainStackConfig } from "./plain-config.ts";
export {
  plainSettings,
  type ReadProjectFile,
  type StackFileSettings,
  stackFiles,
  workingTree,
} from "./stack-files.ts";

/** The stack config keys of the connection. */
export const CONFIG_KEYS = {
  baseUrl: "agents:baseUrl",
  apiKey: "agents:apiKey",
  serviceVersion: "agents:serviceVersion",
} as const;

/** The local simulator's default key (src/simulator DEV_API_KEY; a test keeps the two equal). Public. */
export const LOCAL_DEV_KEY = "sk-agent-iac-local-dev-key";

/** The project's local state, under its directory (gitignored): the simulator's data, the judge cache, the comparison base. */
export const STATE_DIR = ".agent-iac";
/** Where judge votes and the last `judge check` results are kept (`--judge-cache` overrides it). */
export const JUDGE_CACHE_DIR = path.join(STATE_DIR, "judge-cache");

/**
 * The project a run works in: its directory, its local state directory and the environment it
 * reads. Built once per run from the run's CommandIO and passed to every use case, so nothing
 * below the commands reads the process's directory or environment (two runs can share a process).
 */
export type ProjectContext = {
  readonly dir: string;
  readonly stateDir: string;
  readonly env: NodeJS.ProcessEnv;
  /**
   * The environment of a process the run starts (the Pulumi CLI, and through it the language host
   * and the dynamic provider): the run's `env`, with each variable the process has and the run does
   * not set to undefined. A child is then given no variable of the process's that is not the run's,
   * even by a library that spawns with the process's environment under the one it is given (the
   * Automation API's execa spreads the process's first, then `envVars`; an undefined entry is not
   * passed on).
   */
  readonly childEnv: NodeJS.ProcessEnv;
  /** A path a flag named, resolved against the project's directory (never the process's cwd). */
  path<P extends string | undefined>(file: P): P;
};

/**
 * The project of a run in `cwd` with `env`. `processEnv` is the environment of the process the run
 * is in (given by the command edge), whose variables a child must not inherit unless they are
 * the run's too; without it, a child's environment is `env` as it is.
 */
export function projectContext(run: {
  cwd: string;
  env: NodeJS.ProcessEnv;
  processEnv?: NodeJS.ProcessEnv;
}): ProjectContext {
  const dir = path.resolve(run.cwd);
  const resolve = <P extends string | undefined>(file: P): P =>
    (file === undefined ? file : path.resolve(dir, file)) as P;
  const unset = Object.keys(run.processEnv ?? {}).filter((name) => !Object.hasOwn(run.env, name));
  const childEnv = { ...Object.fromEntries(unset.map((name) => [name, undefined])), ...run.env };
  return { dir, stateDir: path.join(dir, STATE_DIR), env: run.env, childEnv, path: resolve };
}

/** Reads one stack config value (Pulumi's `config.get`, or a lookup in `getAllConfig()`'s map). */
export type ConfigReader = (key: string) => string | undefined;

type KeySource = "stack config" | "AGENT_IAC_API_KEY" | "the local dev key";

export type Connection = {
  baseUrl: string | undefined;
  apiKey: string | undefined;
  serviceVersion: string | undefined;
  /** Where the key came from (never the key itself), for messages. */
  keySource: KeySource | undefined;
  /** True when baseUrl is a loopback address (the local simulator's kind of address). */
  loopback: boolean;
};

const set = (value: string | undefined): string | undefined => (value?.trim() ? value : undefined);

/** 127.0.0.0/8, localhost and ::1: addresses only this machine serves. */
export function isLoopbackUrl(url: string | undefined): boolean {
  if (!url) return false;
  try {
    return isLoopbackHost(new URL(url).hostname);
  } catch {
    return false;
  }
}

/**
 * The connection for a stack. `overrides.baseUrl` (an explicit command-line address) comes before
 * the stack config; nothing else does.
 */
export function resolveConnection(
  config: ConfigReader,
  env: NodeJS.ProcessEnv,
  overrides: { baseUrl?: string | undefined } = {},
): Connection {
  const baseUrl = set(overrides.baseUrl) ?? set(config(CONFIG_KEYS.baseUrl)) ?? set(env.AGENT_IAC_BASE_URL);
  const loopback = isLoopbackUrl(baseUrl);
  const configured = set(config(CONFIG_KEYS.apiKey));
  const fromEnv = set(env.AGENT_IAC_API_KEY);
  const [apiKey, keySource]: [string | undefined, KeySource | undefined] = configured
    ? [configured, "stack config"]
    : fromEnv
      ? [fromEnv, "AGENT_IAC_API_KEY"]
      : loopback
        ? [LOCAL_DEV_KEY, "the local dev key"]
        : [undefined, undefined];
  return { baseUrl, apiKey, serviceVersion: serviceVersionOf(config), keySource, loopback };
}

/** `agents:serviceVersion`, checked where it is read: a malformed one is the stack's configuration error. */
function serviceVersionOf(config: ConfigReader): string | undefined {
  const value = set(config(CONFIG_KEYS.serviceVersion));
  if (value === undefined || serviceVersionShape.safeParse(value).success) return value;
  throw new ConfigError(
    `${CONFIG_KEYS.serviceVersion} ${JSON.stringify(value.slice(0, 40))} must be a date (YYYY-MM-DD), the Service-Version the service documents: fix it with \`pulumi config set ${CONFIG_KEYS.serviceVersion} YYYY-MM-DD\` or remove it`,
  );
}

/**
 * What the stack's files' plain values set, without Pulumi (a secret there is not read): the
 * connection, the judge and the caller; no such file: the environment's. For offline commands.
 */
export async function stackFileRunSettings(
  project: ProjectContext,
  stack: string,
): Promise<{ connection: Connection; judge: JudgeSettings; caller: CallerShapeSettings }> {
  const { settings } = await stackFiles(workingTree(project.dir), stack);
  return runSettings(configMapReader(plainSettings(settings)), project.env);
}

/** The run's settings a stack's config and the environment set: the connection, the judge and the caller. */
export function runSettings(
  config: ConfigReader,
  env: NodeJS.ProcessEnv,
): { connection: Connection; judge: JudgeSettings; caller: CallerShapeSettings } {
  return {
    connection: resolveConnection(config, env),
    judge: resolveJudge(config, env),
    caller: resolveCallerShapeSettings(config, env),
  };
}

/** The stack's agents:dir: the agent files' folder, relative to the project (undefined: agents/, if it exists). */
export function agentsDirSetting(config: ConfigReader): string | undefined {
  return set(config("agents:dir"));
}

/** A reader over the map the Automation API's `getAllConfig()` returns. */
export function configMapReader(map: Record<string, { value: string } | undefined>): ConfigReader {
  return (key) => map[key]?.value;
}

export type ResolvedConnection = { baseUrl: string; apiKey: string; serviceVersion?: string };

/** The connection with both address and key, or a ConfigError naming where to set them. */
export function requireConnection(connection: Connection, stack?: string): ResolvedConnection {
  const on = stack ? ` for stack ${stack}` : "";
  if (!connection.baseUrl) {
    throw new ConfigError(
      `no service address${on}: set the stack config agents:baseUrl (\`pulumi config set agents:baseUrl URL\`) or AGENT_IAC_BASE_URL`,
    );
  }
  if (!connection.apiKey) {
    throw new ConfigError(
      `no API key${on}: set it with \`pulumi config set --secret agents:apiKey\` or the AGENT_IAC_API_KEY environment variable`,
    );
  }
  return {
    baseUrl: connection.baseUrl,
    apiKey: connection.apiKey,
    ...(connection.serviceVersion ? { serviceVersion: connection.serviceVersion } : {}),
  };
}

/** The secrets an error message must never show: the API keys and a stream token from the environment. */
export function secretsInEnvironment(env: NodeJS.ProcessEnv): string[] {
  return [
    env.AGENT_IAC_API_KEY,
    env.AGENT_IAC_STREAM_TOKEN,
    env.AGENT_IAC_JUDGE_API_KEY,
    env.AGENT_IAC_CALLER_API_KEY,
    env.AGENT_IAC_JUDGE_CACHE_KEY,
  ].filter((v): v is string => Boolean(v));
}

/** A setting's value: the stack config's, else its environment variable's; an empty value counts as unset. */
const settingReader =
  (config: ConfigReader, env: NodeJS.ProcessEnv) =>
  (key: { config: string; env: string }): string | undefined =>
    set(config(key.config)) ?? set(env[key.env]);

/** The stack config keys of the judge (judged expectations), and their environment fallbacks. */
export const JUDGE_KEYS = {
  baseUrl: { config: "agents:judgeBaseUrl", env: "AGENT_IAC_JUDGE_BASE_URL" },
  model: { config: "agents:judgeModel", env: "AGENT_IAC_JUDGE_MODEL" },
  apiKey: { config: "agents:judgeApiKey", env: "AGENT_IAC_JUDGE_API_KEY" },
  timeoutSec: { config: "agents:judgeTimeoutSec", env: "AGENT_IAC_JUDGE_TIMEOUT_SEC" },
} as const;

/** Where judged expectations are sent: an OpenAI-compatible endpoint the team names. Nothing by default. */
export type JudgeSettings = {
  /** e.g. https://api.openai.com/v1 (requests go to `{baseUrl}/chat/completions`). */
  baseUrl: string | undefined;
  model: string | undefined;
  /** Optional: a local model server may need none. */
  apiKey: string | undefined;
  /** One request's deadline in seconds (default 60). */
  timeoutSec: number;
};

const DEFAULT_JUDGE_TIMEOUT_SEC = 60;

/** The judge settings: stack config first, then the environment; an empty value counts as unset. */
export function resolveJudge(config: ConfigReader, env: NodeJS.ProcessEnv): JudgeSettings {
  const read = settingReader(config, env);
  const timeout = Number(read(JUDGE_KEYS.timeoutSec));
  return {
    baseUrl: read(JUDGE_KEYS.baseUrl),
    model: read(JUDGE_KEYS.model),
    apiKey: read(JUDGE_KEYS.apiKey),
    timeoutSec: Number.isFinite(timeout) && timeout > 0 ? timeout : DEFAULT_JUDGE_TIMEOUT_SEC,
  };
}

export type ResolvedJudge = { baseUrl: string; model: string; apiKey?: string; timeoutSec: number };

/** The judge with address and model, or a ConfigError naming the settings. */
export function requireJudge(judge: JudgeSettings, why: string, stack?: string): ResolvedJudge {
  const on = stack ? ` for stack ${stack}` : "";
  const missing = [
    judge.baseUrl ? undefined : `${JUDGE_KEYS.baseUrl.config} (or ${JUDGE_KEYS.baseUrl.env})`,
    judge.model ? undefined : `${JUDGE_KEYS.model.config} (or ${JUDGE_KEYS.model.env})`,
  ].filter(Boolean);
  if (!judge.baseUrl || !judge.model) {
    throw new ConfigError(
      `${why}, but no judge is configured${on}: set ${missing.join(" and ")}; the key, if the endpoint needs one, with \`pulumi config set --secret ${JUDGE_KEYS.apiKey.config}\` or ${JUDGE_KEYS.apiKey.env}. Nothing was called.`,
    );
  }
  return {
    baseUrl: judge.baseUrl,
    model: judge.model,
    timeoutSec: judge.timeoutSec,
    ...(judge.apiKey ? { apiKey: judge.apiKey } : {}),
  };
}

/**
 * Why a model name moves under a pinned gate, or null when it names one version: `latest` or
 * `preview` in it, or no version or date at all (`gpt-4o` is an alias the provider repoints;
 * `gpt-4o-2024-08-06`, `claude-3-5-sonnet-20241022`, `gemini-1.5-pro-002`, `mistral-large-2407`,
 * `…-v1:0` are pinned). A judge's measured agreement and a persona's behaviour hold for one model.
 */
export function modelMoves(model: string): string | null {
  const word = /(?:^|[^a-z])(latest|preview)(?:[^a-z]|$)/i.exec(model)?.[1];
  if (word) return `"${word.toLowerCase()}" names whatever the provider serves now`;
  const dated = /(?:^|\D)(?:20\d{2}-?[01]\d-?[0-3]\d|\d{4})(?:\D|$)/.test(model);
  const versioned = /(?:[-_@:]v?\d+(?:\.\d+)*$)|(?:[-_@]v\d)|(?:[-_@]\d{3}(?:\D|$))/i.test(model);
  return dated || versioned ? null : "it names no version or date";
}

/** The warnings of the configured model names that move: `agents:judgeModel "gpt-4o" moves (…)`. */
export function movingModelWarnings(models: { setting: string; model: string | undefined }[]): string[] {
  return models.flatMap(({ setting, model }) => {
    const why = model ? modelMoves(model) : null;
    return why
      ? [
          `${setting} ${JSON.stringify(model)} moves (${why}): pin a dated or versioned model id, or its verdicts and measured agreement may change without notice`,
        ]
      : [];
  });
}

/** The stream token for `events --events-url` (AGENT_IAC_STREAM_TOKEN; never a flag). */
export function streamToken(env: NodeJS.ProcessEnv): string | undefined {
  return set(env.AGENT_IAC_STREAM_TOKEN);
}

/** The stack config keys naming the stack's policy pack and its config file (paths relative to the project). */
const POLICY_KEYS = { pack: "agents:policyPack", config: "agents:policyPackConfig" } as const;

/**
 * The policy pack options of a stack's preview and up (the Automation API's `policyPacks` and
 * `policyPackConfigs`): empty when the stack names no pack. A config file without a pack, a pack
 * outside the project or without PulumiPolicy.yaml, is a configuration error naming the setting.
 */
export function policyPackOptions(
  config: ConfigReader,
  projectDir: string,
): { policyPacks?: string[]; policyPackConfigs?: string[] } {
  const pack = set(config(POLICY_KEYS.pack));
  const packConfig = set(config(POLICY_KEYS.config));
  if (!pack) {
    if (packConfig) throw new ConfigError(`${POLICY_KEYS.config} is set but ${POLICY_KEYS.pack} is not`);
    return {};
  }
  const root = path.resolve(projectDir);
  const resolve = (file: string) => path.resolve(root, file);
  // The pack is code the preview runs: it must be a pack (PulumiPolicy.yaml) inside the project,
  // never a folder elsewhere on the runner.
  const packDir = resolve(pack);
  const inside = (file: string) =>
    !path.relative(root, file).startsWith("..") && !path.isAbsolute(path.relative(root, file));
  if (!inside(packDir)) {
    throw new ConfigError(
      `${POLICY_KEYS.pack} names ${pack}, which is outside the project (${root}): a policy pack must be a folder of the project`,
    );
  }
  if (!existsSync(packDir)) {
    throw new ConfigError(`${POLICY_KEYS.pack} names ${pack}, which does not exist (relative to ${projectDir})`);
  }
  if (!existsSync(path.join(packDir, "PulumiPolicy.yaml"))) {
    throw new ConfigError(`${POLICY_KEYS.pack} names ${pack}, which is not a policy pack (no PulumiPolicy.yaml in it)`);
  }
  if (packConfig && !inside(resolve(packConfig))) {
    throw new ConfigError(`${POLICY_KEYS.config} names ${packConfig}, which is outside the project (${root})`);
  }
  if (packConfig && !existsSync(resolve(packConfig))) {
    throw new ConfigError(
      `${POLICY_KEYS.config} names ${packConfig}, which does not exist (relative to ${projectDir})`,
    );
  }
  return {
    policyPacks: [resolve(pack)],
    ...(packConfig ? { policyPackConfigs: [resolve(packConfig)] } : {}),
  };
}

/** The stack config keys of the caller's control messages (src/caller/shape.ts), and their environment fallbacks. */
export const CALLER_KEYS = {
  message: { config: "agents:callerMessage", env: "AGENT_IAC_CALLER_MESSAGE" },
  end: { config: "agents:callerEnd", env: "AGENT_IAC_CALLER_END" },
} as const;

/** The stack config keys of the persona caller's model (src/caller/persona.ts), and their environment fallbacks. */
export const PERSONA_KEYS = {
  baseUrl: { config: "agents:callerBaseUrl", env: "AGENT_IAC_CALLER_BASE_URL" },
  model: { config: "agents:callerModel", env: "AGENT_IAC_CALLER_MODEL" },
  apiKey: { config: "agents:callerApiKey", env: "AGENT_IAC_CALLER_API_KEY" },
} as const;

/** The persona model's settings (undefined where unset): the judge's kind of endpoint. */
export type PersonaSettings = JudgeSettings;

/** The control-message templates, as written in the settings, and the persona model's settings. */
export type CallerShapeSettings = {
  message: string | undefined;
  end: string | undefined;
  persona?: PersonaSettings;
  /** The persona's endpoint is the judge's (no agents:callerBaseUrl): the run says so. */
  personaFromJudge?: boolean;
};

/** The caller's settings: stack config first, then the environment; the persona's model falls back to the judge's, setting by setting. */
function resolveCallerShapeSettings(config: ConfigReader, env: NodeJS.ProcessEnv): CallerShapeSettings {
  const read = settingReader(config, env);
  const judge = resolveJudge(config, env);
  const persona: PersonaSettings = {
    baseUrl: read(PERSONA_KEYS.baseUrl) ?? judge.baseUrl,
    model: read(PERSONA_KEYS.model) ?? judge.model,
    apiKey: read(PERSONA_KEYS.apiKey) ?? judge.apiKey,
    timeoutSec: judge.timeoutSec,
  };
  const personaFromJudge = read(PERSONA_KEYS.baseUrl) === undefined && judge.baseUrl !== undefined;
  return { message: read(CALLER_KEYS.message), end: read(CALLER_KEYS.end), persona, personaFromJudge };
}
