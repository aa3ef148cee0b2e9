// What `watch` and `audit` read of a stack before they read the traffic: the agents its state
// holds, its update history (older versions named by key) and its connection; and the local
// simulator's service id where it serves the stack (GET /feedbacks needs one).
import type { HeldAgent } from "../provider/index.ts";
import type { Connection, ProjectContext } from "../settings/index.ts";
import { readHistory, type StackHistory, withPreviousVersions } from "../watch/index.ts";
import { backendError, openSession } from "./session.ts";
import { withSimulatorAdmin } from "./simulator-admin.ts";

export type TrafficStack = {
  agents: Record<string, HeldAgent>;
  history: StackHistory;
  connection: Connection;
};

/** Never creates a stack. */
export async function trafficStack(project: ProjectContext, stackName: string): Promise<TrafficStack> {
  const session = await openSession(stackName, {
    project,
    what: `reading stack ${stackName} failed`,
    readState: true,
  });
  const { agents, previous } = await session.held();
  try {
    const project = (await session.stack.workspace.projectSettings()).name;
    const history = await readHistory({
      backendUrl: session.env.PULUMI_BACKEND_URL,
      project,
      stack: stackName,
      current: agents,
    });
    return { agents, history: withPreviousVersions(history, previous, agents), connection: session.connection };
  } catch (error) {
    throw backendError(`reading stack ${stackName} failed`, error);
  }
}

/** The service id of the local simulator serving a loopback connection (its open health route says it). */
export async function simulatorServiceId(connection: Connection): Promise<string | undefined> {
  if (!connection.loopback || !connection.baseUrl) return undefined;
  return (await withSimulatorAdmin(connection.baseUrl, undefined, (admin) => admin.health()))?.service_id;
}
