// A report file read back: tolerant of older versions (their counts recounted by the one rule),
// strict about what it is (the format mark, a version this build reads, the schema), and refused
// before reading when it is no regular file in bounds. The readers of reports and of any file given
// as data (report merge, drift's baseline, judge label, a labelled file, a recording) use it.

import { readFile, stat } from "node:fs/promises";
import path from "node:path";
import { InvalidInputError } from "../errors/index.ts";
import { countScenarios } from "./outcome.ts";
import { REPORT_FORMAT, REPORT_VERSION, type Report, reportSchema } from "./schema.ts";

/**
 * Why `file` cannot be read as a whole (a directory, a FIFO or device that would block or never
 * end, over `max` bytes, missing or unreadable), or undefined when it is a regular file in bounds.
 * Asked before reading any file given as data: a report, a labelled file, a recording.
 */
export async function unreadableFile(file: string, max = Number.MAX_SAFE_INTEGER): Promise<string | undefined> {
  const info = await stat(file).catch((error: NodeJS.ErrnoException) => error);
  if (info instanceof Error) return `cannot read it (${info.code ?? info.message})`;
  if (info.isDirectory()) return "it is a directory, not a file";
  if (!info.isFile()) return "it is not a regular file (a FIFO, socket or device is never read)";
  if (info.size > max) return `it is larger than ${max} bytes`;
  return undefined;
}

/**
 * A report file read back tolerantly; throws with the file's name (as given) and the first problem.
 * A relative `file` is read from `within` (the run's project directory, never the process's cwd).
 */
export async function readReport(file: string, within: string, maxBytes?: number): Promise<Report> {
  const absolute = path.resolve(within, file);
  // A size cap (report merge's) is checked before the file is read or parsed.
  const problem = await unreadableFile(absolute, maxBytes);
  if (problem) throw new InvalidInputError(`${file}: ${problem}`);
  const text = await readFile(absolute, "utf8").catch((error: NodeJS.ErrnoException) => {
    throw new InvalidInputError(`cannot read ${file}: ${error.code ?? error.message}`);
  });
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw new InvalidInputError(`${file}: not JSON (${(error as Error).message})`);
  }
  if ((value as { format?: unknown } | null)?.format !== REPORT_FORMAT) {
    throw new InvalidInputError(`${file}: not an agent-iac report (no "format": "${REPORT_FORMAT}")`);
  }
  const version = (value as { version?: unknown }).version;
  if (typeof version === "number" && version > REPORT_VERSION) {
    throw new InvalidInputError(
      `${file}: a report of version ${version}, newer than this agent-iac reads (${REPORT_VERSION}): upgrade agent-iac to read it`,
    );
  }
  const parsed = reportSchema.safeParse(value);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new InvalidInputError(
      `${file}: not an agent-iac report: ${issue?.path.join(".") || "(top)"}: ${issue?.message}`,
    );
  }
  const report = parsed.data;
  // Before version 3 the summary counted calls; before 4 it had no count of calls not run or cut
  // short. Recounted from the scenarios and the calls (their outcomes derived from their status).
  if (report.version < 4 && !["watch", "audit"].includes(report.kind)) report.summary = countScenarios(report);
  return report;
}
