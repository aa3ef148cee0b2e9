// `agent-iac start` (`npm start`), the main job: provision agents/ with `pulumi up` on the dev
// stack and smoke-call the versions it created. Where the stack points at a loopback address (the
// dev stack does), a simulator already serving that address is used as it is; otherwise the
// embedded simulator serves this run on a free port, persisting its data in .agent-iac/, and the
// run uses a copy of the stack's config file with that address.
import { mkdir, readFile, writeFile } from "node:fs/promises";
import path from "node:path";
import type * as pulumi from "@pulumi/pulumi";
import { parseDocument } from "yaml";
import { consumeBase, recordDeployBase, runCompare } from "../compare/index.ts";
import { type AgentDefinition, formatDiagnostic, loadAgents } from "../definitions/index.ts";
import { AgentIacError, CliError, InterruptedError } from "../errors/index.ts";
import type { Judge } from "../judge/index.ts";
import { AGENT_TYPE_PREFIX, type HeldAgent } from "../provider/index.ts";
import { emitReport, type Report, writeJsonFile } from "../report/index.ts";
import {
  configMapReader,
  type JudgeSettings,
  policyPackOptions,
  type ResolvedConnection,
  requireConnection,
  resolveConnection,
  resolveJudge,
} from "../settings/index.ts";
import { readSimulatorLock, startSimulator } from "../simulator/index.ts";
import { runSmoke } from "../smoke/index.ts";
import {
  ensurePulumi,
  interruptible,
  lockedStackError,
  openStack,
  pulumiEnvironment,
  pulumiLogFilter,
  type Stack,
} from "../workspace/index.ts";
import { parseCommand, STACK_FLAG } from "./args.ts";
import { unknownVersionsNote } from "./connect.ts";
import { runJudge } from "./judge.ts";
import { finishedCalls, interrupted, interruption, onInterrupt, withRetryLines } from "./lifecycle.ts";
import { scenarioAgents } from "./scenarios.ts";
import { describeSimulator, foreignSimulatorError, simulatorIdentity, unknownAgents } from "./simulator-identity.ts";
import { pulumiFailure, stackAgents, staleOutputsNote } from "./stack.ts";
import { deployFailure, errorDiagnostics } from "./start-failure.ts";

const SPEC = {
  name: "start",
  about: `Runs \`pulumi up --yes\` for agents/ on the stack, prints the agents and their version ids, then
places the smoke scenarios against those versions. When the stack's agents:baseUrl is a loopback
address (as in the dev stack), a simulator already serving it (\`npm run service\`) is used;
otherwise the local simulator serves the run on a free port (its data in .agent-iac/simulator.json)
with the local dev key. Ctrl+C (or SIGTERM) cancels the Pulumi run cleanly: the operations in
flight finish and the stack is left unlocked.`,
  flags: {
    stack: STACK_FLAG,
    "no-smoke": { type: "boolean", default: false, help: "provision only; place no smoke calls" },
  },
  footer: `exit codes: 0 done, 1 a smoke expectation failed, 2 usage or configuration error,
3 the service or the backend failed (including a failed \`pulumi up\`), 130 interrupted.`,
} as const;

type Simulator = Awaited<ReturnType<typeof startSimulator>>;

