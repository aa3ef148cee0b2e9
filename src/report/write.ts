// The one way a run ends: `emitReport` takes the report value of any kind (runs, watch, audit,
// the plan), writes each format the user asked for (a bare name under reports/, directories
// created, each file replaced atomically), appends the job summary where GitHub Actions names one,
// prints the terminal rendering, and returns the exit code by the one rule (outcome.ts). Another
// format is one more entry in `RENDERERS`; another kind, one more row.

import { appendFile, mkdir, readFile, rename, writeFile } from "node:fs/promises";
import path from "node:path";
import { IoError } from "../errors/index.ts";
import { terminalLines } from "./escape.ts";
import { htmlReport } from "./html/index.ts";
import { junitXml } from "./junit.ts";
import { jobSummary } from "./markdown.ts";
import { countScenarios, exitCode } from "./outcome.ts";
import type { Plan } from "./plan.ts";
import { planJson, planMarkdown } from "./plan-markdown.ts";
import { REPORT_FORMAT, type Report, reportSchema } from "./schema.ts";
import { terminalSummary } from "./terminal.ts";
import { auditMarkdown, auditText, watchMarkdown, watchText } from "./traffic-render.ts";

export function reportJson(report: Report): string {
  return `${JSON.stringify(report, null, 2)}\n`;
}

/** Where each format goes; a format without a file is not written. `behave_json`: a plan's behaviour report. */
export type ReportFiles = { json?: string; junit?: string; html?: string; markdown?: string; behave_json?: string };
type Format = keyof ReportFiles;

/** Any kind's report value: a run's or live traffic's Report, or the plan. */
export type AnyReport = Report | Plan;

type Renderers = {
  files: Partial<Record<Format, (value: never) => string>>;
  terminal?: (value: never) => string;
  summary?: (value: never) => string | undefined;
};

const RUN: Renderers = {
  files: { json: reportJson, junit: junitXml, html: htmlReport, markdown: jobSummary },
  terminal: terminalSummary,
  summary: jobSummary,
};

const behaviour = (plan: Plan) => plan.behave_report;

/** Each kind's renderers: the formats it has, its terminal text, its job summary. */
const RENDERERS: Record<string, Renderers> = {
  smoke: RUN,
  compare: RUN,
  behave: RUN,
  merged: RUN,
  replay: RUN,
  watch: { files: { json: reportJson, markdown: watchMarkdown }, terminal: watchText, summary: watchMarkdown },
  audit: { files: { json: reportJson, markdown: auditMarkdown }, terminal: auditText, summary: auditMarkdown },
  plan: {
    files: {
      markdown: planMarkdown,
      json: planJson,
      behave_json: (plan: Plan) => reportJson(behaviour(plan) as Report),
      html: (plan: Plan) => htmlReport(behaviour(plan) as Report),
    },
    terminal: planMarkdown,
    summary: (plan: Plan) => (plan.behave_report ? jobSummary(plan.behave_report) : undefined),
  },
};

function renderersOf(value: AnyReport): Renderers {
  const renderers = RENDERERS[value.kind ?? "plan"];
  if (!renderers) throw new Error(`no renderer for a report of kind "${value.kind}"`);
  return renderers;
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

/** Writes each asked-for format of the report (e.g. after every finished call); returns the files written. */
export async function writeReportFiles(value: AnyReport, files: ReportFiles): Promise<string[]> {
  const { files: renderers } = renderersOf(value);
  const written: string[] = [];
  for (const [format, file] of Object.entries(files) as [Format, string | undefined][]) {
    if (!file) continue;
    const render = renderers[format] as ((value: AnyReport) => string) | undefined;
    if (!render) throw new Error(`a ${value.kind ?? "plan"} report has no ${format} format`);
    const target = reportPath(file);
    await writeAtomically(target, render(value));
    written.push(target);
  }
  return written;
}

/** A JSON data file that goes with the reports (e.g. reports/old-versions.json for a later `--compare`). */
export async function writeJsonFile(file: string, value: unknown): Promise<string> {
  const target = reportPath(file);
  await writeAtomically(target, `${JSON.stringify(value, null, 2)}\n`);
  return target;
}

export type EmitOptions = {
  files?: ReportFiles;
  /** Where the terminal rendering goes (none when absent). */
  out?: { write(text: string): unknown };
  /** The environment naming the job summary file (GITHUB_STEP_SUMMARY); default process.env. */
  env?: NodeJS.ProcessEnv;
};

/** Ends a run: every file asked for, the job summary, the terminal text; returns the exit code. */
export async function emitReport(value: AnyReport, options: EmitOptions = {}): Promise<number> {
  const renderers = renderersOf(value);
  await writeReportFiles(value, options.files ?? {});
  const summary = (renderers.summary as ((value: AnyReport) => string | undefined) | undefined)?.(value);
  if (summary !== undefined) await appendJobSummary(summary, options.env ?? process.env);
  const terminal = renderers.terminal as ((value: AnyReport) => string) | undefined;
  // Text the service sent is data: control characters are shown escaped, our own line breaks stay.
  if (options.out && terminal) options.out.write(terminalLines(terminal(value)));
  return reportExitCode(value);
}

const isPlan = (value: AnyReport): value is Plan => value.kind === undefined || value.kind === "plan";

/** The exit code of any kind's report (outcome.ts); a plan's is its behaviour preview's. */
export function reportExitCode(value: AnyReport): number {
  if (isPlan(value)) return value.behave_report ? exitCode(value.behave_report) : 0;
  return exitCode(value);
}

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

/** A report file read back tolerantly; throws with the file's name and the first problem. */
export async function readReport(file: string): Promise<Report> {
  const text = await readFile(file, "utf8").catch((error: NodeJS.ErrnoException) => {
    throw new Error(`cannot read ${file}: ${error.code ?? error.message}`);
  });
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw new Error(`${file}: not JSON (${(error as Error).message})`);
  }
  if ((value as { format?: unknown } | null)?.format !== REPORT_FORMAT) {
    throw new Error(`${file}: not an agent-iac report (no "format": "${REPORT_FORMAT}")`);
  }
  const parsed = reportSchema.safeParse(value);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new Error(`${file}: not an agent-iac report: ${issue?.path.join(".") || "(top)"}: ${issue?.message}`);
  }
  const report = parsed.data;
  // Before version 3 the summary counted calls; the headline counts are scenarios now.
  if (report.version < 3 && !["watch", "audit"].includes(report.kind)) report.summary = countScenarios(report);
  return report;
}
