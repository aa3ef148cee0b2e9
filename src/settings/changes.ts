// Stack-setting changes between two versions of a stack's config as Pulumi resolves it (a pull
// request's base and its head, read by src/settings/stack-files.ts), and of where it comes from. Some settings decide where credentials and transcripts go or what code runs
// (the guarded ones): in a pull request they are read from the base, and a change to one needs a
// human. Secrets are compared by their ciphertext and never shown.
import { GUARDED_KEYS, isGuarded, SOURCE_KEYS } from "./guarded.ts";
import type { ConfigReader } from "./index.ts";
import type { StackFileSettings, StackFiles, StackSetting } from "./stack-files.ts";

/** One agents:* setting (or a source of config) that differs from the base; a secret's values are never held. */
export type StackSettingChange = {
  key: string;
  change: "added" | "removed" | "changed";
  before?: string;
  after?: string;
  secret: boolean;
  /** Decides where credentials and transcripts go or what code runs: the preview read it from the base. */
  guarded: boolean;
};

/** Whether two versions of a setting are the same: value, secrecy, and how sure the file read is of it. */
const same = (a: StackSetting | undefined, b: StackSetting | undefined) =>
  a?.value === b?.value && a?.secret === b?.secret && (a?.exact ?? true) === (b?.exact ?? true);

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
    if (same(before, after)) continue;
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

/**
 * A pull request's settings as Pulumi resolves them at its base and in its head (the working
 * tree); `moved`: where the config comes from changed (the stack file's place, an ESC environment,
 * the project's declaration of a guarded setting), so no guarded setting is read from the head.
 */
export type StackFileVersions = { base: StackFileSettings; head: StackFileSettings; moved?: boolean };

/**
 * The changes of where config comes from, between the base's files and the head's: each is guarded
 * (it can move a guarded setting where the settings diff does not show it, or where no file read
 * can: an ESC environment's values).
 */
function sourceChanges(base: StackFiles, head: StackFiles): StackSettingChange[] {
  const changes: StackSettingChange[] = [];
  const compare = (key: string, before: string | undefined, after: string | undefined) => {
    if (before === after) return;
    const change = before === undefined ? "added" : after === undefined ? "removed" : "changed";
    changes.push({
      key,
      change,
      ...(before === undefined ? {} : { before }),
      ...(after === undefined ? {} : { after }),
      secret: false,
      guarded: true,
    });
  };
  compare(SOURCE_KEYS.stackFile, base.stackFile, head.stackFile);
  compare(SOURCE_KEYS.environment, base.sources.environment, head.sources.environment);
  for (const key of GUARDED_KEYS) {
    compare(SOURCE_KEYS.declared(key), base.sources.declared[key], head.sources.declared[key]);
  }
  return changes;
}

/** The settings changes of a pull request, its sources' first, and the versions a preview reads the guarded settings from. */
export function pullRequestChanges(
  base: StackFiles,
  head: StackFiles,
): StackFileVersions & { changes: StackSettingChange[] } {
  const sources = sourceChanges(base, head);
  return {
    base: base.settings,
    head: head.settings,
    moved: sources.length > 0,
    changes: [...sources, ...settingChanges(base.settings, head.settings)],
  };
}

/**
 * The head's settings with the guarded ones read from the base instead. A guarded setting the
 * pull request did not change (nor where config comes from) is the head's (a secret is decrypted
 * there); otherwise the base's plain value, or unset where the base has none, only a secret or a
 * value its file read is unsure of (the environment's value, if any, then applies): never the
 * pull request's.
 */
export function withBaseSettings(head: ConfigReader, { base, head: file, moved }: StackFileVersions): ConfigReader {
  return (key) => {
    if (!isGuarded(key)) return head(key);
    const before = base[key];
    if (!moved && same(before, file[key])) return head(key);
    return before && !before.secret && before.exact !== false ? before.value : undefined;
  };
}