export async function run(argv: string[]): Promise<number> {
  const parsed = parseCommand(SPEC, argv);
  if (!parsed) return 0;
  const { values } = parsed;
  const workDir = process.cwd();
  const stackName = values.stack;
  await ensurePulumi();
  const env = pulumiEnvironment();
  const { stack, config } = await openStack({ stackName, workDir, env })
    .then(async (stack) => ({ stack, config: await stack.getAllConfig() }))
    .catch((error: unknown) => {
      throw pulumiFailure(`opening stack ${stackName} failed`, error);
    });
  const dir = path.resolve(workDir, config["agents:dir"]?.value ?? "agents");
  let simulator: Simulator | undefined;
  // From here a signal stops this run cleanly, whatever its phase: up, smoke or compare.
  const stop = interruption();
  try {
    const service = await serviceFor(resolveConnection(configMapReader(config)), workDir, stackName);
    simulator = service.simulator;
    // The versions before the deploy, from the up's own steps: after it, each scenario also runs on its old version.
    const before = versionsBefore(stackName);
    process.stdout.write(`pulumi up --yes (stack ${stackName})\n`);
    const terminal = Boolean(process.stdout.isTTY);
    const log = pulumiLogFilter((text) => process.stdout.write(text), { color: terminal });
    const failures = errorDiagnostics();
    if (stop.signal.aborted) {
      // A signal before the up: nothing was deployed, and the reports still say so for this run.
      const notStarted = new InterruptedError(undefined, "the Pulumi run was not started");
      const context = { stack, dir, stackName, connection: service.connection };
      throw values["no-smoke"] ? notStarted : await interruptedDuringUp(notStarted, context);
    }
    const up = await interruptible(
      (text) => log.write(text),
      (run) =>
        stack.up({
          ...(service.configFile ? { configFile: service.configFile } : {}),
          ...policyPackOptions(configMapReader(config), workDir),
          onOutput: run.onOutput,
          onEvent: (event) => {
            before.onEvent(event);
            failures.onEvent(event);
          },
          signal: run.signal,
          color: terminal ? "always" : "never",
        }),
      onInterrupt,
    )
      .finally(() => log.end())
      .catch(async (error: unknown) => {
        // A failed or interrupted up may have replaced agents: the base from before it stays pending.
        await before.save().catch(() => undefined);
        if (error instanceof InterruptedError && !values["no-smoke"]) {
          throw await interruptedDuringUp(error, { stack, dir, stackName, connection: service.connection });
        }
        if (error instanceof AgentIacError) throw error;
        const diagnostics = failures.lines();
        throw (
          lockedStackError(error, stackName, env, "npm start") ??
          (await deployFailure(error, { stack, dir, stackName, diagnostics }))
        );
      });
    const base = await before.save();
    // What the stack holds now (its state): the table, and the versions the smoke calls pin.
    const held = await stackAgents(stack).catch((error: unknown) => {
      throw pulumiFailure("reading the stack's state failed", error);
    });
    const changes = Object.entries(up.summary.resourceChanges ?? {}).filter(([op, n]) => op !== "same" && n > 0);
    process.stdout.write(
      `\n${changes.length === 0 ? "No changes." : "Changes applied."}\n${agentTable(held.agents)}\n`,
    );
    if (values["no-smoke"]) return 0;
    if (service.reused) await checkReusedSimulator(held.agents, service.connection, stackName);
    const judgeSettings = resolveJudge(configMapReader(config));
    const smoke = { held, dir, stackName, connection: service.connection, signal: stop.signal, judgeSettings };
    const { exitCode, report, files, conversations } = await smokeAfterUp(smoke, base);
    if (stop.signal.aborted) {
      const calls = report.results;
      const phase = "after `pulumi up` completed: the agents are deployed";
      throw interrupted({ finished: finishedCalls(calls), total: calls.length, reports: files, phase });
    }
    // Only a comparison that completed (whatever it found) consumes the base; 3 or 130 keep it.
    if (exitCode === 0 || exitCode === 1) await consumeBase(path.join(workDir, ".agent-iac"), stackName);
    if (service.simulator || service.reused) await reportFailedDeliveries(service.connection, conversations);
    return exitCode;
  } finally {
    stop.release();
    // Last: the Pulumi run (and its provider) has stopped using it by now.
    await simulator?.close();
  }
}

/** A reused simulator must hold the agents the stack pins; otherwise say whose it probably is. */
async function checkReusedSimulator(
  held: Record<string, HeldAgent>,
  connection: ResolvedConnection,
  stackName: string,
) {
  const missing = await unknownAgents(connection.baseUrl, connection.apiKey, held);
  if (missing.length === 0) return;
  const identity = await simulatorIdentity(connection.baseUrl, connection.apiKey);
  throw foreignSimulatorError({ baseUrl: connection.baseUrl, identity, missing, held, stackName });
}

type Service = { connection: ResolvedConnection; simulator?: Simulator; reused?: boolean; configFile?: string };

/**
 * The procedures' post_url deliveries that failed during this run's calls (of its conversations
 * only: a simulator holds earlier runs' and seeded traffic's too), from the simulator's own list
 * (on stderr: stdout ends with smoke's "N passed, N failed"). A delivery is the procedural agent's
 * output reaching its hook; the procedure itself still completes, so nothing else says so.
 */
