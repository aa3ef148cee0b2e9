// The JSON report shared by smoke, comparison, behaviour preview, merged shard runs and the
// live-traffic commands, and its renderings (JUnit, the job summary); `writeReports` writes every
// format from one Report.
export { callsOf, failureText, junitXml, latencyProblems } from "./junit.ts";
export { appendJobSummary, jobSummary } from "./markdown.ts";
export { decidedText, evidenceText, passKText, sequentialText, shownPassK } from "./repeats.ts";
export * from "./schema.ts";
export * from "./traffic.ts";
export { type ReportFiles, readReport, reportExitCode, reportJson, writeReports } from "./write.ts";
