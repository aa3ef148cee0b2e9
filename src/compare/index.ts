// Old versus new (`smoke --compare OLD`, `start` after a deploy): the same scenarios on both pinned
// versions, compared per scenario and expectation, with the transcripts, timings and procedures.
export {
  compareScenario,
  expectationOutcome,
  procedureDifferences,
  scenarioOutcome,
  transcriptDiff,
} from "./compare.ts";
export { mergeComparisons } from "./merge.ts";
export {
  type BaseRecord,
  checkPendingBase,
  consumeBase,
  type OldVersions,
  parseOldVersions,
  readOldVersions,
  recordDeployBase,
} from "./old-versions.ts";
export { type ComparedScenario, compareReport, type FailOn } from "./reports.ts";
export { compareSides, comparisonPlan } from "./run.ts";
export { type CompareRule, placePairs } from "./sequential.ts";
export { regressionEvidence } from "./significance.ts";
