// `agent-iac smoke`: smoke test calls against the version ids the stack holds.
import { mkdir, readFile } from "node:fs/promises";
import path from "node:path";
import { parse } from "yaml";
import { formatDiagnostic, loadAgents } from "../definitions/index.ts";
import { CliError } from "../errors/index.ts";
import { emitReport, type ReportFiles } from "../report/index.ts";
import { requireConnection } from "../settings/index.ts";
import {
  dryRunText,
  estimate,
  estimateLine,
  parseShard,
  planSmoke,
  RecordingError,
  replaySmoke,
  runSmoke,
  type Shard,
} from "../smoke/index.ts";
import { parseCommand, positiveInteger, STACK_FLAG } from "./args.ts";
import { COMPARE_FLAGS, COMPARE_HELP, checkCompareFlags, compareSmoke } from "./compare.ts";
import { checkAccess, unknownVersionsNote } from "./connect.ts";
import { JUDGE_FLAGS, JUDGE_HELP, judgeUsageLine, offlineJudgeSettings, runJudge } from "./judge.ts";
import { finishedCalls, interrupted, interruption, serviceClient, useConnection, withRetryLines } from "./lifecycle.ts";
import { scenarioAgents } from "./scenarios.ts";
import { existingStack, pulumiFailure, stackAgents, staleOutputsNote } from "./stack.ts";

const SPEC = {
  name: "smoke",
  about: `Places a test call for each smoke scenario of the conversational agents in agents/, against the
version ids the stack holds (ca_x@vN: from its state, which after a failed or interrupted update
differs from its outputs; smoke says so), follows each call's event stream and checks what the
agent said and did. A bare report file name is written under reports/. Scenarios may repeat
(iterations with min_pass/pass_rate: passed, flaky or failed) and bound latency (expect.latency);
--dry-run and --max-call-minutes settle the cost before any call; --shard splits a large suite
across CI jobs (\`agent-iac report merge\` joins their JSON reports); --record keeps each call's
events and --replay re-evaluates the current expectations against them offline.`,
  flags: {
    stack: STACK_FLAG,
    agent: { type: "string", multiple: true, arg: "KEY", help: "only this agent" },
    scenario: { type: "string", multiple: true, arg: "NAME", help: "only this scenario" },
    "version-id": { type: "string", arg: "ID", help: "call this version instead of the stack's (with one --agent)" },
    concurrency: { type: "string", default: "4", arg: "N", help: "calls at a time (default: 4)" },
    junit: { type: "string", arg: "FILE", help: "write a JUnit XML report" },
    json: { type: "string", arg: "FILE", help: "write a JSON report (transcripts, tool calls, procedures, timings)" },
    html: { type: "string", arg: "FILE", help: "write a self-contained HTML report (open it in a browser)" },
    live: {
      type: "boolean",
      default: false,
      help: "allow scenarios with livemode: true (calls are test calls otherwise)",
    },
    "allow-unpinned": { type: "boolean", default: false, help: "allow a bare agent id (the released version)" },
    "dry-run": {
      type: "boolean",
      default: false,
      help: "print the calls that would be placed and their worst-case call minutes; place none (with --max-call-minutes: exit 2 when over)",
    },
    "max-call-minutes": {
      type: "string",
      arg: "M",
      help: "refuse (exit 2, before any call) a run whose worst case (Σ iterations × timeout) exceeds M minutes",
    },
    shard: {
      type: "string",
      arg: "I/N",
      help: "place only shard I of N (a stable hash of agent/scenario/iteration); merge with `report merge`",
    },
    record: { type: "string", arg: "DIR", help: "write each call's events and scenario to DIR (JSON Lines)" },
    replay: {
      type: "string",
      arg: "DIR",
      help: "place no call: evaluate the scenarios' current expectations against DIR's recordings",
    },
    ...JUDGE_FLAGS,
    ...COMPARE_FLAGS,
  },
  footer: `connection: the stack's agents:baseUrl (else AGENT_IAC_BASE_URL); the API key from the stack's
secret agents:apiKey (else AGENT_IAC_API_KEY; on a loopback address, the local dev key).
Each retried request is said on stderr.

${JUDGE_HELP}

${COMPARE_HELP}

exit codes: 0 every scenario passed (flaky ones too), 1 a scenario failed its expectations, threshold,
sequential test, pass^k or latency bounds (or its sequential test was inconclusive), 2 usage or
configuration error (unknown agent or scenario, nothing deployed, invalid agent files, a refused API
key, a worst case over --max-call-minutes, judged scenarios and no judge configured), 3 a call could
not complete (service unreachable, stream failed after its retries, timeout) or a judged expectation
could not be judged, 130 interrupted
(the reports still list every planned call).`,
} as const;

