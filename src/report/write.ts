// The one way a run ends: `emitReport` takes the report value of any kind (runs, watch, audit,
// the plan), writes each format the user asked for (a bare name under reports/, directories
// created, each file replaced atomically), appends the job summary where GitHub Actions names one,
// prints the terminal rendering, and returns the exit code by the one rule (outcome.ts). Another
// format is one more entry in `RENDERERS`; another kind, one more row.

import { appendFile, mkdir, readFile, rename, stat, writeFile } from "node:fs/promises";
import path from "node:path";
import { InvalidInputError, IoError } from "../errors/index.ts";
import { driftHtml, driftJunit, driftMarkdown, driftText } from "./drift-render.ts";
import { terminalLines } from "./escape.ts";
import { htmlReport } from "./html/index.ts";
import { junitXml } from "./junit.ts";
import { jobSummary } from "./markdown.ts";
import { countScenarios, exitCode } from "./outcome.ts";
import type { Plan } from "./plan.ts";
import { planJobSummary, planJson, planMarkdown } from "./plan-markdown.ts";
import { REPORT_FORMAT, REPORT_VERSION, type Report, reportSchema } from "./schema.ts";
import { terminalSummary } from "./terminal.ts";
import { auditMarkdown, auditText, watchMarkdown, watchText } from "./traffic-render.ts";
import { tryHtml, tryMarkdown, tryText } from "./variants-render.ts";

export function reportJson(report: Report): string {
  return `${JSON.stringify(report, null, 2)}\n`;
}

/** Where each format goes; a format without a file is not written. `behave_json`: a plan's behaviour report. */
export type ReportFiles = { json?: string; junit?: string; html?: string; markdown?: string; behave_json?: string };
type Format = keyof ReportFiles;

/** Any kind's report value: a run's or live traffic's Report, or the plan. */
export type AnyReport = Report | Plan;

/** A kind's renderers, typed by its value: the formats it has, its terminal text, its job summary. */
type Renderers<V> = {
  files: Partial<Record<Format, (value: V) => string>>;
  terminal?: (value: V) => string;
  summary?: (value: V) => string | undefined;
};

const RUN: Renderers<Report> = {
  files: { json: reportJson, junit: junitXml, html: htmlReport, markdown: jobSummary },
  terminal: terminalSummary,
  summary: jobSummary,
};

/** A plan's behaviour report; a plan without one has no behaviour formats to write. */
function behaviour(plan: Plan): Report {
  if (!plan.behave_report) throw new Error("the plan has no behaviour preview to write (it needs --behave)");
  return plan.behave_report;
}

const PLAN: Renderers<Plan> = {
  files: {
    markdown: planMarkdown,
    json: planJson,
    behave_json: (plan) => reportJson(behaviour(plan)),
    html: (plan) => htmlReport(behaviour(plan)),
  },
  terminal: planMarkdown,
  summary: (plan) => planJobSummary(plan, jobSummary),
};

/** Each run or traffic kind's renderers. */
const KINDS: Record<Report["kind"], Renderers<Report>> = {
  smoke: RUN,
  compare: RUN,
  behave: RUN,
  merged: RUN,
  replay: RUN,
  drift: {
    files: { json: reportJson, junit: driftJunit, html: driftHtml, markdown: driftMarkdown },
    terminal: driftText,
    summary: driftMarkdown,
  },
  watch: { files: { json: reportJson, markdown: watchMarkdown }, terminal: watchText, summary: watchMarkdown },
  audit: { files: { json: reportJson, markdown: auditMarkdown }, terminal: auditText, summary: auditMarkdown },
  try: { files: { json: reportJson, markdown: tryMarkdown, html: tryHtml }, terminal: tryText, summary: tryMarkdown },
};

/** The value's renderers, bound to it: what each format, the terminal and the job summary would say. */
type Bound = {
  file(format: Format): (() => string) | undefined;
  terminal?: () => string;
  summary?: () => string | undefined;
};

function bind<V>(renderers: Renderers<V>, value: V): Bound {
  const { terminal, summary } = renderers;
  return {
    file: (format) => {
      const render = renderers.files[format];
      return render && (() => render(value));
    },
    ...(terminal ? { terminal: () => terminal(value) } : {}),
    ...(summary ? { summary: () => summary(value) } : {}),
  };
}

function renderersOf(value: AnyReport): Bound {
  if (isPlan(value)) return bind(PLAN, value);
  const renderers = KINDS[value.kind];
  if (!renderers) throw new Error(`no renderer for a report of kind "${value.kind}"`);
  return bind(renderers, value);
}