async function reportFailedDeliveries(connection: ResolvedConnection, conversations: Set<string>): Promise<void> {
  const response = await fetch(new URL("_simulator/deliveries", `${connection.baseUrl.replace(/\/$/, "")}/`), {
    headers: { authorization: `Bearer ${connection.apiKey}` },
    signal: AbortSignal.timeout(5000),
  }).catch(() => undefined);
  if (!response?.ok) return;
  const body = (await response.json().catch(() => undefined)) as
    | {
        deliveries?: {
          procedure_id: string;
          conversation_id?: string;
          url: string;
          ok: boolean;
          status?: number | null;
          error?: string | null;
        }[];
      }
    | undefined;
  const ours = (body?.deliveries ?? []).filter((d) => d.conversation_id && conversations.has(d.conversation_id));
  const failed = ours.filter((d) => !d.ok);
  if (failed.length === 0) return;
  const lines = failed.slice(0, 10).map((d) => `  ${d.procedure_id} → ${d.url}: ${d.error ?? `HTTP ${d.status}`}`);
  const more = failed.length > 10 ? [`  … and ${failed.length - 10} more (GET /_simulator/deliveries)`] : [];
  process.stderr.write(
    `post_url deliveries: ${failed.length} of ${ours.length} failed (this run's procedures, which still completed):\n${[...lines, ...more].join("\n")}\n`,
  );
}

async function serviceFor(
  connection: ReturnType<typeof resolveConnection>,
  workDir: string,
  stackName: string,
): Promise<Service> {
  if (connection.baseUrl && !connection.loopback) return { connection: requireConnection(connection, stackName) };
  const stateDir = path.join(workDir, ".agent-iac");
  const dataFile = path.join(stateDir, "simulator.json");
  if (connection.baseUrl && (await runningSimulator(connection.baseUrl, connection.apiKey, dataFile))) {
    const identity = await simulatorIdentity(connection.baseUrl, connection.apiKey);
    process.stdout.write(
      `using the simulator already serving ${connection.baseUrl} (${describeSimulator(identity)})\n`,
    );
    return { connection: requireConnection(connection, stackName), reused: true };
  }
  await mkdir(stateDir, { recursive: true });
  const simulator = await startSimulator({
    port: 0,
    dataFile,
    ...(connection.apiKey ? { apiKey: connection.apiKey } : {}),
    quiet: true,
  });
  process.stdout.write(
    `local simulator: ${simulator.url} (service id ${simulator.serviceId}, this process ${process.pid}, data file ${path.relative(workDir, dataFile)})\n`,
  );
  const configFile = await runConfigFile(workDir, stateDir, stackName, simulator.url);
  return { connection: { baseUrl: simulator.url, apiKey: simulator.apiKey }, simulator, configFile };
}

/**
 * Whether a simulator already serves `baseUrl` (e.g. `npm run service` in another terminal): then
 * start uses it instead of starting a second one on the same data file. A simulator that holds
 * `dataFile` (its lock names the process and address) at another address is an error: a second
 * simulator on the file would be refused, and the stack would deploy to an address nobody serves.
 */
export async function runningSimulator(baseUrl: string, apiKey: string | undefined, dataFile: string) {
  const holder = await readSimulatorLock(dataFile);
  if (holder?.url && new URL(holder.url).host !== new URL(baseUrl).host) {
    throw new CliError(
      `${path.relative(process.cwd(), dataFile)} is held by the simulator of process ${holder.pid} at ${holder.url}, not at the stack's address ${baseUrl}`,
      2,
      {
        hint: `stop that simulator, or serve the stack's address: npm run service -- --port ${new URL(baseUrl).port || 80} --data ${path.relative(process.cwd(), dataFile)}`,
      },
    );
  }
  const response = await fetch(new URL("_simulator/info", baseUrl.endsWith("/") ? baseUrl : `${baseUrl}/`), {
    headers: apiKey ? { authorization: `Bearer ${apiKey}` } : {},
    signal: AbortSignal.timeout(2000),
  }).catch(() => undefined);
  if (!response) return false;
  await response.body?.cancel();
  if (response.status === 401 || response.status === 403) {
    throw new CliError(`the simulator serving ${baseUrl} refuses the stack's API key`, 2, {
      hint: "give it the same key (AGENT_IAC_API_KEY when starting `npm run service`), or stop it",
    });
  }
  return response.ok;
}

