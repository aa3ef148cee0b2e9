// Judged expectations: a rubric checked by a model endpoint the team names (OpenAI Chat Completions
// protocol), with votes, cited transcript lines, a cache keyed by everything that shapes an answer,
// and the judge's agreement with human labels measured. Knows nothing of smoke or the commands: it
// takes a rubric and a transcript's display lines and returns a judgement.
export { type AgreementStats, agreementLine, agreementStats, type Confusion, voteConsistency } from "./agreement.ts";
export { type AgreementStore, type Calibration, DEFAULT_CACHE_DIR, VoteCache, voteKey } from "./cache.ts";
export {
  type CheckResult,
  calibrations,
  checkJudge,
  type LabelledFile,
  LabelledFileError,
  type LabelledItem,
  type RubricCheck,
  readLabelledFile,
} from "./check.ts";
export { JudgeClient, type JudgeEndpoint } from "./client.ts";
export { judgeMessages, numberedTranscript, PROMPT_VERSION, VERDICT_JSON_SCHEMA } from "./prompt.ts";
export { JudgeAnswerError, parseVote, type Vote } from "./verdict.ts";
export { Judge, type Judgement, type JudgeRubric, type JudgeStats, majority } from "./votes.ts";
