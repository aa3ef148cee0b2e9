// `agent-iac plan`: a preview rendered for review (Markdown for a pull request, JSON for scripts).
import { writeFile } from "node:fs/promises";
import { formatDiagnostic } from "../definitions/index.ts";
import { planRecorder, renderJson, renderMarkdown } from "../plan/index.ts";
import { pulumiErrorSummary, ToolchainError } from "../workspace/index.ts";
import { parseCommand } from "./args.ts";
import { existingStack, MissingStack } from "./stack.ts";

const HELP = `usage: agent-iac plan [--stack NAME] [--markdown FILE] [--json FILE]

Previews the stack (default: dev) and renders which agents would be created, replaced (and why),
left unchanged or removed, field by field, with prompt changes as unified diffs. Prints the
Markdown unless --markdown is given. Makes no request to the service. The agent files are read
from the stack's agents:dir (default agents), with the stack's overlays merged, as a deploy would.

exit codes: 0 the preview succeeded, 1 the agent files are invalid (file:line errors on stderr),
2 usage or configuration error (e.g. no API key), 3 the preview failed (backend or toolchain
unavailable, program error).
`;

export async function run(argv: string[]): Promise<number> {
  const parsed = parseCommand("plan", HELP, argv, {
    stack: { type: "string", default: "dev" },
    markdown: { type: "string" },
    json: { type: "string" },
  });
  if ("exitCode" in parsed) return parsed.exitCode;
  const { values } = parsed;
  try {
    const { stack, config, agents, errors } = await existingStack(values.stack);
    if (errors.length > 0) {
      for (const error of errors) process.stderr.write(`${formatDiagnostic(error)}\n`);
      process.stderr.write(`${errors.length} error(s) in the agent files; nothing was previewed.\n`);
      return 1;
    }
    // The program refuses to run without a key; say so as a configuration error, before a preview.
    if (config["agents:apiKey"] === undefined && !process.env.AGENT_IAC_API_KEY) {
      process.stderr.write(
        `agent-iac plan: no API key for stack ${values.stack}: set it with \`pulumi config set --secret agents:apiKey\` ` +
          "or the AGENT_IAC_API_KEY environment variable (the plan sends nothing to the service, but the program needs it).\n",
      );
      return 2;
    }
    const recorder = planRecorder(values.stack, agents);
    await stack.preview({ onEvent: recorder.onEvent });
    const plan = recorder.plan();
    const markdown = renderMarkdown(plan);
    if (values.markdown) await writeFile(values.markdown, markdown);
    else process.stdout.write(markdown);
    if (values.json) await writeFile(values.json, renderJson(plan));
    if (values.markdown) {
      const changed = plan.agents.filter((a) => a.action !== "unchanged").length;
      process.stdout.write(`plan for ${values.stack}: ${changed} agent(s) change; written to ${values.markdown}\n`);
    }
    return 0;
  } catch (error) {
    if (error instanceof MissingStack) {
      process.stderr.write(`agent-iac plan: ${error.message}\n`);
      return 2;
    }
    process.stderr.write(`agent-iac plan: the preview failed: ${pulumiErrorSummary(error)}\n`);
    return error instanceof ToolchainError ? error.exitCode : 3;
  }
}
