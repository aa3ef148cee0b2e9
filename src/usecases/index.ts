// The use-case floor: what the commands orchestrate, between src/commands (flags, wording, exit
// codes) and the domain folders. Each use case takes a typed request and its run's IO (RunIO: the
// output, warnings, the connection, the interruption) — never flags — returns a CommandOutcome
// ({ report, notes, code }) where the command emits a report, and throws typed errors (src/errors; ./errors.ts)
// whose codes the command layer maps. It exports what the commands call, its own values only (types
// from anywhere): never a domain folder's value (the lint's usecases-floor-exports-its-own rule).
// Tests import a use case's parts from its own file.
export { captureScenario } from "./capture.ts";
export { deriveDraft, generateDraft } from "./drafts.ts";
export { blessReports, runDrift } from "./drift.ts";
export { followConversationEvents } from "./events.ts";
export { judgeCheck } from "./judge-check.ts";
export { judgeLabel } from "./judge-label.ts";
export { mergeShardReports } from "./merge.ts";
export type { CommandOutcome, RunIO } from "./outcome.ts";
export { planStack } from "./plan.ts";
export { listRecords, type ServiceListName } from "./service-lists.ts";
export { pullRequestBase } from "./session.ts";
export { type SmokeOutcome, smokeStack } from "./smoke.ts";
export { deployAndSmoke, type StartIO } from "./start.ts";
export { auditStack, DEFAULT_NEGATIVE_RATINGS, watchStack } from "./traffic.ts";
export { COMPARE_DEFAULTS_FOR_TRY, tryVariants, type VariantSpec } from "./try.ts";
