// `agent-iac plan`: a preview rendered for review (Markdown for a pull request, JSON for scripts).
// Flags → one typed request → the preview (and behaviour preview) use cases → emitReport.
import { rm } from "node:fs/promises";
import { CliError, InterruptedError, StackNotFoundError } from "../errors/index.ts";
import { behaviourCounts, emitReport, reportPath, terminalSummary } from "../report/index.ts";
import {
  baselineChange,
  offlinePlan,
  openValidStack,
  type Previewed,
  previewBehaviour,
  previewStack,
  pullRequestBase,
  SETTINGS_READ_FROM_BASE,
  serviceConnection,
  settingsSinceDeploy,
  stackSettingsAgainst,
} from "../usecases/index.ts";
import { parseCommand, STACK_FLAG } from "./args.ts";
import { JUDGE_FLAGS, judgeCache, PLAN_REPORT_FLAGS, reportFiles } from "./flags.ts";
import { type CommandIO, interrupted, interruptedWhile } from "./lifecycle.ts";

const SPEC = {
  name: "plan",
  about: `Previews the stack and renders which agents would be created, replaced (and why), left
unchanged or removed, field by field, with prompt changes as unified diffs. Prints the Markdown
unless --markdown is given. Without --behave it makes no request to the service (on a loopback
address, as in the dev stack, it needs no key). The agent files are read from the stack's
agents:dir (default agents), with the stack's overlays merged, as a deploy would. A bare file
name is written under reports/.

With --behave, each replaced conversational agent whose change is confined to config has its smoke
scenarios played against the version the stack holds, with the changed config sections sent whole
as override_config (test calls, livemode false; nothing is created), and the results go under its
diff; every other change says why it cannot be previewed.

Every plan first lists each agents:* setting of the stack that changed (secrets as "changed", never
their values; the guarded ones below first): against the settings the stack was last deployed with
(Pulumi's record of its last successful update; on a stack never deployed, each setting its first
deploy would use), or in a pull request against the base. In a pull request (--base REF, or in
GitHub Actions the pull_request event's GITHUB_BASE_REF, read as origin/<branch>) the settings
that decide where the API key, the judge's and the persona caller's keys and the transcripts go,
what the caller sends, or what code the preview runs are read from the base:
  ${SETTINGS_READ_FROM_BASE.join(", ")}
(docs/threat-model.md), each as Pulumi resolves it (Pulumi.yaml's defaults, the stack file
wherever stackConfigDir puts it, merge keys). A pull request that changes one, or where config
comes from (stackConfigDir, an ESC environment:, Pulumi.yaml's declaration of one of them), sends
nothing to its new value and runs no new pack; the plan marks the change and the run exits 1, so
that a human reviews it.

With --offline (no state credential and no API key: a fork's pull request gets no secrets), the plan
is the one such a run can have: the agent files validated with the stack's overlays, agent-iac's
org rules checked offline with the stack's agents:policyPackConfig, and the settings compared with
the base. It says first what it could not do (preview the stack's state, play scenarios) and why.`,
  flags: {
    stack: STACK_FLAG,
    ...PLAN_REPORT_FLAGS,
    base: {
      type: "string",
      arg: "REF",
      help: "the pull request's base (a git ref): settings changes are listed, guarded ones read from it",
    },
    offline: {
      type: "boolean",
      default: false,
      help: "without credentials (a fork's pull request): validate, check the org rules offline, compare the settings",
    },
    behave: {
      type: "boolean",
      default: false,
      help: "play the changed agents' smoke scenarios with the proposed config (test calls)",
    },
    ...JUDGE_FLAGS,
  },
  footer: `exit codes: 0 the preview succeeded (and, with --behave, every previewed scenario passed),
1 the agent files are invalid (file:line errors on stderr), a previewed scenario failed or the stack's
policy pack (agents:policyPack) reported a mandatory violation (listed under its agent; the
behaviour preview then places no call and its reports list every call as not run), or the pull
request changes a setting read from its base (listed first in the plan), 2 usage
or configuration error (e.g. no stack, no API key for a remote service), 3 the preview failed
(backend or toolchain unavailable, program error) or a previewed call could not complete,
130 interrupted. --offline exits 0 when the files are valid, no mandatory rule is broken and no
guarded setting changed, as above otherwise: a partial plan is not a failure, it says what it
could not do.`,
} as const;

type Parsed = NonNullable<ReturnType<typeof parseCommand<typeof SPEC.flags>>>;

function planRequest({ values }: Parsed, env: NodeJS.ProcessEnv) {
  for (const flag of ["behave-report", "html"] as const) {
    if (values[flag] && !values.behave) throw new CliError(`--${flag} needs --behave`);
  }
  if (values.offline && values.behave) throw new CliError("--behave needs credentials: not with --offline");
  return {
    stack: values.stack,
    base: pullRequestBase(values.base, env),
    offline: values.offline,
    behave: values.behave,
    judgeCache: judgeCache(values),
    files: reportFiles(PLAN_REPORT_FLAGS, values),
  };
}

/** The stack to preview; in a pull request a missing one means missing credentials (a fork's), not a stack to create. */
async function openPlannedStack(
  stack: string,
  against: Awaited<ReturnType<typeof stackSettingsAgainst>> | undefined,
  io: CommandIO,
) {
  const opening = { project: io.project, what: "the preview failed", consequence: "; nothing was previewed" };
  return openValidStack(stack, { ...opening, ...(against ? { base: against } : {}) }, (text) =>
    io.stderr.write(text),
  ).catch((error: unknown) => {
    if (!(error instanceof StackNotFoundError) || !against) throw error;
    throw new StackNotFoundError(stack, {
      hint: `in a pull request this means the run has no state credential (a fork's pull request gets no secrets): run \`agent-iac plan --offline\` for the plan it can have; the stack is not to be created here`,
      cause: error,
    });
  });
}

