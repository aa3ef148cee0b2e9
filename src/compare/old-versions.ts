// The versions to compare against (`smoke --compare OLD`): the stack's `versions` output saved
// before a deploy (`pulumi stack output versions --json`: `{key: version_id}`), or a previous smoke
// JSON report (read tolerantly: the versions its calls were pinned to).
import { mkdir, readFile, rename, rm, writeFile } from "node:fs/promises";
import path from "node:path";
import { ConfigError, InvalidInputError, type Wording } from "../errors/index.ts";
import { REPORT_FORMAT, reportSchema } from "../results/index.ts";

export type OldVersions = { versions: Record<string, string>; source: "outputs" | "report" };

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value);

/** `{key: "ca_x@vN"}`: a versions output, and the version maps of a pending base. */
const isVersionMap = (value: unknown): value is Record<string, string> =>
  isObject(value) && Object.values(value).every((v) => typeof v === "string");

/** What OLD may be, said where it is neither. */
const OLD_VERSIONS_HINT: Wording = (name) =>
  `pass the output of \`pulumi stack output versions --json\` or a smoke JSON report (${name("jsonReport")})`;

/** OLD cannot be used: an InvalidInputError on the field `oldVersions`, naming the file. */
const invalidOld = (file: string, problem: string, hint?: Wording) =>
  new InvalidInputError((name) => `${name("oldVersions")} ${file}: ${problem}`, {
    field: "oldVersions",
    value: file,
    hint,
  });

/** Reads OLD; an InvalidInputError with the file's name when it is neither shape. An empty file or `{}` is a first deploy. */
export async function readOldVersions(file: string): Promise<OldVersions> {
  const text = await readFile(file, "utf8").catch((error: NodeJS.ErrnoException) => {
    throw invalidOld(file, `cannot read it (${error.code ?? error.message})`);
  });
  return parseOldVersions(text, file);
}

export function parseOldVersions(text: string, file: string): OldVersions {
  if (text.trim() === "" || text.trim() === "null") return { versions: {}, source: "outputs" };
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw invalidOld(file, `not JSON (${(error as Error).message})`, OLD_VERSIONS_HINT);
  }
  if (isObject(value) && (value.format === REPORT_FORMAT || Array.isArray(value.results))) {
    const report = reportSchema.safeParse(value);
    if (!report.success) throw invalidOld(file, "not a readable smoke report");
    // The new side of any earlier report: what those calls were pinned to.
    const versions: Record<string, string> = { ...report.data.versions };
    for (const result of report.data.results) {
      if (result.side === "new" && !(result.agent in versions)) versions[result.agent] = result.version_id;
    }
    return { versions, source: "report" };
  }
  if (isVersionMap(value)) {
    return { versions: value, source: "outputs" };
  }
  throw invalidOld(file, 'neither a versions output ({"agent": "ca_x@vN"}) nor a smoke report', OLD_VERSIONS_HINT);
}

// `npm start`'s comparison base (issue 30): the versions before the FIRST deploy not yet compared.
// A deploy records what it found before it (and which agents its steps touched) unless an earlier
// deploy's base is still pending; only a comparison over the base that completes (whatever it
// found) consumes it. So a run whose `up` failed part-way, that was interrupted, or whose calls could
// not complete leaves the base for the next run, which then compares against the version from
// before the first of those deploys, not against the one just made.

/** What `.agent-iac/comparison-base.<stack>.json` holds while a base waits for its comparison. */
type PendingBase = {
  stack: string;
  /** Agent key → version id before the first deploy not yet compared. */
  versions: Record<string, string>;
  /** Every agent key that deploy's steps named (those missing from `versions` were new then). */
  seen: string[];
  recorded_at: string;
  /**
   * What the stack held just after the last deploy that wrote this file (agent key → version), and
   * every version those deploys found it holding or having held. Where the backend keeps no readable
   * history, they link a base carried over several deploys to the stack: see `checkPendingBase`.
   */
  held_after?: Record<string, string>;
  held_versions?: string[];
};

/** A deploy's versions before it, the agent keys its steps named, and what the stack held after it (when it could be read). */
export type DeployBase = { versions: Record<string, string>; seen: string[]; after?: Record<string, string> };

/** What a pending base says of the stack it was recorded for (absent in files written before it was kept). */
export type BaseRecord = { heldAfter?: Record<string, string>; heldVersions: string[] };

const baseFile = (stateDir: string, stack: string) =>
  path.join(stateDir, `comparison-base.${stack.replace(/[^A-Za-z0-9_.-]/g, "_")}.json`);

/**
 * The pending base of the stack, or undefined (none). A damaged file, or one holding another
 * stack's base, is a ConfigError naming the file and the way out: the pending comparison is never
 * dropped, nor applied to the wrong stack, without a word.
 */
