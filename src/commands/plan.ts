// `agent-iac plan`: a preview rendered for review (Markdown for a pull request, JSON for scripts).
import { mkdir, writeFile } from "node:fs/promises";
import path from "node:path";
import type { AgentDefinition } from "../definitions/index.ts";
import { formatDiagnostic } from "../definitions/index.ts";
import { CliError } from "../errors/index.ts";
import {
  attachBehaviour,
  behaveReport,
  behaviourTargets,
  type Plan,
  type PlanInputs,
  planRecorder,
  previewBehaviour,
  renderJson,
  renderMarkdown,
} from "../plan/index.ts";
import { appendJobSummary, writeReports } from "../report/index.ts";
import { configMapReader, policyPackOptions, type ResolvedConnection, requireConnection } from "../settings/index.ts";
import type { Stack } from "../workspace/index.ts";
import { interruptible, lockedStackError } from "../workspace/index.ts";
import { parseCommand, STACK_FLAG } from "./args.ts";
import { checkAccess, connectClient } from "./connect.ts";
import { existingStack, pulumiFailure, reportPath, stackAgents } from "./stack.ts";

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
  const { stack, env, agents, errors, connection, config } = await existingStack(values.stack, "the preview failed");
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
  // The stack's policy pack (agents:policyPack) runs in the preview; its violations go under their agents.
  const policy = policyPackOptions(configMapReader(config), process.cwd());
  let blocked = false;
  await interruptible(
    (text) => process.stderr.write(text),
    (run) => stack.preview({ ...policy, onEvent: recorder.onEvent, onOutput: run.watch, signal: run.signal }),
  ).catch((error: unknown) => {
    // A mandatory policy violation fails the preview: the plan still shows it, and the exit code is 1.
    if (recorder.mandatoryViolations() > 0 && !(error instanceof CliError)) {
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
      ? await behaviour(plan, recorder.inputs(), { stack, agents, resolved, connection })
      : undefined;
  const markdown = renderMarkdown(plan);
  if (values.markdown) await write(reportPath(values.markdown), markdown);
  else process.stdout.write(markdown);
  if (values.json) await write(reportPath(values.json), renderJson(plan));
  if (behave) {
    await writeReports(behave.report, {
      ...(values["behave-report"] ? { json: reportPath(values["behave-report"]) } : {}),
      ...(values.html ? { html: reportPath(values.html) } : {}),
    });
    await appendJobSummary(behave.report);
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
  return behave?.exitCode ?? 0;
}

type BehaveContext = {
  stack: Stack;
  agents: AgentDefinition[];
  resolved: ResolvedConnection;
  connection: Parameters<typeof checkAccess>[1];
};

/** Plays the previewable agents' scenarios and puts the results into the plan; 1 when one failed, 3 when a call could not complete. */
async function behaviour(plan: Plan, inputs: PlanInputs, context: BehaveContext) {
  const held = await stackAgents(context.stack).catch((error: unknown) => {
    throw pulumiFailure("reading the stack's state failed", error);
  });
  const { targets, skipped } = behaviourTargets(plan, inputs, context.agents, held.agents);
  const client = connectClient(context.resolved);
  const stop = new AbortController();
  const onSignal = (signal: NodeJS.Signals) => stop.abort(new Error(`interrupted by ${signal}`));
  process.once("SIGINT", onSignal);
  process.once("SIGTERM", onSignal);
  try {
    if (targets.length > 0) await checkAccess(client, context.connection);
    // Progress goes to stderr: stdout may carry the Markdown plan.
    const results = await previewBehaviour(client, targets, {
      concurrency: 4,
      out: process.stderr,
      signal: stop.signal,
    });
    if (stop.signal.aborted) throw new CliError("interrupted: the behaviour preview was stopped", 130);
    attachBehaviour(plan, targets, skipped, results);
    const totals = plan.behave;
    const exitCode = totals && totals.errors > 0 ? 3 : totals && totals.failed > 0 ? 1 : 0;
    return { exitCode, report: behaveReport(plan, targets, results) };
  } finally {
    process.off("SIGINT", onSignal);
    process.off("SIGTERM", onSignal);
    await client.close();
  }
}

async function write(file: string, text: string) {
  await mkdir(path.dirname(path.resolve(file)), { recursive: true });
  await writeFile(file, text);
}
