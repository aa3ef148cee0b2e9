// The use-case floor: what the commands orchestrate, between src/commands (flags, wording, exit
// codes) and the domain folders. Each use case takes a typed request, an injected output and an
// AbortSignal — never flags — and throws typed errors (./errors.ts) whose codes the command layer maps.

export { cleanErrorLines, type Deployed, deploy } from "./deploy.ts";
export { invalidFiles, overBudget } from "./errors.ts";
export { type JudgeCacheOptions, setupJudge } from "./judge.ts";
export {
  checkReusedSimulator,
  describeSimulator,
  failedDeliveries,
  type LocalService,
  localService,
} from "./local-service.ts";
export {
  type BehaviourRequest,
  type Previewed,
  previewBehaviour,
  previewStack,
} from "./preview.ts";
export {
  backendError,
  type HeldAgents,
  offlineProject,
  openSession,
  type StackConfig,
  type StackSession,
  stackConfigOrFile,
  stackConnection,
  stackFileConfig,
  staleOutputsNote,
} from "./session.ts";
export { checkAccess, type JobIO, type JobResult, type Placement, runSmokeJob, type SmokeJob } from "./smoke-job.ts";
export { simulatorServiceId, type TrafficStack, trafficStack } from "./traffic.ts";
