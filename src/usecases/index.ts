// The use-case floor: what the commands orchestrate, between src/commands (flags, wording, exit
// codes) and the domain folders. Each use case takes a typed request, an injected output and an
// AbortSignal — never flags — and throws typed errors (./errors.ts) whose codes the command layer maps.
// It exports only its own use cases (and types from anywhere): never a domain folder's value
// (the lint's usecases-floor-exports-its-own rule).
export { type CaptureRequest, captureCall, recordedCall, serviceCall } from "./capture.ts";
export {
  cleanErrorLines,
  type Deployed,
  deploy,
  notRunAfterUp,
  settleComparisonBase,
} from "./deploy.ts";
export { type DraftResult, deriveDraft, generateDraft } from "./drafts.ts";
export { baselineChange, blessReports, runDrift } from "./drift.ts";
export { followConversationEvents } from "./events.ts";
export { judgeCheck } from "./judge-check.ts";
export { judgeLabel } from "./judge-label.ts";
export {
  failedDeliveries,
  type LocalService,
  localService,
} from "./local-service.ts";
export { mergeShardReports } from "./merge.ts";
export { checkBeforeDeploy } from "./preflight.ts";
export {
  offlinePlan,
  type Previewed,
  previewBehaviour,
  previewStack,
  settingsSinceDeploy,
} from "./preview.ts";
export { replayRun } from "./replay.ts";
export { listRecords, type ServiceListName } from "./service-lists.ts";
export {
  openSession,
  pullRequestBase,
  SETTINGS_READ_FROM_BASE,
  type StackSession,
  serviceConnection,
  stackConnection,
  stackSettingsAgainst,
} from "./session.ts";
export { runSmokeJob } from "./smoke-job.ts";
export { openValidStack, planHeld, prepareSmoke, suiteShard } from "./smoke-prologue.ts";
export {
  auditTraffic,
  DEFAULT_NEGATIVE_RATINGS,
  type OpenedTraffic,
  openTraffic,
  watchTraffic,
} from "./traffic.ts";
export { COMPARE_DEFAULTS_FOR_TRY, tryVariants, type VariantSpec } from "./try.ts";
export { unknownVersionsNote } from "./unknown-versions.ts";
