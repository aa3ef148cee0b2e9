// Where to connect: the one module that reads the connection settings, for the Pulumi program, the
// provider runtime and every command. Precedence, per setting: the stack's config
// (agents:baseUrl, agents:apiKey, agents:serviceVersion), then the environment (AGENT_IAC_BASE_URL,
// AGENT_IAC_API_KEY), then — for the key only, and only when the address is loopback — the local
// simulator's public dev key. An empty value counts as unset everywhere.
import { isLoopbackHost } from "../contract/index.ts";
import { CliError } from "../errors/index.ts";

/** The stack config keys of the connection. */
export const CONFIG_KEYS = {
  baseUrl: "agents:baseUrl",
  apiKey: "agents:apiKey",
  serviceVersion: "agents:serviceVersion",
} as const;

/** The local simulator's default key (src/simulator DEV_API_KEY; a test keeps the two equal). Public. */
export const LOCAL_DEV_KEY = "sk-agent-iac-local-dev-key";

/** Reads one stack config value (Pulumi's `config.get`, or a lookup in `getAllConfig()`'s map). */
export type ConfigReader = (key: string) => string | undefined;

export type KeySource = "stack config" | "AGENT_IAC_API_KEY" | "the local dev key";

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
  env: NodeJS.ProcessEnv = process.env,
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
  return { baseUrl, apiKey, serviceVersion: set(config(CONFIG_KEYS.serviceVersion)), keySource, loopback };
}

/** A reader over the map the Automation API's `getAllConfig()` returns. */
export function configMapReader(map: Record<string, { value: string } | undefined>): ConfigReader {
  return (key) => map[key]?.value;
}

export type ResolvedConnection = { baseUrl: string; apiKey: string; serviceVersion?: string };

/** The connection with both address and key, or a configuration error (exit 2) naming where to set them. */
export function requireConnection(connection: Connection, stack?: string): ResolvedConnection {
  const on = stack ? ` for stack ${stack}` : "";
  if (!connection.baseUrl) {
    throw new CliError(
      `no service address${on}: set the stack config agents:baseUrl (\`pulumi config set agents:baseUrl URL\`) or AGENT_IAC_BASE_URL`,
      2,
    );
  }
  if (!connection.apiKey) {
    throw new CliError(
      `no API key${on}: set it with \`pulumi config set --secret agents:apiKey\` or the AGENT_IAC_API_KEY environment variable`,
      2,
    );
  }
  return {
    baseUrl: connection.baseUrl,
    apiKey: connection.apiKey,
    ...(connection.serviceVersion ? { serviceVersion: connection.serviceVersion } : {}),
  };
}

/** The secrets an error message must never show: the API key and a stream token from the environment. */
export function secretsInEnvironment(env: NodeJS.ProcessEnv = process.env): string[] {
  return [env.AGENT_IAC_API_KEY, env.AGENT_IAC_STREAM_TOKEN].filter((v): v is string => Boolean(v));
}

/** The stream token for `events --events-url` (AGENT_IAC_STREAM_TOKEN; never a flag). */
export function streamToken(env: NodeJS.ProcessEnv = process.env): string | undefined {
  return set(env.AGENT_IAC_STREAM_TOKEN);
}

/** The stack config keys naming the stack's policy pack and its config file (paths relative to the project). */
export const POLICY_KEYS = { pack: "agents:policyPack", config: "agents:policyPackConfig" } as const;

/**
 * The policy pack options of a stack's preview and up (the Automation API's `policyPacks` and
 * `policyPackConfigs`): empty when the stack names no pack. A config file without a pack is a
 * configuration error.
 */
export function policyPackOptions(
  config: ConfigReader,
  projectDir: string,
): { policyPacks?: string[]; policyPackConfigs?: string[] } {
  const pack = set(config(POLICY_KEYS.pack));
  const packConfig = set(config(POLICY_KEYS.config));
  if (!pack) {
    if (packConfig) throw new CliError(`${POLICY_KEYS.config} is set but ${POLICY_KEYS.pack} is not`, 2);
    return {};
  }
  const resolve = (file: string) => (file.startsWith("/") ? file : `${projectDir.replace(/\/$/, "")}/${file}`);
  return {
    policyPacks: [resolve(pack)],
    ...(packConfig ? { policyPackConfigs: [resolve(packConfig)] } : {}),
  };
}
