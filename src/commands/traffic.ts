// What `watch` and `audit` share in the command layer: the stack read for its traffic, how its
// service is read (resumed, stopped, each retry said), and the end of an interrupted read.
import { rm } from "node:fs/promises";
import { reportPath } from "../report/index.ts";
import { type OpenedTraffic, openTraffic } from "../usecases/index.ts";
import type { ResumeOptions, WindowFlags } from "../watch/index.ts";
import { type CommandIO, interruptedWhile } from "./lifecycle.ts";

/**
 * Reads the stack (`--stack`, the window flags, `--baseline`), then runs `body` with what it holds
 * and how its use case reads the service (the resume options of its paged reads, the retry notices);
 * Ctrl+C (or SIGTERM) stops the reads and ends the run (exit 130) without a report: the figures of
 * a window read in part would mislead, so report files from an earlier run are removed, not kept.
 * A service failure is explained by the command lifecycle (exit 3).
 */
export async function withTraffic(
  io: CommandIO,
  values: WindowFlags & { stack: string; baseline?: string | undefined; json?: string; markdown?: string },
  body: (
    traffic: OpenedTraffic,
    reading: { resume: ResumeOptions; onRetry: CommandIO["printRetry"] },
  ) => Promise<number>,
): Promise<number> {
  const { stack, baseline } = values;
  const traffic = await openTraffic({ project: io.project, stack, window: values, baseline });
  io.useConnection(traffic.connection);
  const stop = io.interruption();
  const files = values;
  try {
    const resume = { signal: stop.signal, onResume: (line: string) => io.stderr.write(`${line}\n`) };
    return await body(traffic, { resume, onRetry: io.printRetry });
  } catch (error) {
    if (!stop.signal.aborted) throw error;
    const stale = [files.json, files.markdown].flatMap((file) => (file ? [reportPath(file)] : []));
    await Promise.all(stale.map((file) => rm(io.project.path(file), { force: true })));
    const removed = stale.length > 0 ? `; no report written (${stale.join(", ")} removed: not this run's)` : "";
    throw interruptedWhile(`the traffic was not read to the end${removed}`);
  } finally {
    stop.release();
  }
}
