// What `watch` and `audit` share in the command layer: the end of a read the run's signal stopped
// (the use cases in src/usecases/traffic.ts throw its InterruptedError).
import { rm } from "node:fs/promises";
import { InterruptedError } from "../errors/index.ts";
import { type ReportFiles, reportPath } from "../report/index.ts";
import { type CommandIO, interruptedWhile } from "./lifecycle.ts";

/**
 * The `.catch` of a traffic use case: Ctrl+C (or SIGTERM) ends the run (exit 130) without a report,
 * since the figures of a window read in part would mislead, so report files from an earlier run are
 * removed, not kept. Any other error goes on to the command lifecycle (a service failure: exit 3).
 */
export function trafficInterrupted(io: CommandIO, files: ReportFiles) {
  return async (error: unknown): Promise<never> => {
    if (!(error instanceof InterruptedError)) throw error;
    const stale = Object.values(files).map(reportPath);
    await Promise.all(stale.map((file) => rm(io.project.path(file), { force: true })));
    const removed = stale.length > 0 ? `; no report written (${stale.join(", ")} removed: not this run's)` : "";
    throw interruptedWhile(`${error.what}${removed}`);
  };
}
