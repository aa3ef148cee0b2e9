// `agent-iac plan`: a preview rendered for review (Markdown for a pull request, JSON for scripts).
import { rm } from "node:fs/promises";
import type { AgentDefinition } from "../definitions/index.ts";
import { formatDiagnostic } from "../definitions/index.ts";
import { AgentIacError, CliError, InterruptedError } from "../errors/index.ts";
import {
  attachBehaviour,
  behaveReport,
  behaviourTargets,
  type Plan,
  type PlanInputs,
  planRecorder,
  previewBehaviour,
} from "../plan/index.ts";
import { emitReport, reportPath, terminalSummary } from "../report/index.ts";
import {
  configMapReader,
  type JudgeSettings,
  policyPackOptions,
  type ResolvedConnection,
  requireConnection,
} from "../settings/index.ts";
import type { Stack } from "../workspace/index.ts";
import { interruptible, lockedStackError } from "../workspace/index.ts";
import { parseCommand, STACK_FLAG } from "./args.ts";
import { checkAccess } from "./connect.ts";
import { JUDGE_FLAGS, runJudge } from "./judge.ts";
import {
  finishedCalls,
  interrupted,
  interruptedWhile,
  interruption,
  onInterrupt,
  serviceClient,
  useConnection,
} from "./lifecycle.ts";
import { scenarioAgents } from "./scenarios.ts";
import { existingStack, pulumiFailure, stackAgents } from "./stack.ts";

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
diff; every other change says why it cannot be previewed.`,
  flags: {
    stack: STACK_FLAG,
    markdown: { type: "string", arg: "FILE", help: "write the Markdown plan to FILE" },
    json: { type: "string", arg: "FILE", help: "write the JSON plan to FILE" },
    behave: {
      type: "boolean",
      default: false,
      help: "play the changed agents' smoke scenarios with the proposed config (test calls)",
    },
    "behave-report": {
      type: "string",
      arg: "FILE",
      help: "with --behave: write its calls as a JSON report (kind behave)",
    },
    html: { type: "string", arg: "FILE", help: "with --behave: write its calls as a self-contained HTML report" },
    ...JUDGE_FLAGS,
  },
  footer: `exit codes: 0 the preview succeeded (and, with --behave, every previewed scenario passed),
1 the agent files are invalid (file:line errors on stderr), a previewed scenario failed or the stack's
policy pack (agents:policyPack) reported a mandatory violation (listed under its agent), 2 usage
or configuration error (e.g. no stack, no API key for a remote service), 3 the preview failed
(backend or toolchain unavailable, program error) or a previewed call could not complete,
130 interrupted.`,
} as const;

export async function run(argv: string[]): Promise<number> {
  const parsed = parseCommand(SPEC, argv);
  if (!parsed) return 0;
  const { values } = parsed;
  const { stack, env, dir, agents, errors, connection, judge, config } = await existingStack(
    values.stack,
    "the preview failed",
  );
  if (errors.length > 0) {
    for (const error of errors) process.stderr.write(`${formatDiagnostic(error)}\n`);
    throw new CliError(`${errors.length} error(s) in the agent files; nothing was previewed.`, 1);
  }
  // The program refuses to run without a key; say so as a configuration error, before a preview.
  const resolved = requireConnection(connection, values.stack);
  for (const flag of ["behave-report", "html"] as const) {
    if (values[flag] && !values.behave) throw new CliError(`--${flag} needs --behave`, 2);
  }
  const recorder = planRecorder(values.stack, agents);
  const files = planFiles(values);
  // The stack's policy pack (agents:policyPack) runs in the preview; its violations go under their agents.
  const policy = policyPackOptions(configMapReader(config), process.cwd());
  let blocked = false;
  await interruptible(
    (text) => process.stderr.write(text),
    (run) => stack.preview({ ...policy, onEvent: recorder.onEvent, onOutput: run.watch, signal: run.signal }),
    onInterrupt,
  ).catch(async (error: unknown) => {
    if (error instanceof InterruptedError) {
      // No plan came of this run: files of an earlier one must not pass for it.
      await Promise.all(files.map((file) => rm(file, { force: true })));
      const removed = files.length > 0 ? `; ${files.join(", ")} removed: not this run's` : "";
      throw interruptedWhile(`the preview was cancelled, no plan was made${removed}`);
    }
    // A mandatory policy violation fails the preview: the plan still shows it, and the exit code is 1.
    if (recorder.mandatoryViolations() > 0 && !(error instanceof AgentIacError)) {
      blocked = true;
      return;
    }
    throw (
      lockedStackError(error, values.stack, env, "the same plan command") ?? pulumiFailure("the preview failed", error)
    );
  });
  const plan = recorder.plan();
  const behave =
    values.behave && !blocked
      ? await behaviour(plan, recorder.inputs(), {
          stack,
          stackName: values.stack,
          dir,
          agents,
          resolved,
          connection,
          judge,
          flags: values,
        })
      : undefined;
  if (behave) plan.behave_report = behave.report;
  // The Markdown goes to its file, else to stdout (the terminal rendering of a plan).
  const exitCode = await emitReport(plan, {
    files: {
      ...(values.markdown ? { markdown: values.markdown } : {}),
      ...(values.json ? { json: values.json } : {}),
      ...(values["behave-report"] ? { behave_json: values["behave-report"] } : {}),
      ...(values.html ? { html: values.html } : {}),
    },
    ...(values.markdown ? {} : { out: process.stdout }),
  });
  if (behave?.interrupted) {
    const calls = behave.report.results;
    throw interrupted({ finished: finishedCalls(calls), total: calls.length, reports: files });
  }
  if (values.markdown) {
    const changed = plan.agents.filter((a) => a.action !== "unchanged").length;
    const previewed = plan.behave
      ? `; behaviour preview: ${plan.behave.passed} passed, ${plan.behave.failed + plan.behave.errors} failed, ${plan.behave.not_previewed.length} agent(s) not previewed`
      : "";
    process.stdout.write(
      `plan for ${values.stack}: ${changed} agent(s) change${previewed}; written to ${reportPath(values.markdown)}\n`,
    );
  }
  if (blocked) {
    process.stderr.write(`plan for ${values.stack}: ${recorder.mandatoryViolations()} mandatory policy violation(s)\n`);
    return 1;
  }
  return exitCode;
}

