// Old versus new (`smoke --compare OLD`, `start` after a deploy): the same scenarios on both pinned
// versions, compared per scenario and expectation, with the transcripts, timings and procedures.
export {
  compareScenario,
  expectationOutcome,
  procedureDifferences,
  scenarioOutcome,
  transcriptDiff,
} from "./compare.ts";
export {
  baseFile,
  consumeBase,
  type DeployBase,
  type OldVersions,
  type PendingBase,
  parseOldVersions,
  pendingBase,
  readOldVersions,
  recordDeployBase,
} from "./old-versions.ts";
export { type ComparedScenario, compareJunit, compareReport, type FailOn } from "./reports.ts";
export { type CompareOptions, runCompare } from "./run.ts";
