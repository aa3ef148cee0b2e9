// What `watch` and `audit` read of a stack before they read the traffic: the agents its state
// holds, its update history (older versions named by key) and its connection; and the local
// simulator's service id where it serves the stack (GET /feedbacks needs one).
import { ConfigError } from "../errors/index.ts";
import type { HeldAgent } from "../provider/index.ts";
import type { Connection, ProjectContext } from "../settings/index.ts";
import {
  audit,
  auditReport,
  type ResumeOptions,
  readHistory,
  readVersionsFile,
  resolveWindow,
  type StackHistory,
  type WatchInput,
  type Window,
  type WindowFlags,
  watch,
  watchReport,
  withPreviousVersions,
} from "../watch/index.ts";
import { type RetryListener, withStackClient } from "./service-client.ts";
import { backendError, openSession } from "./session.ts";
import { withSimulatorAdmin } from "./simulator-admin.ts";

type TrafficStack = {
  agents: Record<string, HeldAgent>;
  history: StackHistory;
  connection: Connection;
};

/** Never creates a stack. */
async function trafficStack(project: ProjectContext, stackName: string): Promise<TrafficStack> {
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
async function simulatorServiceId(connection: Connection): Promise<string | undefined> {
  if (!connection.loopback || !connection.baseUrl) return undefined;
  return (await withSimulatorAdmin(connection.baseUrl, undefined, (admin) => admin.health()))?.service_id;
}

/** What `watch` and `audit` are asked: the stack, the window's flags and an optional versions file. */
export type TrafficRequest = {
  project: ProjectContext;
  stack: string;
  window: WindowFlags;
  /** A versions file (`pulumi stack output versions --json` saved before the deploy): the comparison base. */
  baseline?: string | undefined;
};

/** The stack's side of a traffic read, ready before any request to the service. */
export type OpenedTraffic = TrafficStack & {
  stack: string;
  window: Window;
  baselineFile: Record<string, string> | undefined;
  now: Date;
};

/** The window and versions file checked first (a usage error costs no Pulumi run), then the stack read. */
export async function openTraffic(request: TrafficRequest): Promise<OpenedTraffic> {
  const now = new Date();
  const window = resolveWindow(request.window, "24h", now);
  const baselineFile = request.baseline ? await readVersionsFile(request.baseline, request.project.dir) : undefined;
  const stack = await trafficStack(request.project, request.stack);
  return { ...stack, stack: request.stack, window, baselineFile, now };
}

/** How the traffic is read: its paged reads resumed (and stopped) by `resume`, each retry told to `onRetry`. */
type Reading = { resume: ResumeOptions; onRetry?: RetryListener | undefined };

/** `audit`: which agent ids took calls in the window, and whose they are. */
export async function auditTraffic(traffic: OpenedTraffic, options: { failOnUnknown: boolean }, reading: Reading) {
  const result = await withStackClient(traffic.connection, traffic.stack, reading.onRetry, (client) =>
    audit({ ...traffic, client, resume: reading.resume }),
  );
  const versions = Object.fromEntries(Object.values(traffic.agents).map((a) => [a.key, a.version_id]));
  return { result, report: auditReport(result, traffic.now, versions, options) };
}

/** Ratings read as negative by `watch` unless its request names others (the interface shows none). */
export const DEFAULT_NEGATIVE_RATINGS = [
  "negative",
  "bad",
  "poor",
  "thumbs_down",
  "thumbsdown",
  "down",
  "dislike",
  "1",
  "2",
];

export type WatchRequest = {
  baselineWindow: WatchInput["baselineWindow"];
  includeTestCalls: boolean;
  /** The service id for GET /feedbacks (default: the local simulator's, where one serves the stack). */
  serviceId?: string | undefined;
  /** Ratings counted as negative feedback (default: DEFAULT_NEGATIVE_RATINGS), any case. */
  negativeRatings?: readonly string[] | undefined;
  thresholds: WatchInput["thresholds"];
};

/** `watch`: each conversational agent's figures in the window against its baseline. */
export async function watchTraffic(traffic: OpenedTraffic, request: WatchRequest, reading: Reading) {
  if (!Object.values(traffic.agents).some((a) => a.kind === "conversational")) {
    throw new ConfigError(
      `stack "${traffic.stack}" holds no conversational agents: run \`pulumi up\` (or \`npm start\`) first`,
    );
  }
  const serviceId = request.serviceId ?? (await simulatorServiceId(traffic.connection));
  const negative = request.negativeRatings?.length ? request.negativeRatings : DEFAULT_NEGATIVE_RATINGS;
  const result = await withStackClient(traffic.connection, traffic.stack, reading.onRetry, (client) =>
    watch({
      ...traffic,
      client,
      resume: reading.resume,
      baselineWindow: request.baselineWindow,
      includeTestCalls: request.includeTestCalls,
      serviceId,
      negativeRatings: new Set(negative.map((r) => r.toLowerCase())),
      thresholds: request.thresholds,
    }),
  );
  return { result, report: watchReport(result, traffic.now) };
}
