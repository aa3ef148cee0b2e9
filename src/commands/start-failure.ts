// What a failed `pulumi up` of `start` says, once (Pulumi's log above it already showed the
// progress): each error diagnostic of the update — which agent, what the service said, its request
// id — without JavaScript stack frames, inspected objects or colour codes, and which declared agents
// the stack does not hold.
import type * as pulumi from "@pulumi/pulumi";
import { loadAgents } from "../definitions/index.ts";
import { CliError } from "../errors/index.ts";
import {
  isRegistrationNoise,
  pulumiErrorSummary,
  pulumiLogFilter,
  type Stack,
  stripEscapes,
} from "../workspace/index.ts";
import { stackAgents } from "./stack.ts";

/** Pulumi's error lines, cleaned: no colour codes, no `at …` frames, no "unhandled exception" noise. */
export function cleanErrorLines(text: string): string {
  const seen = new Set<string>();
  let filtered = "";
  const filter = pulumiLogFilter(
    (line) => {
      filtered += line;
    },
    { color: false },
  );
  filter.write(text);
  filter.end();
  return stripEscapes(filtered)
    .split("\n")
    .filter((line) => !/^\s+at\s/.test(line) && !/^\s*(\{|\}|code: |stdout: |stderr: |err\?: )/.test(line))
    .map((line) => line.trimEnd())
    .filter((line) => line.trim() !== "" && !seen.has(line.trim()) && seen.add(line.trim()))
    .join("\n");
}

/** The error diagnostics of an update, from its engine events: `key: message`, each once. */
export function errorDiagnostics() {
  const errors = new Map<string, string>();
  const onEvent = (event: pulumi.automation.EngineEvent) => {
    const diagnostic = event.diagnosticEvent;
    if (diagnostic?.severity !== "error" || isRegistrationNoise(diagnostic.message)) return;
    const key = diagnostic.urn?.split("::").at(-1);
    const message = cleanErrorLines(diagnostic.message).replace(/^error: /, "");
    // The Stack's own "update failed" adds nothing to the resources' errors.
    if (message === "" || /^update failed$/.test(message)) return;
    const line = key && !diagnostic.urn?.includes("pulumi:pulumi:Stack") ? `${key}: ${message}` : message;
    errors.set(line, line);
  };
  return { onEvent, lines: () => [...errors.values()] };
}

/**
 * A failed `pulumi up`: the update's error diagnostics (else the CLI's own lines, cleaned), then
 * which declared agents the stack does not hold.
 */
export async function deployFailure(
  error: unknown,
  context: { stack: Stack; dir: string; stackName: string; diagnostics: string[] },
): Promise<CliError> {
  const missing = await notCreated(context.stack, context.dir, context.stackName).catch(() => "");
  const lines =
    context.diagnostics.length > 0
      ? context.diagnostics.map((line) => `  ${line.replaceAll("\n", "\n  ")}`).join("\n")
      : cleanErrorLines(pulumiErrorSummary(error));
  return new CliError(`pulumi up failed:\n${lines}${missing}`, 3, { cause: error });
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
