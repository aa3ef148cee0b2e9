// src/report: the report value of every kind of run (schema.ts: smoke, compare, behave, merged,
// replay; traffic.ts: watch, audit; plan.ts: the plan) and the only place that renders and writes
// one. A command builds its report value and ends with `emitReport` (write.ts): the files asked for,
// the job summary, the terminal text, the exit code. Nothing here imports a producer (smoke,
// compare, plan, watch): they import this.

export type { Drift, DriftScenario, Moved } from "./drift-schema.ts";
export { notEvidence } from "./evidence.ts";
export { htmlReport } from "./html/index.ts";
export { junitXml } from "./junit.ts";
export { jobSummary } from "./markdown.ts";
export {
  comparedVerdict,
  countScenarios,
  endedOnItsOwn,
  evaluated,
  exitCode,
  finishedCalls,
  runReport,
  unknownVersion,
} from "./outcome.ts";
export * from "./plan.ts";
export { behaviourCounts, planJson, planMarkdown } from "./plan-markdown.ts";
export { evidenceText } from "./repeats.ts";
export * from "./schema.ts";
export { answeredBy, callLines, terminalSummary } from "./terminal.ts";
export * from "./traffic.ts";
export { pct } from "./traffic-render.ts";
export * from "./variants.ts";
export {
  emitReport,
  type ReportFiles,
  readReport,
  reportExitCode,
  reportJson,
  reportPath,
  unreadableFile,
  writeJsonFile,
  writeReportFiles,
} from "./write.ts";