/** A bare file name (no directory) goes under reports/; any other path is used as given. */
export function reportPath(file: string): string {
  return path.basename(file) === file ? path.join("reports", file) : file;
}

/** Replaces `file` at once: a reader never sees half a report, a failed write leaves the last whole one. */
async function writeAtomically(file: string, text: string): Promise<void> {
  await mkdir(path.dirname(path.resolve(file)), { recursive: true });
  const temporary = `${file}.${process.pid}.${Math.random().toString(36).slice(2)}.tmp`;
  await writeFile(temporary, text);
  await rename(temporary, file);
}

/**
 * Writes each asked-for format of the report (e.g. after every finished call); returns the files
 * written, as named. A relative name is the run's project's (`within`), never the process's cwd.
 */
export async function writeReportFiles(value: AnyReport, files: ReportFiles, within: string): Promise<string[]> {
  const renderers = renderersOf(value);
  const written: string[] = [];
  for (const [format, file] of Object.entries(files) as [Format, string | undefined][]) {
    if (!file) continue;
    const render = renderers.file(format);
    if (!render) throw new Error(`a ${value.kind ?? "plan"} report has no ${format} format`);
    const target = reportPath(file);
    await writeAtomically(path.resolve(within, target), render());
    written.push(target);
  }
  return written;
}

/** A JSON data file that goes with the reports (e.g. reports/old-versions.json for a later `--compare`). */
export async function writeJsonFile(file: string, value: unknown, within: string): Promise<string> {
  const target = reportPath(file);
  await writeAtomically(path.resolve(within, target), `${JSON.stringify(value, null, 2)}\n`);
  return target;
}

export type EmitOptions = {
  files?: ReportFiles;
  /** Where the terminal rendering goes (none when absent). */
  out?: { write(text: string): unknown };
  /** The run's environment, naming the job summary file (GITHUB_STEP_SUMMARY). */
  env: NodeJS.ProcessEnv;
  /** The run's project directory: relative report files are its. */
  within: string;
};

/** Ends a run: every file asked for, the job summary, the terminal text; returns the exit code. */
export async function emitReport(value: AnyReport, options: EmitOptions): Promise<number> {
  const renderers = renderersOf(value);
  await writeReportFiles(value, options.files ?? {}, options.within);
  const summary = renderers.summary?.();
  if (summary !== undefined) await appendJobSummary(summary, options.env);
  // Text the service sent is data: control characters are shown escaped, our own line breaks stay.
  if (options.out && renderers.terminal) options.out.write(terminalLines(renderers.terminal()));
  return reportExitCode(value);
}

const isPlan = (value: AnyReport): value is Plan => value.kind === undefined || value.kind === "plan";

/**
 * The exit code of any kind's report (outcome.ts). A plan's is its behaviour preview's, and at
 * least 1 when the plan fails on its own account (a guarded setting changed, a mandatory violation).
 */
export function reportExitCode(value: AnyReport): number {
  if (!isPlan(value)) return exitCode(value);
  const mandatory = (value.policy?.mandatory ?? 0) > 0;
  const behaviour = value.behave_report;
  // A preview a mandatory violation blocked placed no call: its calls are "not run" by the plan's
  // own failure (1), not calls that could not complete (3).
  const blocked = mandatory && behaviour && !behaviour.interrupted && behaviour.results.every(notPlaced);
  const preview = behaviour && !blocked ? exitCode(behaviour) : 0;
  const held = (value.settings?.changes ?? []).some((c) => c.guarded) || mandatory;
  return held ? Math.max(preview, 1) : preview;
}

const notPlaced = (call: Report["results"][number]) => call.outcome.kind === "not_run";

/**
 * Appends Markdown to the file GitHub Actions names in GITHUB_STEP_SUMMARY; does nothing when it
 * is not set. Returns the file written, if any.
 */
async function appendJobSummary(markdown: string, env: NodeJS.ProcessEnv): Promise<string | undefined> {
  const file = env.GITHUB_STEP_SUMMARY;
  if (!file) return undefined;
  try {
    await appendFile(file, `${markdown}\n`);
  } catch (error) {
    const reason = error instanceof Error && "code" in error ? String(error.code) : String(error);
    throw new IoError(`cannot append the job summary to GITHUB_STEP_SUMMARY (${file}): ${reason}`, { cause: error });
  }
  return file;
}

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
