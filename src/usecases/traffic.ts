// `watch`'s and `audit`'s workflow: the window and versions file checked → the stack read for what
// it holds (its agents, its update history naming older versions by key, its connection; and the
// local simulator's service id where it serves the stack, for GET /feedbacks) → the window's traffic
// read, stopped by Ctrl+C → the report, and what the run says after it.
import { ConfigError, InterruptedError } from "../errors/index.ts";
import { terminalLines, terminalText } from "../escape/index.ts";
import type { HeldAgent } from "../provider/index.ts";
import { type Report, reportExitCode } from "../results/index.ts";
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
import type { CommandOutcome, RunIO } from "./outcome.ts";
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

/** A traffic read ends with its report (a read stopped part-way throws the InterruptedError). */
export type TrafficOutcome = CommandOutcome<Report> & { report: Report };

/**
 * The stack opened, its connection said, then `read` with the run's interruption: Ctrl+C (or
 * SIGTERM) stops the paged reads and ends the run without a report (the figures of a window read in
 * part would mislead): an InterruptedError. A service failure is the caller's to explain.
 */
async function readStackTraffic<T>(
  request: TrafficRequest,
  io: RunIO,
  read: (traffic: OpenedTraffic, reading: Reading) => Promise<T>,
): Promise<T> {
  const traffic = await openTraffic(request);
  io.useConnection(traffic.connection);
  const stop = io.interruption();
  const resume = { signal: stop.signal, onResume: (line: string) => io.warn(`${line}\n`) };
  try {
    return await read(traffic, { resume, onRetry: io.onRetry });
  } catch (error) {
    if (!stop.signal.aborted) throw error;
    throw new InterruptedError(undefined, "the traffic was not read to the end", { cause: error });
  } finally {
    stop.release();
  }
}

export type AuditRequest = TrafficRequest & {
  /** Code 1 when an agent id this stack never held took calls. */
  failOnUnknown: boolean;
};

/** `audit`: the note after the report names the unknown agent ids when they fail the run. */
export async function auditStack(request: AuditRequest, io: RunIO): Promise<TrafficOutcome> {
  const { failOnUnknown } = request;
  const { result, report } = await readStackTraffic(request, io, (traffic, reading) =>
    auditTraffic(traffic, { failOnUnknown }, reading),
  );
  const code = reportExitCode(report);
  const notes = [];
  if (code === 1) {
    const ids = result.unknown.map((r) => `${r.agent_id} (${r.calls} calls)`).join(", ");
    // The ids are the service's: shown escaped, never obeyed.
    notes.push(`agent-iac audit: agent ids this stack never held took calls: ${terminalText(ids)}\n`);
  }
  return { report, notes, code };
}

export type WatchStackRequest = TrafficRequest & WatchRequest;

/**
 * `watch`: the notes after the report warn of each agent with too little traffic for a verdict,
 * then name each figure that got worse and how to roll back (the report's code 1 says it failed).
 */
export async function watchStack(request: WatchStackRequest, io: RunIO): Promise<TrafficOutcome> {
  const { result, report } = await readStackTraffic(request, io, (traffic, reading) =>
    watchTraffic(traffic, request, reading),
  );
  const notes = result.agents.flatMap((agent) =>
    agent.status.startsWith("not_enough") ? [`warning: ${agent.message}\n`] : [],
  );
  const regressed = result.agents.filter((a) => a.status === "regressed");
  if (regressed.length > 0) {
    const rollback = regressed.flatMap((a) => (a.rollback ? [a.rollback] : []));
    const said = `agent-iac watch: ${regressed.map((a) => a.message).join("\n")}\n`;
    notes.push(terminalLines(rollback.length > 0 ? `${said}\n${rollback.join("\n")}\n` : said));
  }
  return { report, notes, code: reportExitCode(report) };
}
