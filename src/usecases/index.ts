// The use-case floor: what the commands orchestrate, between src/commands (flags, wording, exit
// codes) and the domain folders. Each use case takes a typed request, an injected output and an
// AbortSignal — never flags — and throws typed errors (./errors.ts) whose codes the command layer maps.

// The words a command's flags and help name beside its use case (a shard's syntax, a default, the
// guarded settings), so that a command reaches the domain only through this floor (docs/architecture.md).
export { displayUrl } from "../api/index.ts";
export { GUARDED_KEYS, requireConnection, streamToken } from "../settings/index.ts";
export { parseShard } from "../smoke/index.ts";
export { DEFAULT_NEGATIVE_RATINGS } from "../watch/index.ts";
export { type CaptureRequest, captureCall, recordedCall, serviceCall } from "./capture.ts";
export { cleanErrorLines } from "./deploy.ts";
export { type DraftResult, deriveDraft, generateDraft } from "./drafts.ts";
export { blessReports, runDrift } from "./drift.ts";
export { judgeCheck } from "./judge-check.ts";
export { judgeLabel } from "./judge-label.ts";
export { mergeShardReports } from "./merge.ts";
export type { RunIO } from "./outcome.ts";
export { planStack } from "./plan.ts";
export {
  openSession,
  pullRequestBase,
  stackConnection,
} from "./session.ts";
export { type SmokeOutcome, smokeStack } from "./smoke.ts";
export { runSmokeJob } from "./smoke-job.ts";
export { deployAndSmoke } from "./start.ts";
export { auditTraffic, type OpenedTraffic, openTraffic, watchTraffic } from "./traffic.ts";
export { COMPARE_DEFAULTS_FOR_TRY, tryVariants, type VariantSpec } from "./try.ts";
