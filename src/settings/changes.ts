// Stack-setting changes between two versions of a Pulumi.<stack>.yaml (a pull request's base and
// its head). Some settings decide where credentials and transcripts go or what code runs
// (the guarded ones): in a pull request they are read from the base, and a change to one needs a
// human. Secrets are compared by their ciphertext and never shown.
import { parse } from "yaml";
import { ConfigError } from "../errors/index.ts";
import { GUARDED_KEYS, isGuarded } from "./guarded.ts";
import type { ConfigReader } from "./index.ts";

/** One agents:* setting of the stack file that differs from the base; a secret's values are never held. */
export type StackSettingChange = {
  key: string;
  change: "added" | "removed" | "changed";
  before?: string;
  after?: string;
  secret: boolean;
  /** Decides where credentials and transcripts go or what code runs: the preview read it from the base. */
  guarded: boolean;
};

/** One setting of a stack file: a plain value, or a secret's ciphertext (compared, never shown). */
type StackFileSetting = { value: string; secret: boolean };
export type StackFileSettings = Record<string, StackFileSetting>;

/** A stack file's text as its top-level map (config, environment, …); `file` names it in a configuration error. */
export function parseStackFile(text: string, file: string): Record<string, unknown> {
  let parsed: unknown;
  try {
    parsed = parse(text);
  } catch (error) {
    throw new ConfigError(`${file}: ${(error as Error).message}`);
  }
  return typeof parsed === "object" && parsed !== null && !Array.isArray(parsed)
    ? (parsed as Record<string, unknown>)
    : {};
}

/** The config section of a stack file's text; `file` names it in a configuration error. */
export function stackFileSettings(text: string | undefined, file: string): StackFileSettings {
  if (text === undefined) return {};
  const config = parseStackFile(text, file).config ?? {};
  const settings: StackFileSettings = {};
  for (const [key, value] of Object.entries(config as Record<string, unknown>)) {
    if (typeof value === "object" && value !== null && "secure" in value) {
      settings[key] = { value: String((value as { secure: unknown }).secure), secret: true };
    } else if (value !== null && value !== undefined) {
      settings[key] = { value: typeof value === "string" ? value : JSON.stringify(value), secret: false };
    }
  }
  return settings;
}

/** The guarded settings first, in their declared order (connection, judge, caller, policy); any other after them by name. */
const rank = (key: string) => {
  const index = GUARDED_KEYS.indexOf(key);
  return index === -1 ? GUARDED_KEYS.length : index;
};

/**
 * Each agents:* setting that differs between base and head: the guarded ones first.
 * `guard: false` when the head's values are the ones used (a plan against the last deploy): nothing is held.
 */
export function settingChanges(
  base: StackFileSettings,
  head: StackFileSettings,
  { guard = true }: { guard?: boolean } = {},
): StackSettingChange[] {
  const keys = [...new Set([...Object.keys(base), ...Object.keys(head)])].filter((k) => k.startsWith("agents:"));
  const changes: StackSettingChange[] = [];
  for (const key of keys) {
    const before = base[key];
    const after = head[key];
    if (before?.value === after?.value && before?.secret === after?.secret) continue;
    const secret = Boolean(before?.secret || after?.secret);
    changes.push({
      key,
      change: before === undefined ? "added" : after === undefined ? "removed" : "changed",
      ...(secret || before === undefined ? {} : { before: before.value }),
      ...(secret || after === undefined ? {} : { after: after.value }),
      secret,
      guarded: guard && isGuarded(key),
    });
  }
  return changes.sort((a, b) => rank(a.key) - rank(b.key) || a.key.localeCompare(b.key));
}

/** A pull request's stack file at its base and in its head (the working tree). */
export type StackFileVersions = { base: StackFileSettings; head: StackFileSettings };

/**
 * The head's settings with the guarded ones read from the base instead. A guarded setting the
 * pull request did not change is the head's (a secret is decrypted there); one it changed is the
 * base's plain value, or unset where the base has none or only a secret (the environment's value,
 * if any, then applies): never the pull request's.
 */
export function withBaseSettings(head: ConfigReader, { base, head: file }: StackFileVersions): ConfigReader {
  return (key) => {
    if (!isGuarded(key)) return head(key);
    const before = base[key];
    const after = file[key];
    if (before?.value === after?.value && before?.secret === after?.secret) return head(key);
    return before?.secret ? undefined : before?.value;
  };
}
