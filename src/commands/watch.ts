// `agent-iac watch`: live-traffic figures of each conversational agent's current version against
// its previous version (src/watch), with thresholds; exit 1 on a breach, naming the figure and
// how to roll back. Also holds what `audit` shares: the stack, its agents and its history.
import { rm } from "node:fs/promises";
import type { Client } from "../api/index.ts";
import { CliError } from "../errors/index.ts";
import { type HeldAgent, stateAgents } from "../provider/index.ts";
import { emitReport, reportPath } from "../report/index.ts";
import { type Connection, configMapReader, requireConnection, resolveConnection } from "../settings/index.ts";
import { probeSimulator } from "../simulator/index.ts";
import {
  DEFAULT_NEGATIVE_RATINGS,
  type ResumeOptions,
  readHistory,
  readVersionsFile,
  resolveWindow,
  type StackHistory,
  watch,
  watchReport,
} from "../watch/index.ts";
import { openStack, pulumiEnvironment } from "../workspace/index.ts";
import { type Flag, parseCommand, positiveInteger, STACK_FLAG } from "./args.ts";
import { interruptedWhile, interruption, serviceClient, useConnection } from "./lifecycle.ts";
import { pulumiFailure } from "./stack.ts";

export const WINDOW_FLAGS = {
  since: {
    type: "string",
    arg: "DURATION",
    help: "calls created in the last DURATION (30m, 24h, 7d, 1h30m; default 24h)",
  },
  from: { type: "string", arg: "T", help: "calls created at or after T (ISO 8601), instead of --since" },
  to: { type: "string", arg: "T", help: "… and before T (default: now)" },
} as const satisfies Record<string, Flag>;

export const REPORT_FLAGS = {
  json: { type: "string", arg: "FILE", help: "write the JSON report (agent-iac-report, kind watch/audit)" },
  markdown: { type: "string", arg: "FILE", help: "write a Markdown report (e.g. for a job summary)" },
} as const satisfies Record<string, Flag>;

const SPEC = {
  name: "watch",
  about: `Compares each conversational agent's current version (the stack's) with its previous version on
live traffic: calls, failure rate, median and p95 duration, negative feedback and sentiment, and
procedure errors, each with its counts. The previous version comes from --baseline, else the stack's
update history, else another version of the same agent id in the traffic; it is read over the window
of equal length just before (--baseline-window same: the same window). Test calls (livemode: false,
smoke calls) are left out. A bare report file name is written under reports/.`,
  flags: {
    stack: STACK_FLAG,
    ...WINDOW_FLAGS,
    baseline: {
      type: "string",
      arg: "FILE",
      help: "the old versions: `pulumi stack output versions --json` of the previous release, or a smoke JSON report",
    },
    "baseline-window": {
      type: "string",
      default: "previous",
      arg: "previous|same",
      help: "the window of the old versions: the one before (default), or the same one (side by side)",
    },
    "service-id": {
      type: "string",
      arg: "ID",
      help: "the service instance, for feedbacks (GET /feedbacks needs it; the local simulator's is found)",
    },
    "include-test-calls": { type: "boolean", default: false, help: "count test calls (livemode: false) too" },
    "max-failure-rate-increase": {
      type: "string",
      default: "5",
      arg: "POINTS",
      help: "fail when the failure rate rises by more (percentage points; default 5)",
    },
    "max-negative-feedback-increase": {
      type: "string",
      default: "10",
      arg: "POINTS",
      help: "fail when the share of negative feedback rises by more (percentage points; default 10)",
    },
    "min-calls": {
      type: "string",
      default: "20",
      arg: "N",
      help: "fewer finished calls on a side: no verdict, a warning (default 20)",
    },
    "negative-rating": {
      type: "string",
      multiple: true,
      arg: "RATING",
      help: `a feedback rating that counts as negative (default: ${DEFAULT_NEGATIVE_RATINGS.join(", ")})`,
    },
    ...REPORT_FLAGS,
  },
  footer: `connection: the stack's agents:baseUrl and agents:apiKey, else AGENT_IAC_BASE_URL and
AGENT_IAC_API_KEY; on a loopback address (the dev stack), the local dev key. Lists are read with
their created_at filters, page by page; a page the client gave up on after its retries (429, 5xx)
is read again from its cursor, up to 3 times.

exit codes: 0 no figure got worse than allowed (also: not enough traffic, with a warning), 1 a
figure got worse than allowed (the message names it and how to roll back), 2 usage or
configuration error, 3 the service or the backend failed.`,
} as const;

export type TrafficStack = {
  agents: Record<string, HeldAgent>;
  history: StackHistory;
  connection: Connection;
};

