// `agent-iac plan`: a preview rendered for review (Markdown for a pull request, JSON for scripts).
// Flags → one typed request → the plan use case (preview, settings, behaviour preview) → emitReport
// and the notes after it.
import { rm } from "node:fs/promises";
import { CliError, InterruptedError } from "../errors/index.ts";
import { behaviourCounts, emitReport, reportPath, terminalSummary } from "../report/index.ts";
import type { Plan } from "../results/index.ts";
import { planStack, pullRequestBase } from "../usecases/index.ts";
import { parseCommand, STACK_FLAG } from "./args.ts";
import { JUDGE_FLAGS, judgeCache, PLAN_REPORT_FLAGS, READ_FROM_BASE_HELP, reportFiles } from "./flags.ts";
import { type CommandIO, interrupted, interruptedWhile } from "./lifecycle.ts";
import { runIO } from "./run-io.ts";

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
  ${READ_FROM_BASE_HELP}
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

export async function run(argv: string[], io: CommandIO): Promise<number> {
  const parsed = parseCommand(SPEC, argv, io.stdout);
  if (!parsed) return 0;
  const { files, ...request } = planRequest(parsed, io.env);
  const written = Object.values(files).map(reportPath);
  // Progress goes to stderr: stdout may carry the Markdown plan.
  const outcome = await planStack({ ...request, project: io.project }, runIO(io, io.stderr)).catch(
    async (error: unknown) => {
      if (!(error instanceof InterruptedError)) throw error;
      // No plan came of this run: files of an earlier one must not pass for it.
      await Promise.all(written.map((file) => rm(io.project.path(file), { force: true })));
      const removed = written.length > 0 ? `; ${written.join(", ")} removed: not this run's` : "";
      throw interruptedWhile(`the preview was cancelled, no plan was made${removed}`);
    },
  );
  const plan = outcome.report;
  // The Markdown goes to its file, else to stdout (the terminal rendering of a plan).
  // The behaviour preview's summary on stderr, as its progress (stdout may carry the Markdown plan).
  if (plan.behave_report) io.stderr.write(terminalSummary(plan.behave_report));
  await emitReport(plan, { env: io.env, within: io.project.dir, files, ...(files.markdown ? {} : { out: io.stdout }) });
  // The report says whether the calls were stopped: a signal after it was made changes nothing.
  const behaviour = plan.behave_report;
  if (behaviour?.interrupted) throw interrupted({ cwd: io.cwd, calls: behaviour.results, reports: written });
  if (files.markdown) io.stdout.write(summaryLine(plan, request.stack, reportPath(files.markdown)));
  for (const note of outcome.notes) io.stderr.write(note);
  return outcome.code;
}

/** `plan for dev: 2 agent(s) change…; written to reports/plan.md` when the Markdown went to a file. */
function summaryLine(plan: Plan, stack: string, file: string): string {
  if (plan.limits) {
    return `plan for ${stack}: partial (${plan.limits.length} thing(s) it could not do, listed first); written to ${file}\n`;
  }
  const changed = plan.agents.filter((a) => a.action !== "unchanged").length;
  const previewed = plan.behave
    ? `; behaviour preview: ${behaviourCounts(plan.behave)}, ${plan.behave.not_previewed.length} agent(s) not previewed`
    : "";
  return `plan for ${stack}: ${changed} agent(s) change${settingsText(plan)}${previewed}; written to ${file}\n`;
}

/** The summary line's word on the stack settings, when some changed. */
function settingsText({ settings }: Plan): string {
  const count = settings?.changes.length ?? 0;
  if (count === 0) return "";
  const against =
    settings?.base ?? (settings?.deployed && "first" in settings.deployed ? undefined : "the last deploy");
  return against
    ? `, ${count} stack setting(s) changed against ${against}`
    : `, ${count} stack setting(s) set for the first deploy`;
}
