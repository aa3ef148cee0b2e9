// `agent-iac plan`: a preview rendered for review (Markdown for a pull request, JSON for scripts).
import { mkdir, writeFile } from "node:fs/promises";
import path from "node:path";
import { formatDiagnostic } from "../definitions/index.ts";
import { CliError } from "../errors/index.ts";
import { planRecorder, renderJson, renderMarkdown } from "../plan/index.ts";
import { requireConnection } from "../settings/index.ts";
import { interruptible, lockedStackError } from "../workspace/index.ts";
import { parseCommand, STACK_FLAG } from "./args.ts";
import { existingStack, pulumiFailure, reportPath } from "./stack.ts";

const SPEC = {
  name: "plan",
  about: `Previews the stack and renders which agents would be created, replaced (and why), left
unchanged or removed, field by field, with prompt changes as unified diffs. Prints the Markdown
unless --markdown is given. Makes no request to the service (on a loopback address, as in the dev
stack, it needs no key). The agent files are read from the stack's agents:dir (default agents),
with the stack's overlays merged, as a deploy would. A bare file name is written under reports/.`,
  flags: {
    stack: STACK_FLAG,
    markdown: { type: "string", arg: "FILE", help: "write the Markdown plan to FILE" },
    json: { type: "string", arg: "FILE", help: "write the JSON plan to FILE" },
  },
  footer: `exit codes: 0 the preview succeeded, 1 the agent files are invalid (file:line errors on stderr),
2 usage or configuration error (e.g. no stack, no API key for a remote service), 3 the preview
failed (backend or toolchain unavailable, program error), 130 interrupted.`,
} as const;

export async function run(argv: string[]): Promise<number> {
  const parsed = parseCommand(SPEC, argv);
  if (!parsed) return 0;
  const { values } = parsed;
  const { stack, env, agents, errors, connection } = await existingStack(values.stack, "the preview failed");
  if (errors.length > 0) {
    for (const error of errors) process.stderr.write(`${formatDiagnostic(error)}\n`);
    throw new CliError(`${errors.length} error(s) in the agent files; nothing was previewed.`, 1);
  }
  // The program refuses to run without a key; say so as a configuration error, before a preview.
  requireConnection(connection, values.stack);
  const recorder = planRecorder(values.stack, agents);
  await interruptible(
    (text) => process.stderr.write(text),
    (run) => stack.preview({ onEvent: recorder.onEvent, onOutput: run.watch, signal: run.signal }),
  ).catch((error: unknown) => {
    throw (
      lockedStackError(error, values.stack, env, "the same plan command") ?? pulumiFailure("the preview failed", error)
    );
  });
  const plan = recorder.plan();
  const markdown = renderMarkdown(plan);
  if (values.markdown) await write(reportPath(values.markdown), markdown);
  else process.stdout.write(markdown);
  if (values.json) await write(reportPath(values.json), renderJson(plan));
  if (values.markdown) {
    const changed = plan.agents.filter((a) => a.action !== "unchanged").length;
    process.stdout.write(
      `plan for ${values.stack}: ${changed} agent(s) change; written to ${reportPath(values.markdown)}\n`,
    );
  }
  return 0;
}

async function write(file: string, text: string) {
  await mkdir(path.dirname(path.resolve(file)), { recursive: true });
  await writeFile(file, text);
}
