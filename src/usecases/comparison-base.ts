// What `start` checks of its comparison base before it deploys (issue 41): the pending base
// (.agent-iac/comparison-base.<stack>.json) names only versions the stack holds or held, so a base
// of another stack, or edited, is refused before anything is created.
//
// Where the stack held a version: on a file backend its update history says it. Elsewhere
// (PostgreSQL, S3, Pulumi Cloud: no readable history) the stack's state and its `previous_versions`
// output give what it holds and what its last replace left; and a base carried over several deploys
// (their comparisons never completed) brings what those deploys saw the stack hold — trusted only
// while its record still links to this stack: what it says the stack held after its last deploy is
// what the stack holds now, or left behind since.
import { type BaseRecord, checkPendingBase } from "../compare/index.ts";
import { readHistory } from "../watch/index.ts";
import { backendError, type HeldAgents, type StackSession } from "./session.ts";

/** A ConfigError (exit 2) when the pending base is damaged or names versions the stack never held. */
export async function checkComparisonBase(session: StackSession, held: HeldAgents): Promise<void> {
  const current = new Set(Object.values(held.agents).map((agent) => agent.version_id));
  // Read only when there is a pending base to check (a file backend's history is up to 200 files).
  const everHeld = async (record: BaseRecord) => {
    const history = await stackHistory(session, held);
    if (history.available) return (v: string) => current.has(v) || history.past.has(v);
    const known = new Set([...current, ...Object.values(held.previous)]);
    if (linksToStack(record, held, known)) return (v: string) => known.has(v) || record.heldVersions.includes(v);
    // A stack that holds nothing and recorded no outputs (never deployed) held nothing: only an
    // empty base is its own, so a base naming versions came from elsewhere (a same-named stack).
    if (current.size === 0 && !held.previousRecorded) return (v: string) => known.has(v);
    // Without previous_versions (a stack deployed before it existed) nothing can tell: shape only.
    return held.previousRecorded ? (v: string) => known.has(v) : undefined;
  };
  await checkPendingBase(session.project.stateDir, session.name, everHeld);
}

async function stackHistory(session: StackSession, held: HeldAgents): ReturnType<typeof readHistory> {
  try {
    const project = (await session.stack.workspace.projectSettings()).name;
    return await readHistory({
      backendUrl: session.env.PULUMI_BACKEND_URL,
      project,
      stack: session.name,
      current: held.agents,
    });
  } catch (error) {
    throw backendError(`reading stack ${session.name} failed`, error);
  }
}

/**
 * The base's record describes this stack: of the agents it says the stack held after the base's
 * last deploy, at least one is still held, and each still held has that version now or as its
 * previous one. Another stack's record (its own version ids) fails; so does one whose stack has been
 * deployed twice, outside `start`, since then (the check falls back to the state and outputs).
 */
function linksToStack(record: BaseRecord, held: HeldAgents, known: Set<string>): boolean {
  const still = Object.entries(record.heldAfter ?? {}).filter(([key]) => held.agents[key] !== undefined);
  return still.length > 0 && still.every(([, version]) => known.has(version));
}
