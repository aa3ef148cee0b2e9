// `plan`'s use cases: the stack's preview recorded as a reviewable plan (the stack's policy pack
// runs in it; a mandatory violation blocks it but the plan still shows it), and the behaviour
// preview of `plan --behave` through the smoke job (the changed agents' scenarios with the
// proposed config as override_config). A preview the policy pack blocked places no call: its
// behaviour report lists every call it would have placed as not run.

import { readFile } from "node:fs/promises";
import path from "node:path";
import { AgentIacError, ConfigError, InterruptedError } from "../errors/index.ts";
import {
  attachBehaviour,
  type BehaviourTarget,
  behaveReport,
  behaviourTargets,
  type Plan,
  type PlanInputs,
  planRecorder,
} from "../plan/index.ts";
import { definitionAgents, evaluateAgents, ruleSetups, violationMessage } from "../policy/index.ts";
import type { PlanSettings, PolicyViolation, Report } from "../results/index.ts";
import {
  type ProjectContext,
  type ResolvedConnection,
  type StackFileSettings,
  type StackFileVersions,
  settingChanges,
} from "../settings/index.ts";
import { cutShort, notRunResult, type ScenarioResult, smokePlanOf } from "../smoke/index.ts";
import { type Interrupts, interruptible, lockedStackError, type Stack } from "../workspace/index.ts";
import type { JudgeCacheOptions } from "./judge.ts";
import { backendError, openSession, type StackSession } from "./session.ts";
import { type JobIO, runSmokeJob, smokeJobFrom } from "./smoke-job.ts";

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
    // A stopped preview says so in its report, as a stopped smoke run does.
    return { ...behaveReport(plan, targets, results), interrupted: io.signal.aborted && cutShort(results) };
  };
  if (previewed.blocked > 0) {
    const reason = "a mandatory policy violation blocked the preview";
    return report(calls.map((call) => notRunResult(call, { reason })));
  }
  for (const target of targets) io.out.write(previewLine(target));
  const job = smokeJobFrom(session, {
    plan: smokePlanOf(calls),
    placement: { kind: "behave", report },
    concurrency: request.concurrency,
    judgeCache: request.judgeCache,
    connection: request.connection,
  });
  const result = await runSmokeJob(job, io);
  return result.kind === "ran" ? result.report : report([]);
}

/** Operations read per call of `pulumi stack history` while looking for the last deploy. */
const HISTORY_PAGE_SIZE = 25;

/**
 * The stack's agents:* settings against those of its last successful deploy. Pulumi records the
 * config each update ran with (`pulumi stack history`, secrets decrypted only to compare them:
 * a changed secret is listed as changed, its values never held in the result). A stack never
 * deployed (or destroyed since) lists every setting as added: what its first deploy would use.
 */
export async function settingsSinceDeploy(session: StackSession): Promise<PlanSettings> {
  const current = asSettings(session.config);
  const update = await lastDeploy(session.stack).catch((error: unknown) => {
    throw backendError("reading the stack's history failed", error);
  });
  if (!update) return { deployed: { first: true }, changes: settingChanges({}, current, { guard: false }) };
  return {
    deployed: { update: update.version, ended: (update.endTime ?? update.startTime).toISOString() },
    changes: settingChanges(asSettings(update.config), current, { guard: false }),
  };
}

/** The newest successful update (undefined when there is none, or a destroy came after it). */
async function lastDeploy(stack: Stack) {
  for (let page = 1; ; page++) {
    const operations = await stack.history(HISTORY_PAGE_SIZE, page, true);
    for (const operation of operations) {
      if (operation.result !== "succeeded") continue;
      if (operation.kind === "destroy") return undefined;
      if (operation.kind === "update") return operation;
    }
    if (operations.length < HISTORY_PAGE_SIZE) return undefined;
  }
}

const asSettings = (config: Record<string, { value?: string; secret?: boolean } | undefined>): StackFileSettings =>
  Object.fromEntries(
    Object.entries(config).flatMap(([key, setting]) =>
      setting?.value === undefined ? [] : [[key, { value: setting.value, secret: Boolean(setting.secret) }]],
    ),
  );

const previewLine = (target: BehaviourTarget) =>
  `behaviour preview: ${target.agent} against ${target.versionId} with override_config ${target.sections.join(", ")}\n`;

/** What a plan without credentials cannot do, said in the plan itself. */
const OFFLINE_LIMITS = [
  "preview the stack's state (which agents would be created, replaced or removed, field by field): this run has no state credential — a fork's pull request gets no secrets, or the repository has no preview environment",
  "play the changed agents' scenarios: this run has no API key",
];

/**
 * The plan a run without credentials can have: the agent files validated (with the stack's
 * overlays), agent-iac's org rules checked offline with the stack's agents:policyPackConfig, and
 * the stack settings compared with the base. It says what it could not do.
 */
export async function offlinePlan(
  project: ProjectContext,
  stackName: string,
  against: (StackFileVersions & { settings: PlanSettings }) | undefined,
): Promise<Previewed> {
  const session = await openSession(stackName, { project, source: "file", ...(against ? { base: against } : {}) });
  const agents = await session.validFiles("; nothing was planned");
  const overlays = agents.flatMap((a) => (a.overlay ? [a.overlay] : []));
  const checked = [`the agent files: ${agents.length} agent(s) valid`];
  const plan: Plan = { kind: "plan", stack: stackName, agents: [], overlays, limits: OFFLINE_LIMITS, checked };
  if (against && against.settings.changes.length > 0) plan.settings = against.settings;
  // The pack the stack names (read from the base in a pull request) decides which rules apply: its config.
  const options = session.policy();
  const configFile = options.policyPackConfigs?.[0];
  let blocked = 0;
  if (options.policyPacks) {
    const setups = ruleSetups(configFile ? await readJson(configFile) : {});
    const violations: PolicyViolation[] = evaluateAgents(definitionAgents(agents), setups).map((v) => ({
      rule: v.finding.rule,
      level: v.level,
      pack: "agent-iac (offline)",
      message: violationMessage(v.agent, v.finding),
      urn: "",
    }));
    const mandatory = violations.filter((v) => v.level === "mandatory").length;
    const where = configFile ? path.relative(project.dir, configFile) : "the defaults";
    checked.push(`agent-iac's org rules, offline, with ${where}: ${violations.length} violation(s)`);
    if (violations.length > 0) plan.policy = { mandatory, advisory: violations.length - mandatory, other: violations };
    blocked = mandatory;
  }
  return { plan, inputs: new Map(), blocked };
}

async function readJson(file: string): Promise<unknown> {
  const text = await readFile(file, "utf8");
  try {
    return JSON.parse(text);
  } catch (error) {
    throw new ConfigError(`${file}: not JSON: ${(error as Error).message}`);
  }
}
