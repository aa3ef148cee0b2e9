// `plan`'s workflow: in a pull request the guarded settings read from its base (and its change of
// the drift baseline) → the stack opened and previewed (or, offline, the plan a run without
// credentials can have) → the settings changed since the last deploy → with `behave`, the changed
// agents' scenarios played on the proposed config → the plan, and what the run says after it (a
// guarded setting the pull request changes, mandatory policy violations).
import { StackNotFoundError } from "../errors/index.ts";
import type { Plan } from "../plan/index.ts";
import { type Report, reportExitCode } from "../results/index.ts";
import type { ProjectContext, ResolvedConnection } from "../settings/index.ts";
import { baselineChange } from "./drift.ts";
import type { JudgeCacheOptions } from "./judge.ts";
import type { CommandOutcome, RunIO } from "./outcome.ts";
import { offlinePlan, type Previewed, previewBehaviour, previewStack, settingsSinceDeploy } from "./preview.ts";
import { type StackSession, serviceConnection, stackSettingsAgainst } from "./session.ts";
import { openValidStack } from "./smoke-prologue.ts";

export type PlanRequest = {
  stack: string;
  project: ProjectContext;
  /** The pull request's base (a git ref): settings changes are listed, guarded ones read from it. */
  base?: string | undefined;
  /** Without credentials: the files validated, the org rules checked offline, the settings compared. */
  offline: boolean;
  /** Play the changed agents' scenarios with the proposed config. */
  behave: boolean;
  judgeCache: JudgeCacheOptions;
};

/** A plan always ends with its report (a preview that was cancelled throws the InterruptedError). */
export type PlanOutcome = CommandOutcome<Plan> & { report: Plan };

type Against = Awaited<ReturnType<typeof stackSettingsAgainst>> | undefined;
type Baseline = Plan["baseline"];

const withBaseline = (previewed: Previewed, baseline: Baseline): Previewed => {
  if (baseline) previewed.plan.baseline = baseline;
  return previewed;
};

/** `io.out`: the preview's and the behaviour preview's progress (the command's stdout may carry the plan). */
export async function planStack(request: PlanRequest, io: RunIO): Promise<PlanOutcome> {
  const { stack, project, base } = request;
  // In a pull request the settings that send keys and transcripts, or run code, come from the base.
  const against = base ? await stackSettingsAgainst(stack, base, project) : undefined;
  // A re-blessed drift baseline is named like a setting change (a reviewed change).
  const baseline = base ? await baselineChange(stack, base, project) : undefined;
  const previewed = request.offline
    ? withBaseline(await offlinePlan(project, stack, against), baseline)
    : await previewOnline(request, { against, baseline }, io);
  const { plan } = previewed;
  const notes = [];
  const held = (plan.settings?.changes ?? []).filter((c) => c.guarded);
  if (held.length > 0) {
    notes.push(
      `plan for ${stack}: the pull request changes ${held.map((c) => c.key).join(", ")} (read from ${base} for this preview): a human must review the change\n`,
    );
  }
  if (previewed.blocked > 0) notes.push(`plan for ${stack}: ${previewed.blocked} mandatory policy violation(s)\n`);
  // The plan's code says both: a held change or a mandatory violation fails it (1) unless its preview says worse.
  return { report: plan, notes, code: reportExitCode(plan) };
}

/** The stack previewed, its settings compared; with `behave`, its changed agents played. */
async function previewOnline(
  request: PlanRequest,
  { against, baseline }: { against: Against; baseline: Baseline },
  io: RunIO,
): Promise<Previewed> {
  const session = await openPlannedStack(request, against, io);
  // The program refuses to run without a key; say so as a configuration error, before a preview.
  const resolved = serviceConnection(session);
  // Without a base, the settings are compared with those of the stack's last deploy (read alongside the preview).
  const sinceDeploy = against ? undefined : settingsSinceDeploy(session);
  sinceDeploy?.catch(() => undefined);
  const previewed = await previewStack(session, { log: (text) => io.out.write(text), interrupts: io.interrupts });
  const { plan } = previewed;
  const settings = against?.settings ?? (await sinceDeploy);
  if (settings && settings.changes.length > 0) plan.settings = settings;
  withBaseline(previewed, baseline);
  if (request.behave) {
    io.useConnection(session.connection);
    plan.behave_report = await playChangedAgents(session, previewed, { cache: request.judgeCache, resolved }, io);
  }
  return previewed;
}

/** The stack to preview; in a pull request a missing one means missing credentials (a fork's), not a stack to create. */
async function openPlannedStack({ stack, project }: PlanRequest, against: Against, io: RunIO): Promise<StackSession> {
  const opening = { project, what: "the preview failed", consequence: "; nothing was previewed" };
  return openValidStack(stack, { ...opening, ...(against ? { base: against } : {}) }, io.warn).catch(
    (error: unknown) => {
      if (!(error instanceof StackNotFoundError) || !against) throw error;
      throw new StackNotFoundError(stack, {
        hint: `in a pull request this means the run has no state credential (a fork's pull request gets no secrets): run \`agent-iac plan --offline\` for the plan it can have; the stack is not to be created here`,
        cause: error,
      });
    },
  );
}

/** The changed agents' scenarios on the proposed config; Ctrl+C stops the calls, every call marked. */
async function playChangedAgents(
  session: StackSession,
  previewed: Previewed,
  { cache, resolved }: { cache: JudgeCacheOptions; resolved: ResolvedConnection },
  io: RunIO,
): Promise<Report> {
  const stop = io.interruption();
  const behaviour = { concurrency: 4, judgeCache: cache, connection: () => resolved };
  const report = await previewBehaviour(session, previewed, behaviour, {
    out: io.out,
    signal: stop.signal,
    onRetry: io.onRetry,
  }).finally(stop.release);
  return report;
}