function budget(values: { "max-call-minutes"?: string | undefined }): number | undefined {
  const text = values["max-call-minutes"];
  if (text === undefined) return undefined;
  const minutes = Number(text);
  if (!Number.isFinite(minutes) || minutes <= 0) {
    throw new CliError(`--max-call-minutes must be a positive number of minutes, not "${text}"`, 2);
  }
  return minutes;
}

function shardFlag(text: string | undefined): Shard | undefined {
  if (text === undefined) return undefined;
  const shard = parseShard(text);
  if (!shard) throw new CliError(`--shard must be I/N with 1 ≤ I ≤ N (e.g. 2/3), not "${text}"`, 2);
  return shard;
}

/** The report files asked for (src/report puts bare names under reports/). */
function reportFiles(values: { junit?: string | undefined; json?: string | undefined; html?: string | undefined }) {
  const files: ReportFiles = {};
  if (values.junit) files.junit = values.junit;
  if (values.json) files.json = values.json;
  if (values.html) files.html = values.html;
  return files;
}

/** Prints a dry run's calls; refuses (exit 2, before any request) a worst case over the budget. */
function settleBudget(calls: Parameters<typeof estimate>[0], dryRun: boolean, maxMinutes: number | undefined) {
  const cost = estimate(calls);
  if (dryRun) process.stdout.write(dryRunText(calls));
  if (maxMinutes !== undefined && cost.worstCaseMinutes > maxMinutes) {
    throw new CliError(
      `the run's worst case is ${cost.worstCaseMinutes} call minutes${cost.judgeRequests > 0 ? ` and ${cost.judgeRequests} judge request(s)` : ""}, over --max-call-minutes ${maxMinutes}: no call was placed`,
      2,
      {
        hint: "select fewer scenarios (--agent, --scenario), shard the run (--shard I/N), or lower iterations/timeout",
      },
    );
  }
  return cost;
}

/** The stack's agents:dir from its Pulumi.<stack>.yaml (a plain value), else agents/: read without Pulumi. */
async function offlineAgentsDir(stackName: string): Promise<string> {
  const text = await readFile(`Pulumi.${stackName}.yaml`, "utf8").catch(() => "");
  let config: Record<string, unknown> | undefined;
  try {
    config = (parse(text) as { config?: Record<string, unknown> } | null)?.config;
  } catch (error) {
    throw new CliError(`Pulumi.${stackName}.yaml: ${(error as Error).message}`, 2);
  }
  const dir = config?.["agents:dir"];
  return path.resolve(typeof dir === "string" ? dir : "agents");
}

/** `--replay DIR`: the stack's agent files, no stack state and no network. */
async function replay(values: {
  stack: string;
  replay: string;
  "no-judge-cache"?: boolean | undefined;
  "judge-cache"?: string | undefined;
  agent?: string[] | undefined;
  scenario?: string[] | undefined;
  junit?: string | undefined;
  json?: string | undefined;
  html?: string | undefined;
}): Promise<number> {
  const dir = await offlineAgentsDir(values.stack);
  const { agents, errors } = await loadAgents(dir, { stack: values.stack });
  if (errors.length > 0) {
    for (const error of errors) process.stderr.write(`${formatDiagnostic(error)}\n`);
    throw new CliError(`${errors.length} error(s) in the agent files`, 2);
  }
  // No state offline: smoke/<key>.yaml stands for the agents declared in code.
  const definitions = await scenarioAgents({ stackName: values.stack, dir, fromFiles: agents });
  const scenarios = definitions
    .filter((a) => !values.agent?.length || values.agent.includes(a.key))
    .flatMap((a) => a.smoke.map((scenario) => ({ agent: a.key, scenario })))
    .filter((s) => !values.scenario?.length || values.scenario.includes(s.scenario.name));
  const judge = await runJudge(scenarios, await offlineJudgeSettings(values.stack), values, values.stack);
  try {
    const { report } = await replaySmoke({
      definitions,
      dir: values.replay,
      agents: values.agent,
      scenarios: values.scenario,
      stack: values.stack,
      out: process.stdout,
      judge,
    });
    return await emitReport(report, { files: reportFiles(values), out: process.stdout });
  } finally {
    await judge?.client.close();
  }
}

/**
 * The agents smoke can call: the agent files', those of other AgentDirectory folders and those
 * declared in TypeScript (scenarios in smoke/<key>.yaml), with what the stack holds of each.
 */
async function smokeAgents(stackName: string, versionId: string | undefined) {
  const { stack, dir, agents, errors, connection, judge } = await existingStack(stackName, "reading the stack failed");
  if (errors.length > 0) {
    for (const error of errors) process.stderr.write(`${formatDiagnostic(error)}\n`);
    throw new CliError(`${errors.length} error(s) in the agent files`, 2);
  }
  const held = await stackAgents(stack).catch((error: unknown) => {
    throw pulumiFailure("reading the stack's state failed", error);
  });
  if (Object.keys(held.agents).length === 0 && versionId === undefined) {
    throw new CliError(`stack "${stackName}" holds no agents: run \`pulumi up\` (or \`npm start\`) first`, 2);
  }
  if (held.stale.length > 0) process.stderr.write(staleOutputsNote(stackName, held.stale));
  const definitions = await scenarioAgents({ stackName, dir, fromFiles: agents, held });
  return { definitions, held, connection, judge };
}