type BehaveContext = {
  stack: Stack;
  stackName: string;
  dir: string;
  agents: AgentDefinition[];
  resolved: ResolvedConnection;
  connection: Parameters<typeof checkAccess>[1];
  judge: JudgeSettings;
  flags: Parameters<typeof runJudge>[2];
};

/** Plays the previewable agents' scenarios, puts the results into the plan and returns their report (kind behave). */
async function behaviour(plan: Plan, inputs: PlanInputs, context: BehaveContext) {
  const held = await stackAgents(context.stack).catch((error: unknown) => {
    throw pulumiFailure("reading the stack's state failed", error);
  });
  // The scenarios smoke would play: agent files, AgentDirectory folders and smoke/<key>.yaml.
  const definitions = await scenarioAgents({
    stackName: context.stackName,
    dir: context.dir,
    fromFiles: context.agents,
    held,
    exitCode: 1,
  });
  const { targets, skipped } = behaviourTargets(plan, inputs, definitions, held.agents);
  // Judged scenarios without a judge stop here (exit 2), before any request to the service.
  const calls = targets.flatMap((t) => t.calls.map((c) => ({ agent: c.agent, scenario: c.scenario })));
  const judge = await runJudge(calls, context.judge, context.flags, context.stack.name);
  useConnection(context.connection);
  const client = serviceClient(context.resolved);
  // Ctrl+C (or SIGTERM) stops the calls: the plan and its reports are still written, every call marked.
  const stop = interruption();
  try {
    if (targets.length > 0) await checkAccess(client, context.connection);
    // Progress goes to stderr: stdout may carry the Markdown plan.
    const results = await previewBehaviour(client, targets, {
      concurrency: 4,
      out: process.stderr,
      signal: stop.signal,
      judge,
    });
    attachBehaviour(plan, targets, skipped, results);
    // Progress went to stderr; the behaviour's closing count goes there too.
    const report = behaveReport(plan, targets, results);
    process.stderr.write(terminalSummary(report));
    return { report, interrupted: stop.signal.aborted };
  } finally {
    stop.release();
    await judge?.client.close();
  }
}

/** The files this run writes (bare names under reports/). */
function planFiles(values: Partial<Record<"markdown" | "json" | "behave-report" | "html", string>>): string[] {
  return (["markdown", "json", "behave-report", "html"] as const).flatMap((flag) => {
    const file = values[flag];
    return file ? [reportPath(file)] : [];
  });
}
