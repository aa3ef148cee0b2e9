// The one command that restores a stack whose pinned versions the service does not know (its data
// was reset or lost): `pulumi up --replace` of every agent that must be created again. A
// conversational agent's linked procedural agents are created again with it (the service that lost
// the one lost the others, and a link to an agent the service does not know is refused with 400),
// procedural agents first: the order they are created in.
import type { HeldAgent } from "../provider/index.ts";

/** The agents to create again for `keys` (those the service does not know), in dependency order. */
export function agentsToRecreate(held: Record<string, HeldAgent>, keys: Iterable<string>): HeldAgent[] {
  const byId = new Map(Object.values(held).map((a) => [a.id, a]));
  const chosen = new Map<string, HeldAgent>();
  for (const key of keys) {
    const agent = held[key];
    if (!agent) continue;
    chosen.set(agent.key, agent);
    for (const id of agent.postprocess_agents) {
      const linked = byId.get(id);
      if (linked) chosen.set(linked.key, linked);
    }
  }
  const rank = (a: HeldAgent) => (a.kind === "procedural" ? 0 : 1);
  return [...chosen.values()].sort((a, b) => rank(a) - rank(b) || a.key.localeCompare(b.key));
}

/**
 * `pulumi up --yes --stack S --replace 'URN' …` for the agents to create again, shell-quoted; undefined
 * when none of them has a URN.
 */
export function recoveryCommand(
  stackName: string,
  held: Record<string, HeldAgent>,
  keys: Iterable<string>,
): string | undefined {
  const urns = agentsToRecreate(held, keys)
    .map((a) => a.urn)
    .filter(Boolean);
  if (urns.length === 0) return undefined;
  const quote = (text: string) => `'${text.replaceAll("'", `'\\''`)}'`;
  const stack = /^[\w./-]+$/.test(stackName) ? stackName : quote(stackName);
  return `pulumi up --yes --stack ${stack} ${urns.map((urn) => `--replace ${quote(urn)}`).join(" ")}`;
}
