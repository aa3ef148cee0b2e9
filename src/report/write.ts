// Writing one report to every file asked for: build the Report once, then each format renders it.
// Another format is one more line in `renderers`.
import { mkdir, readFile, writeFile } from "node:fs/promises";
import path from "node:path";
import { htmlReport } from "./html/index.ts";
import { junitXml } from "./junit.ts";
import { REPORT_FORMAT, type Report, reportSchema } from "./schema.ts";

export function reportJson(report: Report): string {
  return `${JSON.stringify(report, null, 2)}\n`;
}

/** Where each format goes; a format without a file is not written. */
export type ReportFiles = { json?: string; junit?: string; html?: string };

const renderers: Record<keyof ReportFiles, (report: Report) => string> = {
  json: reportJson,
  junit: junitXml,
  html: htmlReport,
};

/** Writes each asked-for format of the report; `overrides` replace a format's renderer (e.g. the comparison's JUnit). */
export async function writeReports(
  report: Report,
  files: ReportFiles,
  overrides: Partial<Record<keyof ReportFiles, (report: Report) => string>> = {},
): Promise<void> {
  await Promise.all(
    Object.entries(files).map(async ([format, file]) => {
      const render = overrides[format as keyof ReportFiles] ?? renderers[format as keyof ReportFiles];
      if (!file || !render) return;
      await mkdir(path.dirname(path.resolve(file)), { recursive: true });
      await writeFile(file, render(report));
    }),
  );
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
  return parsed.data;
}

/** 0 every scenario passed (flaky ones too); 1 one failed or was inconclusive; 3 one could not complete (or was not run). */
export function reportExitCode(report: Pick<Report, "scenarios">, options: { notRunIsError?: boolean } = {}): number {
  const verdicts = report.scenarios.map((s) => s.verdict);
  if (verdicts.includes("error") || (options.notRunIsError && verdicts.includes("not_run"))) return 3;
  if (verdicts.includes("failed") || verdicts.includes("inconclusive")) return 1;
  return 0;
}