/** --behave: the changed agents' scenarios on the proposed config; Ctrl+C stops the calls, every call marked. */
async function playChangedAgents(
  session: Parameters<typeof previewBehaviour>[0],
  previewed: Previewed,
  { cache, resolved }: { cache: ReturnType<typeof judgeCache>; resolved: ReturnType<typeof serviceConnection> },
  io: CommandIO,
) {
  const stop = io.interruption();
  // Progress goes to stderr: stdout may carry the Markdown plan.
  const behaviour = { concurrency: 4, judgeCache: cache, connection: () => resolved };
  const report = await previewBehaviour(session, previewed, behaviour, {
    out: io.stderr,
    signal: stop.signal,
    onRetry: io.printRetry,
  }).finally(stop.release);
  io.stderr.write(terminalSummary(report));
  return report;
}

export async function run(argv: string[], io: CommandIO): Promise<number> {
  const parsed = parseCommand(SPEC, argv, io.stdout);
  if (!parsed) return 0;
  const request = planRequest(parsed, io.env);
  // In a pull request the settings that send keys and transcripts, or run code, come from the base.
  const against = request.base ? await stackSettingsAgainst(request.stack, request.base, io.project) : undefined;
  // A re-blessed drift baseline is named like a setting change (a reviewed change).
  const baseline = request.base ? await baselineChange(request.stack, request.base, io.project) : undefined;
  if (request.offline) {
    const offline = await offlinePlan(io.project, request.stack, against);
    if (baseline) offline.plan.baseline = baseline;
    return finish(offline, request, io);
  }
  const session = await openPlannedStack(request.stack, against, io);
  // The program refuses to run without a key; say so as a configuration error, before a preview.
  const resolved = serviceConnection(session);
  const written = Object.values(request.files).map(reportPath);
  // Without a base, the settings are compared with those of the stack's last deploy (read alongside the preview).
  const sinceDeploy = against ? undefined : settingsSinceDeploy(session);
  sinceDeploy?.catch(() => undefined);
  const previewed = await previewStack(session, {
    log: (text) => io.stderr.write(text),
    interrupts: io.onInterrupt,
  }).catch(async (error: unknown) => {
    if (!(error instanceof InterruptedError)) throw error;
    // No plan came of this run: files of an earlier one must not pass for it.
    await Promise.all(written.map((file) => rm(io.project.path(file), { force: true })));
    const removed = written.length > 0 ? `; ${written.join(", ")} removed: not this run's` : "";
    throw interruptedWhile(`the preview was cancelled, no plan was made${removed}`);
  });
  const { plan } = previewed;
  const settings = against?.settings ?? (await sinceDeploy);
  if (settings && settings.changes.length > 0) plan.settings = settings;
  if (baseline) plan.baseline = baseline;
  if (request.behave) {
    io.useConnection(session.connection);
    plan.behave_report = await playChangedAgents(session, previewed, { cache: request.judgeCache, resolved }, io);
  }
  // The report says whether the calls were stopped: a signal after it was made changes nothing.
  const stopped = plan.behave_report?.interrupted === true;
  return finish(previewed, request, io, () => {
    if (stopped && plan.behave_report) throw interrupted({ calls: plan.behave_report.results, reports: written });
  });
}

/** Writes the plan (its files, else the Markdown on stdout), says what it found, returns the exit code. */
async function finish(
  previewed: Previewed,
  request: ReturnType<typeof planRequest>,
  io: CommandIO,
  written: () => void = () => undefined,
): Promise<number> {
  const { plan } = previewed;
  const held = (plan.settings?.changes ?? []).filter((c) => c.guarded);
  // The Markdown goes to its file, else to stdout (the terminal rendering of a plan).
  const exitCode = await emitReport(plan, {
    env: io.env,
    within: io.project.dir,
    files: request.files,
    ...(request.files.markdown ? {} : { out: io.stdout }),
  });
  // An interrupted behaviour preview ends here, its reports written.
  written();
  if (request.files.markdown) {
    const changed = plan.agents.filter((a) => a.action !== "unchanged").length;
    const previewedText = plan.behave
      ? `; behaviour preview: ${behaviourCounts(plan.behave)}, ${plan.behave.not_previewed.length} agent(s) not previewed`
      : "";
    io.stdout.write(
      plan.limits
        ? `plan for ${request.stack}: partial (${plan.limits.length} thing(s) it could not do, listed first); written to ${reportPath(request.files.markdown)}\n`
        : `plan for ${request.stack}: ${changed} agent(s) change${settingsText(plan)}${previewedText}; written to ${reportPath(request.files.markdown)}\n`,
    );
  }
  if (held.length > 0) {
    io.stderr.write(
      `plan for ${request.stack}: the pull request changes ${held.map((c) => c.key).join(", ")} (read from ${request.base} for this preview): a human must review the change\n`,
    );
  }
  if (previewed.blocked > 0) {
    io.stderr.write(`plan for ${request.stack}: ${previewed.blocked} mandatory policy violation(s)\n`);
  }
  // The plan's code says both: a held change or a mandatory violation fails it (1) unless its preview says worse.
  return exitCode;
}

/** The summary line's word on the stack settings, when some changed. */
function settingsText({ settings }: Previewed["plan"]): string {
  const count = settings?.changes.length ?? 0;
  if (count === 0) return "";
  const against =
    settings?.base ?? (settings?.deployed && "first" in settings.deployed ? undefined : "the last deploy");
  return against
    ? `, ${count} stack setting(s) changed against ${against}`
    : `, ${count} stack setting(s) set for the first deploy`;
}
