// What `start` checks of its comparison base before it deploys (issue 41): the pending base
// (.agent-iac/comparison-base.<stack>.json) names only versions the stack holds or held in its
// update history, so a base of another stack, or edited, is refused before anything is created.
import path from "node:path";
import { checkPendingBase } from "../compare/index.ts";
import { readHistory } from "../watch/index.ts";
import { backendError, type HeldAgents, type StackSession } from "./session.ts";

/** A ConfigError (exit 2) when the pending base is damaged or names versions the stack never held. */
export async function checkComparisonBase(session: StackSession, held: HeldAgents): Promise<void> {
  const current = new Set(Object.values(held.agents).map((agent) => agent.version_id));
  let history: Awaited<ReturnType<typeof readHistory>>;
  try {
    const project = (await session.stack.workspace.projectSettings()).name;
    history = await readHistory({
      backendUrl: session.env.PULUMI_BACKEND_URL,
      project,
      stack: session.name,
      current: held.agents,
    });
  } catch (error) {
    throw backendError(`reading stack ${session.name} failed`, error);
  }
  const everHeld = history.available
    ? (version: string) => current.has(version) || history.past.has(version)
    : undefined;
  await checkPendingBase(path.join(process.cwd(), ".agent-iac"), session.name, everHeld);
}
