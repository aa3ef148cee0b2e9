// src/report: the report value of every kind of run (schema.ts: smoke, compare, behave, merged,
// replay; traffic.ts: watch, audit; plan.ts: the plan) and the only place that renders and writes
// one. A command builds its report value and ends with `emitReport` (write.ts): the files asked for,
// the job summary, the terminal text, the exit code. Nothing here imports a producer (smoke,
// compare, plan, watch): they import this.
export { codeSpan, fenced, markdownText, tableCell, xml } from "./escape.ts";
export { htmlReport } from "./html/index.ts";
export { callsOf, junitXml, latencyProblems } from "./junit.ts";
export { jobSummary } from "./markdown.ts";
export {
  countScenarios,
  exitCode,
  figure,
  type Headline,
  headline,
  latencyReasons,
  type RunReportParts,
  runReport,
  scenarioCounts,
  tolerated,
  verdictReason,
} from "./outcome.ts";
export * from "./plan.ts";
export { planJson, planMarkdown } from "./plan-markdown.ts";
export * from "./schema.ts";
export { callLines, callsLine, comparisonLines, failureText, scenarioLine, terminalSummary } from "./terminal.ts";
export * from "./traffic.ts";
export { auditMarkdown, auditText, pct, readsLine, watchMarkdown, watchText } from "./traffic-render.ts";
export {
  type AnyReport,
  type EmitOptions,
  emitReport,
  type ReportFiles,
  readReport,
  reportExitCode,
  reportJson,
  reportPath,
  writeJsonFile,
  writeReportFiles,
} from "./write.ts";