/**
 * The version each agent had before this deploy, read from the old state of the update's steps (no
 * extra Pulumi run; {} for a new stack). `save` returns the comparison base — the versions before
 * the first deploy not yet compared (src/compare/old-versions.ts) — and writes it to
 * reports/old-versions.json for a later `smoke --compare`.
 */
function versionsBefore(stackName: string) {
  const versions: Record<string, string> = {};
  const seen = new Set<string>();
  const onEvent = (event: pulumi.automation.EngineEvent) => {
    const metadata = event.resourcePreEvent?.metadata;
    if (!metadata?.type.startsWith(AGENT_TYPE_PREFIX)) return;
    const old = metadata.old?.outputs?.versionId;
    const key = metadata.urn.split("::").at(-1) ?? "";
    seen.add(key);
    if (typeof old === "string" && metadata.op !== "delete") versions[key] ??= old;
  };
  let saved: Promise<Record<string, string>> | undefined;
  const save = () => {
    saved ??= (async () => {
      const { versions: base, carried } = await recordDeployBase(path.join(process.cwd(), ".agent-iac"), stackName, {
        versions,
        seen: [...seen],
      });
      if (carried) {
        process.stdout.write(
          `comparison base: the versions from before the deploy of ${carried}, whose comparison never completed (interrupted, failed or not run)\n`,
        );
      }
      await writeJsonFile("old-versions.json", base);
      return base;
    })();
    return saved;
  };
  return { onEvent, save };
}

type SmokePhase = {
  /** The agents the stack holds after the up. */
  held: Awaited<ReturnType<typeof stackAgents>>;
  dir: string;
  stackName: string;
  connection: ResolvedConnection;
  /** Aborted by SIGINT/SIGTERM: the calls stop, and the reports still hold every call. */
  signal: AbortSignal;
  judgeSettings: JudgeSettings;
};

/** The smoke reports of `start`, always rewritten by the run (never left from an earlier one). */
const START_REPORTS = { junit: "smoke.junit.xml", json: "smoke.json", html: "smoke.html" } as const;

type SmokeOutcome = { exitCode: number; report: Report; files: string[]; conversations: Set<string> };

async function smokeAfterUp(phase: SmokePhase, before: Record<string, string>): Promise<SmokeOutcome> {
  const { held, dir, stackName } = phase;
  const { agents: fromFiles, errors } = await loadAgents(dir, { stack: stackName });
  if (errors.length > 0) throw new CliError(errors.map(formatDiagnostic).join("\n"), 1);
  const agents = await scenarioAgents({ stackName, dir, fromFiles, held });
  // Judged scenarios without a judge stop here (exit 2), before any smoke call.
  const scenarios = agents.flatMap((a) => a.smoke.map((scenario) => ({ agent: a.key, scenario })));
  const judge = await runJudge(scenarios, phase.judgeSettings, {}, stackName);
  try {
    return await smokeCalls(agents, phase, before, judge);
  } finally {
    await judge?.client.close();
  }
}

