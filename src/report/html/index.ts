// The HTML report: one self-contained file (inline CSS, script and SVG; no network request) of a
// smoke run, a comparison, a behaviour preview or merged shards, built from the JSON report.
import type { z } from "zod";
import { reportSchema } from "../../results/index.ts";
import { page } from "./page.ts";

/** A report as written, or as read back (missing fields default, unknown ones are kept). */
export type ReportInput = z.input<typeof reportSchema>;

/** The page for one report. The input is parsed with the report schema, so an older or partial report renders too. */
export function htmlReport(report: ReportInput): string {
  return page(reportSchema.parse(report));
}
