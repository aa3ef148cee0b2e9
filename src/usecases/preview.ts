// `plan`'s use cases: the stack's preview recorded as a reviewable plan (the stack's policy pack
// runs in it; a mandatory violation blocks it but the plan still shows it), and the behaviour
// preview of `plan --behave` through the smoke job (the changed agents' scenarios with the
// proposed config as override_config). A preview the policy pack blocked places no call: its
// behaviour report lists every call it would have placed as not run.

import { AgentIacError, InterruptedError } from "../errors/index.ts";
import {
  attachBehaviour,
  type BehaviourTarget,
  behaveReport,
  behaviourTargets,
  type Plan,
  type PlanInputs,
  planRecorder,
} from "../plan/index.ts";
import type { Report } from "../report/index.ts";
import type { ResolvedConnection } from "../settings/index.ts";
import { notRunResult, type ScenarioResult, smokePlanOf } from "../smoke/index.ts";
import { type Interrupts, interruptible, lockedStackError } from "../workspace/index.ts";
import type { JudgeCacheOptions } from "./judge.ts";
import { backendError, type StackSession } from "./session.ts";
import { type JobIO, runSmokeJob } from "./smoke-job.ts";

export type Previewed = {
  plan: Plan;
  inputs: PlanInputs;
  /** Mandatory policy violations blocked the preview (they are in the plan, under their agents). */
  blocked: number;
};

export async function previewStack(
  session: StackSession,
  io: { log: (text: string) => void; interrupts: Interrupts },
): Promise<Previewed> {
  const recorder = planRecorder(session.name, await session.validFiles("; nothing was previewed"));
  const policy = session.policy();
  let blocked = 0;
  await interruptible(
    io.log,
    (run) => session.stack.preview({ ...policy, onEvent: recorder.onEvent, onOutput: run.watch, signal: run.signal }),
    io.interrupts,
  ).catch((error: unknown) => {
    if (error instanceof InterruptedError) throw error;
    // A mandatory policy violation fails the preview: the plan still shows it.
    const mandatory = recorder.mandatoryViolations();
    if (mandatory > 0 && !(error instanceof AgentIacError)) {
      blocked = mandatory;
      return;
    }
    throw (
      lockedStackError(error, session.name, session.env, "the same plan command") ??
      backendError("the preview failed", error)
    );
  });
  return { plan: recorder.plan(), inputs: recorder.inputs(), blocked };
}

export type BehaviourRequest = {
  concurrency: number;
  judgeCache?: JudgeCacheOptions;
  connection: () => ResolvedConnection;
};

/**
 * Plays the previewable agents' scenarios, puts the results under their agents in the plan and
 * returns the behaviour report (kind behave). A blocked preview places nothing.
 */
export async function previewBehaviour(
  session: StackSession,
  previewed: Previewed,
  request: BehaviourRequest,
  io: JobIO,
): Promise<Report> {
  const { plan, inputs } = previewed;
  const held = await session.held();
  // The scenarios smoke would play: agent files, AgentDirectory folders and smoke/<key>.yaml.
  const definitions = await session.scenarioAgents(held);
  const { targets, skipped } = behaviourTargets(plan, inputs, definitions, held.agents);
  const calls = targets.flatMap((t) => t.calls);
  const report = (results: ScenarioResult[]) => {
    attachBehaviour(plan, targets, skipped, results);
    return behaveReport(plan, targets, results);
  };
  if (previewed.blocked > 0) {
    const reason = "a mandatory policy violation blocked the preview";
    return report(calls.map((call) => notRunResult(call, { reason })));
  }
  for (const target of targets) io.out.write(previewLine(target));
  const job = {
    stack: session.name,
    plan: smokePlanOf(calls),
    placement: { kind: "behave" as const, report },
    concurrency: request.concurrency,
    judge: { settings: session.judge, ...(request.judgeCache ? { cache: request.judgeCache } : {}) },
    caller: session.caller,
    connection: request.connection,
  };
  const result = await runSmokeJob(job, io);
  return result.kind === "ran" ? result.report : report([]);
}

const previewLine = (target: BehaviourTarget) =>
  `behaviour preview: ${target.agent} against ${target.versionId} with override_config ${target.sections.join(", ")}\n`;
