// What smoke and start say when the service does not know versions they called: by agent key, with
// the recovery.
import type { HeldAgent } from "../provider/index.ts";
import { type CallOutcome, unknownVersionCalls } from "../smoke/index.ts";
import { agentsToRecreate, recoveryCommand } from "./recovery.ts";

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