export async function run(argv: string[]): Promise<number> {
  const parsed = parseCommand(SPEC, argv);
  if (!parsed) return 0;
  const { values } = parsed;
  const concurrency = positiveInteger("concurrency", values.concurrency) ?? 4;
  const comparing = values.compare !== undefined || values["fail-on"] !== undefined || values.alpha !== undefined;
  if (comparing) checkCompareFlags(values);
  const maxMinutes = budget(values);
  const shard = shardFlag(values.shard);
  if (values.replay !== undefined) {
    if (values.record !== undefined || values["dry-run"] || shard) {
      throw new CliError("--replay places no call: it takes no --record, --dry-run or --shard", 2);
    }
    return replay({ ...values, replay: values.replay });
  }
  const { definitions, held, connection, judge: judgeSettings } = await smokeAgents(values.stack, values["version-id"]);
  const selection = {
    agents: values.agent,
    scenarios: values.scenario,
    versionId: values["version-id"],
    allowUnpinned: values["allow-unpinned"],
    live: values.live,
  };
  // The budget is settled before any request: a dry run and a refused run contact nobody.
  const plan = planSmoke(definitions, held.agents, selection, shard);
  const cost = settleBudget(plan.calls, values["dry-run"], maxMinutes);
  if (values["dry-run"]) return 0;
  // A judged run without a judge (or with an untrusted one) stops here, before any request.
  const judge = await runJudge(
    plan.calls.map((c) => ({ agent: c.agent, scenario: c.scenario })),
    judgeSettings,
    values,
    values.stack,
  );
  try {
    return await placeAndReport(values, {
      definitions,
      held,
      connection,
      selection,
      plan,
      cost,
      judge,
      concurrency,
      comparing,
    });
  } finally {
    await judge?.client.close();
  }
}

type Values = NonNullable<ReturnType<typeof parseCommand<typeof SPEC.flags>>>["values"];

async function placeAndReport(
  values: Values,
  context: {
    definitions: Awaited<ReturnType<typeof smokeAgents>>["definitions"];
    held: Awaited<ReturnType<typeof smokeAgents>>["held"];
    connection: Awaited<ReturnType<typeof smokeAgents>>["connection"];
    selection: Parameters<typeof planSmoke>[2];
    plan: ReturnType<typeof planSmoke>;
    cost: ReturnType<typeof estimate>;
    judge: Awaited<ReturnType<typeof runJudge>>;
    concurrency: number;
    comparing: boolean;
  },
): Promise<number> {
  const { definitions, held, connection, selection, plan, cost, judge, concurrency, comparing } = context;
  if (values.record !== undefined) {
    await mkdir(values.record, { recursive: true }).catch((error: NodeJS.ErrnoException) => {
      throw new CliError(`--record ${values.record}: cannot create the directory (${error.code ?? error.message})`, 2);
    });
  }
  if (values.live) process.stdout.write(`${estimateLine(cost)}\n`);
  const resolved = requireConnection(connection, values.stack);
  useConnection(connection);
  await checkAccess(serviceClient(resolved), connection);
  const files = reportFiles(values);
  // Ctrl+C (or SIGTERM) stops the calls: those in flight end as interrupted, the rest as not run,
  // and the reports are still written with every planned call.
  const stop = interruption();
  if (comparing) {
    const context = { agents: definitions, held, resolved, concurrency, files, signal: stop.signal, judge };
    return compareSmoke(values, context).finally(stop.release);
  }
  const { results, report } = await runSmoke({
    definitions,
    outputs: held.agents,
    selection,
    plan,
    ...(values.record ? { recordDir: values.record } : {}),
    stack: values.stack,
    connection: withRetryLines(resolved),
    concurrency,
    files,
    out: process.stdout,
    signal: stop.signal,
    judge,
  })
    .catch((error: unknown) => {
      // The calls are done and the reports written; the recordings directory is the problem.
      if (error instanceof RecordingError) throw new CliError(error.message, 3, { cause: error });
      throw error;
    })
    .finally(stop.release);
  const exitCode = await emitReport(report, { files, out: process.stdout });
  process.stdout.write(judgeUsageLine(judge));
  if (report.interrupted) {
    const calls = report.results;
    throw interrupted({ finished: finishedCalls(calls), total: calls.length, reports: Object.values(files) });
  }
  process.stderr.write(unknownVersionsNote(results, held.agents, values.stack));
  return exitCode;
}
