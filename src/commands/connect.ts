// What the commands that talk to the service share: the errors of a connection said in the
// project's words, and what to do about versions the service does not know (the client itself
// comes from the command lifecycle, ./lifecycle.ts).
import { AuthenticationError, ConnectionError } from "../api/index.ts";
import { CliError } from "../errors/index.ts";
import type { HeldAgent } from "../provider/index.ts";
import { terminalText } from "../render/index.ts";
import type { Connection } from "../settings/index.ts";
import { type CallOutcome, unknownVersionCalls } from "../smoke/index.ts";
import { agentsToRecreate, recoveryCommand } from "../usecases/index.ts";

/** A connection failure or a refused key, with what to do about it; anything else unchanged. */
export function explainServiceError(error: unknown, connection: Connection): unknown {
  if (error instanceof ConnectionError && !error.requestSent && connection.loopback) {
    return new CliError(`nothing answers at ${connection.baseUrl} (${error.code ?? "connection failed"})`, 3, {
      cause: error,
      hint: "start the local simulator in another terminal with `npm run service` (or run `npm start`, which starts its own)",
    });
  }
  if (error instanceof AuthenticationError) {
    return new CliError(
      `the service refused the API key from ${connection.keySource ?? "nowhere"}: ${terminalText(error.message)}`,
      2,
      {
        cause: error,
        hint: "check the stack's secret agents:apiKey or AGENT_IAC_API_KEY",
      },
    );
  }
  return error;
}

/** Calls that failed because the service does not know the pinned version: by agent key, with the recovery. */
export function unknownVersionsNote(
  results: readonly { agent: string; versionId: string; outcome: CallOutcome }[],
  agents: Record<string, HeldAgent>,
  stack: string,
): string {
  const unknown = new Map<string, string>();
  const given = new Map<string, string>();
  for (const result of unknownVersionCalls(results)) {
    // A version the stack does not pin (--version-id) is a wrong id, not lost data.
    if (agents[result.agent]?.version_id === result.versionId) unknown.set(result.agent, result.versionId);
    else given.set(result.agent, result.versionId);
  }
  const notes = [...given].map(([key, version]) => {
    const pinned = agents[key]?.version_id;
    return (
      `\n${version} is not one of the versions stack ${stack} pins${pinned ? ` (it pins ${key} at ${pinned})` : ""}: ` +
      `smoke called it as given (--version-id) and the service answered 404, it does not know that version. ` +
      `Check the id: \`pulumi stack output versions --stack ${stack}\` lists the stack's; older versions of an agent stay callable.\n`
    );
  });
  if (unknown.size === 0) return notes.join("");
  const lines = [...unknown].map(([key, version]) => `  ${key}: ${version}`);
  const recreate = agentsToRecreate(agents, unknown.keys());
  const linked = recreate.filter((a) => !unknown.has(a.key)).map((a) => a.key);
  const command = recoveryCommand(stack, agents, unknown.keys());
  return (
    notes.join("") +
    `\nthe service does not know ${unknown.size === 1 ? "a version" : "versions"} that stack ${stack} pins ` +
    "(its data was reset or replaced, e.g. another simulator wrote the same data file, or agents:baseUrl points at " +
    "another service than the one that created them):\n" +
    `${lines.join("\n")}\n` +
    "If the stack points at the wrong service, point it at the right one (`pulumi config set agents:baseUrl …`); " +
    `if this service is the right one, create ${recreate.length === 1 ? "the agent" : `these ${recreate.length} agents`} again` +
    `${linked.length > 0 ? ` (with the procedural agents linked to them: ${linked.join(", ")})` : ""}, then smoke again:\n` +
    `${command ? `  ${command}\n` : ""}`
  );
}