async function smokeCalls(
  agents: AgentDefinition[],
  phase: SmokePhase,
  before: Record<string, string>,
  judge: Judge | undefined,
): Promise<SmokeOutcome> {
  const { held, stackName, signal } = phase;
  if (held.stale.length > 0) process.stderr.write(staleOutputsNote(stackName, held.stale));
  const common = {
    definitions: agents,
    outputs: held.agents,
    selection: {},
    connection: withRetryLines(phase.connection),
    concurrency: 4,
    stack: stackName,
    out: process.stdout,
    signal,
    judge,
  };
  const emit = async (report: Report, results: { conversationId?: string | null | undefined }[]) => {
    // Bare names: src/report writes them under reports/.
    const exitCode = await emitReport(report, { files: START_REPORTS, out: process.stdout });
    const files = Object.values(START_REPORTS).map((file) => path.join("reports", file));
    return { exitCode, report, files, conversations: conversationsOf(results) };
  };
  if (Object.keys(before).length > 0) {
    process.stdout.write("\nsmoke calls against the pinned versions, compared with the versions before this deploy:\n");
    const compared = await runCompare({ ...common, old: { versions: before, source: "outputs" }, failOn: "failure" });
    const newResults = compared.scenarios.flatMap((s) => s.newResults);
    const outcome = await emit(
      compared.report,
      compared.scenarios.flatMap((s) => [...s.newResults, ...(s.oldResults ?? [])]),
    );
    if (!signal.aborted) process.stderr.write(unknownVersionsNote(newResults, held.agents, stackName));
    return outcome;
  }
  process.stdout.write(
    "\nsmoke calls against the pinned versions (first deploy: no versions before it to compare with, plain smoke):\n",
  );
  const { results, report } = await runSmoke({ ...common, files: START_REPORTS });
  const outcome = await emit(report, results);
  if (!signal.aborted) process.stderr.write(unknownVersionsNote(results, held.agents, stackName));
  return outcome;
}

const conversationsOf = (results: { conversationId?: string | null | undefined }[]) =>
  new Set(results.flatMap((r) => (r.conversationId ? [r.conversationId] : [])));

/**
 * `pulumi up` was cancelled: the smoke reports of this run list every scenario the agent files
 * declare as not run (pinned to what the stack holds, where it holds the agent), replacing an
 * earlier run's; then the one line.
 */
async function interruptedDuringUp(
  error: InterruptedError,
  phase: Pick<SmokePhase, "dir" | "stackName" | "connection"> & { stack: Stack },
): Promise<CliError | InterruptedError> {
  const { agents, errors } = await loadAgents(phase.dir, { stack: phase.stackName });
  const held = errors.length > 0 ? undefined : await stackAgents(phase.stack).catch(() => undefined);
  const files = START_REPORTS;
  const cancelled = error.what;
  if (!held) return error;
  const outputs = Object.fromEntries(
    agents.map((a): [string, HeldAgent] => {
      const missing = { key: a.key, id: "", version_id: "(not created)", name: a.name, urn: "" };
      return [a.key, held.agents[a.key] ?? { ...missing, kind: a.kind, postprocess_agents: [] }];
    }),
  );
  const selection = { allowUnpinned: true, live: true };
  let report: Awaited<ReturnType<typeof runSmoke>>["report"];
  try {
    const stopped = AbortSignal.abort(new Error("interrupted during pulumi up"));
    const quiet = { write: () => true };
    ({ report } = await runSmoke({
      definitions: agents,
      outputs,
      selection,
      connection: phase.connection,
      concurrency: 1,
      stack: phase.stackName,
      files,
      out: quiet,
      signal: stopped,
    }));
  } catch {
    return error; // nothing to plan (no scenarios): the Pulumi run's own line
  }
  const calls = report.results;
  return interrupted({
    finished: finishedCalls(calls),
    total: calls.length,
    reports: Object.values(files).map((file) => path.join("reports", file)),
    phase: cancelled,
  });
}

/** A copy of the stack's config file with agents:baseUrl pointing at this run's simulator. */
async function runConfigFile(workDir: string, stateDir: string, stackName: string, baseUrl: string): Promise<string> {
  const source = path.join(workDir, `Pulumi.${stackName}.yaml`);
  const document = parseDocument(await readFile(source, "utf8").catch(() => "config: {}\n"));
  document.setIn(["config", "agents:baseUrl"], baseUrl);
  const target = path.join(stateDir, `Pulumi.${stackName}.run.yaml`);
  await writeFile(target, document.toString());
  return target;
}

function agentTable(outputs: Record<string, HeldAgent>): string {
  const rows = Object.entries(outputs).map(([key, agent]) => [key, agent.kind, agent.version_id, agent.name]);
  const header = ["agent", "kind", "version id", "name"];
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((row) => String(row[i]).length)));
  const line = (cells: string[]) =>
    cells
      .map((cell, i) => cell.padEnd(widths[i] ?? 0))
      .join("  ")
      .trimEnd();
  return [line(header), line(widths.map((w) => "-".repeat(w))), ...rows.map(line)].join("\n");
}