/** The stack's agents (from its state), its update history and its connection; never creates a stack. */
export async function trafficStack(stackName: string): Promise<TrafficStack> {
  const env = pulumiEnvironment();
  try {
    const stack = await openStack({ stackName, workDir: process.cwd(), create: false, env });
    const config = await stack.getAllConfig();
    const agents = stateAgents((await stack.exportStack()).deployment);
    const project = (await stack.workspace.projectSettings()).name;
    const history = await readHistory({
      backendUrl: env.PULUMI_BACKEND_URL,
      project,
      stack: stackName,
      current: agents,
    });
    return { agents, history, connection: resolveConnection(configMapReader(config)) };
  } catch (error) {
    throw pulumiFailure(`reading stack ${stackName} failed`, error);
  }
}

/**
 * Runs `body` with a client for the stack's service and the resume options of its paged reads;
 * Ctrl+C (or SIGTERM) stops the reads and ends the run (exit 130) without a report: the figures of
 * a window read in part would mislead, so report files from an earlier run are removed, not kept.
 * A service failure is explained by the command lifecycle (exit 3).
 */
export async function withTrafficClient(
  connection: Connection,
  stackName: string,
  files: { json?: string | undefined; markdown?: string | undefined },
  body: (client: Client, resume: ResumeOptions) => Promise<number>,
): Promise<number> {
  useConnection(connection);
  const client = serviceClient(requireConnection(connection, stackName));
  const stop = interruption();
  try {
    return await body(client, {
      signal: stop.signal,
      onResume: (line: string) => process.stderr.write(`${line}\n`),
    });
  } catch (error) {
    if (!stop.signal.aborted) throw error;
    const stale = [files.json, files.markdown].flatMap((file) => (file ? [reportPath(file)] : []));
    await Promise.all(stale.map((file) => rm(file, { force: true })));
    const removed = stale.length > 0 ? `; no report written (${stale.join(", ")} removed: not this run's)` : "";
    throw interruptedWhile(`the traffic was not read to the end${removed}`);
  } finally {
    stop.release();
  }
}

/** The report files of watch and audit (src/report puts a bare name under reports/). */
export function trafficFiles(values: { json?: string | undefined; markdown?: string | undefined }) {
  return { ...(values.json ? { json: values.json } : {}), ...(values.markdown ? { markdown: values.markdown } : {}) };
}

/** Percentage points from a flag ("5", "5%", "2.5") as a fraction. */
function points(flag: string, value: string): number {
  const n = Number(value.trim().replace(/%$/, ""));
  if (!Number.isFinite(n) || n < 0 || n > 100) {
    throw new CliError(`--${flag} must be percentage points between 0 and 100 (e.g. 5), not "${value}"`, 2);
  }
  return n / 100;
}

async function serviceIdOf(given: string | undefined, connection: Connection): Promise<string | undefined> {
  if (given) return given;
  if (!connection.loopback || !connection.baseUrl) return undefined;
  // The local simulator says its service id on its health route (no key needed).
  return (await probeSimulator(connection.baseUrl))?.service_id;
}

export async function run(argv: string[]): Promise<number> {
  const parsed = parseCommand(SPEC, argv);
  if (!parsed) return 0;
  const { values } = parsed;
  const now = new Date();
  const window = resolveWindow(values, "24h", now);
  const mode = values["baseline-window"];
  if (mode !== "previous" && mode !== "same") {
    throw new CliError(`--baseline-window must be previous or same, not "${mode}"`, 2);
  }
  const thresholds = {
    maxFailureRateIncrease: points("max-failure-rate-increase", values["max-failure-rate-increase"]),
    maxNegativeFeedbackIncrease: points("max-negative-feedback-increase", values["max-negative-feedback-increase"]),
    minCalls: positiveInteger("min-calls", values["min-calls"]) ?? 20,
  };
  const baselineFile = values.baseline ? await readVersionsFile(values.baseline) : undefined;
  const { agents, history, connection } = await trafficStack(values.stack);
  if (!Object.values(agents).some((a) => a.kind === "conversational")) {
    throw new CliError(
      `stack "${values.stack}" holds no conversational agents: run \`pulumi up\` (or \`npm start\`) first`,
      2,
    );
  }
  return withTrafficClient(connection, values.stack, values, async (client, resume) => {
    const serviceId = await serviceIdOf(values["service-id"], connection);
    const negative = values["negative-rating"]?.length ? values["negative-rating"] : DEFAULT_NEGATIVE_RATINGS;
    const result = await watch({
      client,
      stack: values.stack,
      agents,
      baselineFile,
      history,
      window,
      baselineWindow: mode,
      includeTestCalls: values["include-test-calls"],
      serviceId,
      negativeRatings: new Set(negative.map((r) => r.toLowerCase())),
      thresholds,
      resume,
      now,
    });
    await emitReport(watchReport(result, now), { files: trafficFiles(values), out: process.stdout });
    for (const agent of result.agents) {
      if (agent.status.startsWith("not_enough")) process.stderr.write(`warning: ${agent.message}\n`);
    }
    const regressed = result.agents.filter((a) => a.status === "regressed");
    if (regressed.length > 0) {
      throw new CliError(regressed.map((a) => a.message).join("\n"), 1, {
        hint: regressed.flatMap((a) => (a.rollback ? [a.rollback] : [])).join("\n"),
      });
    }
    return 0;
  });
}
