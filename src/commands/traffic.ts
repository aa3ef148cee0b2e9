// What `watch` and `audit` share in the command layer: the client for the stack's service, and
// the end of an interrupted read of the traffic.
import { rm } from "node:fs/promises";
import type { Client } from "../api/index.ts";
import { reportPath } from "../report/index.ts";
import type { Connection } from "../settings/index.ts";
import type { ResumeOptions } from "../watch/index.ts";
import { type CommandIO, interruptedWhile } from "./lifecycle.ts";

/**
 * Runs `body` with a client for the stack's service and the resume options of its paged reads;
 * Ctrl+C (or SIGTERM) stops the reads and ends the run (exit 130) without a report: the figures of
 * a window read in part would mislead, so report files from an earlier run are removed, not kept.
 * A service failure is explained by the command lifecycle (exit 3).
 */
export async function withTrafficClient(
  io: CommandIO,
  connection: Connection,
  stackName: string,
  files: { json?: string | undefined; markdown?: string | undefined },
  body: (client: Client, resume: ResumeOptions) => Promise<number>,
): Promise<number> {
  io.useConnection(connection);
  const client = io.stackClient(connection, stackName);
  const stop = io.interruption();
  try {
    return await body(client, {
      signal: stop.signal,
      onResume: (line: string) => io.stderr.write(`${line}\n`),
    });
  } catch (error) {
    if (!stop.signal.aborted) throw error;
    const stale = [files.json, files.markdown].flatMap((file) => (file ? [reportPath(file)] : []));
    await Promise.all(stale.map((file) => rm(file, { force: true })));
    const removed = stale.length > 0 ? `; no report written (${stale.join(", ")} removed: not this run's)` : "";
    throw interruptedWhile(`the traffic was not read to the end${removed}`);
  } finally {
    stop.release();
  }
}
