// src/report: the only place that renders and writes a report (its value and rules are
// src/results'). A command builds its report value through a use case and ends with `emitReport`
// (write.ts): the files asked for, the job summary, the terminal text, the exit code by the one rule.
// It sits above every producer (smoke, compare, plan, watch, drift, variants): none imports it.

export { htmlReport } from "./html/index.ts";
export { junitXml } from "./junit.ts";
export { jobSummary } from "./markdown.ts";
export { behaviourCounts, planJson, planMarkdown } from "./plan-markdown.ts";
export { evidenceText } from "./repeats.ts";
export { terminalSummary } from "./terminal.ts";
export {
  emitReport,
  type ReportFiles,
  reportJson,
  reportPath,
  writeJsonFile,
  writeReportFiles,
} from "./write.ts";
