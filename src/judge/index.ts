// Judged expectations: a rubric checked by a model endpoint the team names (OpenAI Chat Completions
// protocol), with votes, cited transcript lines, a cache keyed by everything that shapes an answer,
// and the judge's agreement with human labels measured. Knows nothing of smoke or the commands: it
// takes a rubric and a transcript's display lines and returns a judgement.
export { agreementLine, agreementStats, kappaLine, oneVerdictOnly, voteConsistency } from "./agreement.ts";
export { type Calibration, VoteCache } from "./cache.ts";
export {
  type CheckResult,
  calibrations,
  checkJudge,
  itemKey,
  LabelledFileError,
  MIN_CALIBRATION_ITEMS,
  readLabelledFile,
  rubricHash,
} from "./check.ts";
export { JudgeClient } from "./client.ts";
export { movingModels } from "./models.ts";
export { Judge, type Judgement, majority } from "./votes.ts";