async function pendingBase(stateDir: string, stack: string): Promise<PendingBase | undefined> {
  const file = baseFile(stateDir, stack);
  const text = await readFile(file, "utf8").catch((error: NodeJS.ErrnoException) => {
    if (error.code === "ENOENT") return undefined;
    throw damagedBase(file, `cannot read it (${error.code ?? error.message})`);
  });
  if (text === undefined) return undefined;
  let value: PendingBase;
  try {
    value = JSON.parse(text) as PendingBase;
  } catch {
    throw damagedBase(file, "it is not JSON (truncated or edited)");
  }
  const versions = isVersionMap(value?.versions) ? value.versions : undefined;
  if (!versions || typeof value.recorded_at !== "string") {
    throw damagedBase(file, "it does not hold a comparison base ({stack, versions, seen, recorded_at})");
  }
  if (value.stack !== stack) {
    throw new ConfigError(
      `${file} holds the comparison base of stack ${JSON.stringify(String(value.stack).slice(0, 80))}, not of ${JSON.stringify(stack)}: it is not applied to this stack`,
      {
        hint: `delete it (rm ${file}) if that stack's pending comparison is not needed; the next deploy records a new base`,
      },
    );
  }
  return {
    ...value,
    versions,
    seen: Array.isArray(value.seen) ? value.seen.map(String) : Object.keys(versions),
    held_after: isVersionMap(value.held_after) ? value.held_after : undefined,
    held_versions: Array.isArray(value.held_versions) ? value.held_versions.map(String) : undefined,
  };
}

/**
 * Before a deploy: the pending base of the stack (if any) must name only versions the stack held —
 * `everHeld(record)` gives the test of whether it holds or held one, from its state, its update
 * history or its `previous_versions`, and what the base's earlier deploys recorded of it (asked
 * only when there is a base: reading the history can take many files). A base
 * naming another version (another stack's, edited, or a service's that never had it) would be
 * compared against calls that cannot be placed: a ConfigError naming the file, the versions and the
 * way out. A damaged base is the same ConfigError as at the deploy. When nothing can tell (no test:
 * a stack with neither a readable history nor a `previous_versions` output) only the file's shape is
 * checked.
 */
export async function checkPendingBase(
  stateDir: string,
  stack: string,
  everHeld: (record: BaseRecord) => Promise<((versionId: string) => boolean) | undefined>,
): Promise<void> {
  const pending = await pendingBase(stateDir, stack);
  if (!pending) return;
  const held = await everHeld({ heldAfter: pending.held_after, heldVersions: pending.held_versions ?? [] });
  if (!held) return;
  const foreign = Object.entries(pending.versions).filter(([, version]) => !held(version));
  if (foreign.length === 0) return;
  const file = baseFile(stateDir, stack);
  const named = foreign
    .slice(0, 5)
    .map(([key, version]) => `${JSON.stringify(key.slice(0, 80))}: ${JSON.stringify(version.slice(0, 80))}`)
    .join(", ");
  const more = foreign.length > 5 ? ` and ${foreign.length - 5} more` : "";
  throw new ConfigError(
    `${file} names version(s) stack ${JSON.stringify(stack)} never held (${named}${more}): the comparison base is not applied, nothing was deployed`,
    {
      hint: `delete it (rm ${file}) to record a new base at this deploy — the pending comparison, if it was this stack's, is then lost — or restore the file this checkout wrote`,
    },
  );
}

function damagedBase(file: string, why: string): ConfigError {
  return new ConfigError(`${file}: the pending comparison base is damaged: ${why}`, {
    hint: `delete it (rm ${file}) to record a new base at this deploy — the comparison with the versions before the earlier, uncompared deploy is then lost — or restore it from a backup`,
  });
}

/**
 * The base this deploy compares against: the pending one if there is one — with the versions of
 * agents its deploy never reached taken from this deploy — else this deploy's own, recorded as
 * pending. `carried` is when the pending base was recorded, when it is an earlier deploy's.
 */
export async function recordDeployBase(
  stateDir: string,
  stack: string,
  deploy: DeployBase,
): Promise<{ versions: Record<string, string>; carried?: string }> {
  const pending = await pendingBase(stateDir, stack);
  const base: PendingBase = pending
    ? mergeBase(pending, deploy)
    : { stack, versions: deploy.versions, seen: deploy.seen, recorded_at: new Date().toISOString() };
  // The versions before and after this deploy are the stack's (read from its update and its state).
  base.held_versions = [
    ...new Set([
      ...(pending?.held_versions ?? []),
      ...Object.values(deploy.versions),
      ...Object.values(deploy.after ?? {}),
    ]),
  ];
  base.held_after = deploy.after ?? pending?.held_after;
  await mkdir(stateDir, { recursive: true });
  const file = baseFile(stateDir, stack);
  await writeFile(`${file}.tmp`, `${JSON.stringify(base, null, 2)}\n`);
  await rename(`${file}.tmp`, file);
  return { versions: base.versions, ...(pending ? { carried: pending.recorded_at } : {}) };
}

function mergeBase(pending: PendingBase, deploy: DeployBase): PendingBase {
  const seen = new Set(pending.seen);
  const versions = { ...pending.versions };
  for (const [key, version] of Object.entries(deploy.versions)) {
    if (!seen.has(key)) versions[key] = version;
  }
  return { ...pending, versions, seen: [...new Set([...pending.seen, ...deploy.seen])] };
}

/** A comparison over the base completed: the next deploy records its own. */
export async function consumeBase(stateDir: string, stack: string): Promise<void> {
  await rm(baseFile(stateDir, stack), { force: true });
}
