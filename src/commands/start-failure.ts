// What a failed `pulumi up` of `start` says: the project's own error lines (which agent, what the
// service said) without JavaScript stack frames or colour codes, and which declared agents the
// stack does not hold.
import { loadAgents } from "../definitions/index.ts";
import { CliError } from "../errors/index.ts";
import { pulumiErrorSummary, type Stack } from "../workspace/index.ts";
import { stackAgents } from "./stack.ts";

// biome-ignore lint/suspicious/noControlCharactersInRegex: ANSI escape sequences start with ESC.
const ANSI = /\u001b\[[0-9;]*[A-Za-z]/g;

/** Pulumi's error lines, cleaned: no colour codes, no `at …` frames, no "unhandled exception" noise. */
export function cleanErrorLines(text: string): string {
  const seen = new Set<string>();
  return text
    .replace(ANSI, "")
    .split("\n")
    .filter((line) => !/^\s+at\s/.test(line) && !/^\s*(\{|\}|code: |stdout: |stderr: |err\?: )/.test(line))
    .map((line) => line.trimEnd())
    .filter((line) => line.trim() !== "" && !seen.has(line.trim()) && seen.add(line.trim()))
    .join("\n");
}

export async function deployFailure(error: unknown, stack: Stack, dir: string, stackName: string): Promise<CliError> {
  const missing = await notCreated(stack, dir, stackName).catch(() => "");
  return new CliError(`pulumi up failed:\n${cleanErrorLines(pulumiErrorSummary(error))}${missing}`, 3, {
    cause: error,
  });
}

/** After a failed up: which declared agents the stack does not hold, and why when it is a link. */
async function notCreated(stack: Stack, dir: string, stackName: string): Promise<string> {
  const { agents } = await loadAgents(dir, { stack: stackName });
  const held = new Set(Object.keys((await stackAgents(stack)).agents));
  const missing = agents.filter((a) => !held.has(a.key));
  if (missing.length === 0) return "";
  const lines = missing.map((agent) => {
    const blocked = agent.postprocessAgents.filter((key) => !held.has(key));
    const why =
      blocked.length > 0
        ? `not attempted: linked procedural agent ${blocked.join(", ")} was not created`
        : "see its error above";
    return `  ${agent.key} (${agent.kind}): ${why}`;
  });
  return `\n\nnot created (${missing.length} of ${agents.length}); run again once the cause is fixed:\n${lines.join("\n")}`;
}
