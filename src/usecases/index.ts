// The use-case floor: what the commands orchestrate, between src/commands (flags, wording, exit
// codes) and the domain folders. Each use case takes a typed request, an injected output and an
// AbortSignal — never flags — and throws typed errors (./errors.ts) whose codes the command layer maps.

export { cleanErrorLines, type Deployed, deploy } from "./deploy.ts";

export { movingModels, setupJudge } from "./judge.ts";
export {
  failedDeliveries,
  type LocalService,
  localService,
} from "./local-service.ts";
export { checkBeforeDeploy } from "./preflight.ts";
export {
  offlinePlan,
  type Previewed,
  previewBehaviour,
  previewStack,
  settingsSinceDeploy,
} from "./preview.ts";
export { agentsToRecreate, recoveryCommand } from "./recovery.ts";
export {
  openSession,
  pullRequestBase,
  type StackSession,
  stackConnection,
  stackSettingsAgainst,
  staleOutputsNote,
} from "./session.ts";
export { runSmokeJob } from "./smoke-job.ts";
export { simulatorServiceId, trafficStack } from "./traffic.ts";
