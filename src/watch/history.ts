// Which agent versions a stack holds now, and which it held before (its update history), so a
// version still taking calls after a replace is named by its key ("old version of support").
//
// What Pulumi offers: the Automation API's `stack.history()` gives each update's kind, times and
// resource-change counts, but no outputs; `pulumi stack export --version N` exports an old
// deployment only on Pulumi Cloud. The self-managed backends keep a copy of the checkpoint of every
// update beside its history record (`.pulumi/history/<project>/<stack>/<stack>-<ns>.checkpoint.json`,
// unless PULUMI_DIY_BACKEND_DISABLE_CHECKPOINT_BACKUPS is set): on a file backend (the default here)
// those are read directly. Other backends (S3, Postgres, Pulumi Cloud) give no history here: the
// result says so; the stack's own `previous_versions` output (src/component/previous.ts) still names
// the version each agent held before its current one (withPreviousVersions), and older versions show
// as unknown unless they share an agent id.
import { readdir, readFile } from "node:fs/promises";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import zlib from "node:zlib";
import { agentIdOf } from "../contract/index.ts";
import { type HeldAgent, stateAgents } from "../provider/index.ts";

/** A version the stack held in an earlier update and holds no longer. */
export type PastVersion = HeldAgent & {
  /** The last update that held it (counted from the stack's first, as `pulumi stack history` does), and when it ended. */
  last_update: number | null;
  last_held_at: string | null;
  /** Named by the stack's `previous_versions` output (no history read said it). */
  from_outputs?: true;
};

export type StackHistory = {
  /** Whether the backend's history could be read at all. */
  available: boolean;
  /** Where it came from, or why there is none (said in the reports). */
  source: string;
  /** Updates read. */
  updates: number;
  /** Version id (and bare id) → the newest past version of that id. */
  past: Map<string, PastVersion>;
};

/** At most this many of the newest updates are read (each checkpoint holds the whole state). */
const MAX_HISTORY_UPDATES = 200;

async function decode(file: string): Promise<unknown> {
  const bytes = await readFile(file);
  let text: Buffer = bytes;
  if (file.endsWith(".gz")) text = await promisify(zlib.gunzip)(bytes);
  else if (file.endsWith(".zst")) text = zlib.zstdDecompressSync(bytes);
  return JSON.parse(text.toString("utf8"));
}

async function historyDir(root: string, project: string, stack: string): Promise<string | undefined> {
  // Project-scoped layout (current), then the legacy one; a fully qualified "org/project/stack"
  // names the stack by its last part.
  const name = stack.split("/").at(-1) ?? stack;
  for (const dir of [
    path.join(root, ".pulumi", "history", project, name),
    path.join(root, ".pulumi", "history", name),
  ]) {
    const entries = await readdir(dir).catch(() => undefined);
    if (entries?.some((e) => /\.checkpoint\.json(\.gz|\.zst)?$/.test(e))) return dir;
  }
  return undefined;
}

/**
 * The versions a stack held in its earlier updates and holds no longer. `current` are the agents
 * it holds now; `backendUrl` the PULUMI_BACKEND_URL the commands use.
 */
export async function readHistory(options: {
  backendUrl: string | undefined;
  project: string;
  stack: string;
  current: Record<string, HeldAgent>;
}): Promise<StackHistory> {
  const none = (source: string): StackHistory => ({ available: false, source, updates: 0, past: new Map() });
  const url = options.backendUrl ?? "";
  if (!url.startsWith("file://")) {
    const scheme = url.split("://")[0] || "this backend";
    return none(
      `the update history of a ${scheme} backend holds no outputs that agent-iac can read: ` +
        "older versions created by a replace show as unknown (only a file backend's history is read)",
    );
  }
  const root = fileURLToPath(url);
  const dir = await historyDir(root, options.project, options.stack);
  if (!dir) return none(`no update history under ${path.join(root, ".pulumi", "history")}`);
  const names = (await readdir(dir)).filter((e) => /\.checkpoint\.json(\.gz|\.zst)?$/.test(e));
  // <stack>-<unix ns>.checkpoint.json: newest last.
  const stamp = (name: string) => BigInt(/-(\d+)\.checkpoint\./.exec(name)?.[1] ?? "0");
  names.sort((a, b) => (stamp(a) < stamp(b) ? -1 : stamp(a) > stamp(b) ? 1 : 0));
  const recent = names.slice(-MAX_HISTORY_UPDATES);
  const held = new Set(Object.values(options.current).map((a) => a.version_id));
  const past = new Map<string, PastVersion>();
  let updates = 0;
  // A file backend's history records carry no version number: updates count from the first file.
  const skipped = names.length - recent.length;
  for (const [index, name] of recent.entries()) {
    const checkpoint = (await decode(path.join(dir, name)).catch(() => undefined)) as
      | { checkpoint?: { latest?: unknown } }
      | undefined;
    if (!checkpoint) continue;
    updates++;
    const info = (await decode(path.join(dir, name.replace(".checkpoint.", ".history.")))
      .catch(() => decode(path.join(dir, name.replace(/\.checkpoint\.json(\.gz|\.zst)?$/, ".history.json"))))
      .catch(() => undefined)) as { endTime?: number | string } | undefined;
    const endTime = info?.endTime;
    const at =
      typeof endTime === "number"
        ? new Date(endTime * 1000).toISOString().replace(".000Z", "Z")
        : typeof endTime === "string"
          ? endTime
          : new Date(Number(stamp(name) / 1_000_000n)).toISOString();
    for (const agent of Object.values(stateAgents(checkpoint.checkpoint?.latest))) {
      if (held.has(agent.version_id)) continue;
      const version: PastVersion = {
        ...agent,
        last_update: skipped + index + 1,
        last_held_at: at,
      };
      past.set(agent.version_id, version);
      if (![...held].some((id) => agentIdOf(id) === agent.id)) past.set(agent.id, version);
    }
  }
  const shown = names.length > recent.length ? ` (the newest ${recent.length} of ${names.length})` : "";
  return { available: true, source: `${updates} update(s) in ${dir}${shown}`, updates, past };
}

/** The version a key held just before its current one, from the history (newest first). */
export function previousVersionOf(
  history: StackHistory,
  key: string,
  currentVersionId: string,
): PastVersion | undefined {
  let best: PastVersion | undefined;
  for (const version of new Set(history.past.values())) {
    if (version.key !== key || version.version_id === currentVersionId) continue;
    if (!best || (version.last_held_at ?? "") > (best.last_held_at ?? "")) best = version;
  }
  return best;
}

/**
 * The history with the stack's `previous_versions` output added (key → the version before its
 * current one: what the program recorded at its last replace, src/component/previous.ts), for the
 * versions the history does not name: on a backend without readable history they are all it has.
 */
export function withPreviousVersions(
  history: StackHistory,
  previous: Record<string, string>,
  current: Record<string, HeldAgent>,
): StackHistory {
  const past = new Map(history.past);
  let added = 0;
  for (const [key, version_id] of Object.entries(previous)) {
    const agent = current[key];
    if (!agent || past.has(version_id) || agent.version_id === version_id) continue;
    const id = agentIdOf(version_id);
    const version: PastVersion = {
      ...agent,
      id,
      version_id,
      postprocess_agents: [],
      last_update: null,
      last_held_at: null,
      from_outputs: true,
    };
    past.set(version_id, version);
    if (!past.has(id) && agent.id !== id) past.set(id, version);
    added++;
  }
  if (added === 0) return history;
  const source = `${history.source}; the stack's previous_versions output names ${added} version(s) its agents held before their current one`;
  return { ...history, source, past };
}
