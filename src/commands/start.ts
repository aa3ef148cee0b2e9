// `agent-iac start` (`npm start`), the main job: provision agents/ with `pulumi up` on the dev
// stack and smoke-call the versions it created. Where the stack points at a loopback address (the
// dev stack does), a simulator already serving that address is used as it is; otherwise the
// embedded simulator serves this run on a free port, persisting its data in .agent-iac/, and the
// run uses a copy of the stack's config file with that address.
import { mkdir, readFile, writeFile } from "node:fs/promises";
import path from "node:path";
import type * as pulumi from "@pulumi/pulumi";
import { parseDocument } from "yaml";
import { runCompare } from "../compare/index.ts";
import { formatDiagnostic, loadAgents } from "../definitions/index.ts";
import { CliError } from "../errors/index.ts";
import { AGENT_TYPE_PREFIX } from "../provider/index.ts";
import type { ReportFiles } from "../report/index.ts";
import {
  configMapReader,
  policyPackOptions,
  type ResolvedConnection,
  requireConnection,
  resolveConnection,
} from "../settings/index.ts";
import { readSimulatorLock, startSimulator } from "../simulator/index.ts";
import { runSmoke } from "../smoke/index.ts";
import {
  ensurePulumi,
  interruptible,
  lockedStackError,
  openStack,
  pulumiEnvironment,
  type Stack,
} from "../workspace/index.ts";
import { parseCommand, STACK_FLAG } from "./args.ts";
import { printRetry, unknownVersionsNote } from "./connect.ts";
import { type AgentOutput, pulumiFailure, stackAgents, staleOutputsNote } from "./stack.ts";
import { deployFailure } from "./start-failure.ts";

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
  try {
    const service = await serviceFor(resolveConnection(configMapReader(config)), workDir, stackName);
    simulator = service.simulator;
    // The versions before the deploy, from the up's own steps: after it, each scenario also runs on its old version.
    const before = versionsBefore();
    process.stdout.write(`pulumi up --yes (stack ${stackName})\n`);
    const up = await interruptible(
      (text) => process.stdout.write(text),
      (run) =>
        stack.up({
          ...(service.configFile ? { configFile: service.configFile } : {}),
          ...policyPackOptions(configMapReader(config), workDir),
          onOutput: run.onOutput,
          onEvent: before.onEvent,
          signal: run.signal,
          color: process.stdout.isTTY ? "always" : "never",
        }),
    ).catch(async (error: unknown) => {
      if (error instanceof CliError) throw error;
      throw lockedStackError(error, stackName, env, "npm start") ?? (await deployFailure(error, stack, dir, stackName));
    });
    const outputs = (up.outputs.agents?.value ?? {}) as Record<string, AgentOutput>;
    const changes = Object.entries(up.summary.resourceChanges ?? {}).filter(([op, n]) => op !== "same" && n > 0);
    process.stdout.write(`\n${changes.length === 0 ? "No changes." : "Changes applied."}\n${agentTable(outputs)}\n`);
    if (values["no-smoke"]) return 0;
    const code = await smokeAfterUp(stack, dir, stackName, service.connection, await before.save());
    if (service.simulator || service.reused) await reportFailedDeliveries(service.connection);
    return code;
  } finally {
    // Last: the Pulumi run (and its provider) has stopped using it by now.
    await simulator?.close();
  }
}

type Service = { connection: ResolvedConnection; simulator?: Simulator; reused?: boolean; configFile?: string };

/**
 * The procedures' post_url deliveries that failed during this run's calls, from the simulator's own
 * list (on stderr: stdout ends with smoke's "N passed, N failed"). A delivery is the procedural
 * agent's output reaching its hook; the procedure itself still completes, so nothing else says so.
 */
async function reportFailedDeliveries(connection: ResolvedConnection): Promise<void> {
  const response = await fetch(new URL("_simulator/deliveries", `${connection.baseUrl.replace(/\/$/, "")}/`), {
    headers: { authorization: `Bearer ${connection.apiKey}` },
    signal: AbortSignal.timeout(5000),
  }).catch(() => undefined);
  if (!response?.ok) return;
  const body = (await response.json().catch(() => undefined)) as
    | {
        deliveries?: {
          procedure_id: string;
          url: string;
          ok: boolean;
          status?: number | null;
          error?: string | null;
        }[];
      }
    | undefined;
  const failed = (body?.deliveries ?? []).filter((d) => !d.ok);
  if (failed.length === 0) return;
  const lines = failed.slice(0, 10).map((d) => `  ${d.procedure_id} → ${d.url}: ${d.error ?? `HTTP ${d.status}`}`);
  const more = failed.length > 10 ? [`  … and ${failed.length - 10} more (GET /_simulator/deliveries)`] : [];
  process.stderr.write(
    `post_url deliveries: ${failed.length} of ${body?.deliveries?.length} failed (the procedures still completed):\n${[...lines, ...more].join("\n")}\n`,
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
    process.stdout.write(`using the simulator already serving ${connection.baseUrl}\n`);
    return { connection: requireConnection(connection, stackName), reused: true };
  }
  await mkdir(stateDir, { recursive: true });
  const simulator = await startSimulator({
    port: 0,
    dataFile,
    ...(connection.apiKey ? { apiKey: connection.apiKey } : {}),
    quiet: true,
  });
  process.stdout.write(`local simulator: ${simulator.url} (service id ${simulator.serviceId})\n`);
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
 * extra Pulumi run; {} for a new stack), and saved to reports/ for a later `smoke --compare`.
 */
function versionsBefore() {
  const versions: Record<string, string> = {};
  const onEvent = (event: pulumi.automation.EngineEvent) => {
    const metadata = event.resourcePreEvent?.metadata;
    if (!metadata?.type.startsWith(AGENT_TYPE_PREFIX)) return;
    const old = metadata.old?.outputs?.versionId;
    const key = metadata.urn.split("::").at(-1) ?? "";
    if (typeof old === "string" && metadata.op !== "delete") versions[key] ??= old;
  };
  const save = async () => {
    const reports = path.join(process.cwd(), "reports");
    await mkdir(reports, { recursive: true });
    await writeFile(path.join(reports, "old-versions.json"), `${JSON.stringify(versions, null, 2)}\n`);
    return versions;
  };
  return { onEvent, save };
}

async function smokeAfterUp(
  stack: Stack,
  dir: string,
  stackName: string,
  connection: ResolvedConnection,
  before: Record<string, string>,
) {
  const { agents, errors } = await loadAgents(dir, { stack: stackName });
  if (errors.length > 0) throw new CliError(errors.map(formatDiagnostic).join("\n"), 1);
  const held = await stackAgents(stack).catch((error: unknown) => {
    throw pulumiFailure("reading the stack's state failed", error);
  });
  if (held.stale.length > 0) process.stderr.write(staleOutputsNote(stackName, held.stale));
  const reports = path.join(process.cwd(), "reports");
  await mkdir(reports, { recursive: true });
  const reportFiles: ReportFiles = {
    junit: path.join(reports, "smoke.junit.xml"),
    json: path.join(reports, "smoke.json"),
    html: path.join(reports, "smoke.html"),
  };
  if (Object.keys(before).length > 0) {
    process.stdout.write("\nsmoke calls against the pinned versions, compared with the versions before this deploy:\n");
    const { scenarios, exitCode } = await runCompare({
      definitions: agents,
      outputs: held.agents,
      selection: {},
      connection: { ...connection, onRetry: printRetry },
      old: { versions: before, source: "outputs" },
      failOn: "failure",
      concurrency: 4,
      stack: stackName,
      files: reportFiles,
      out: process.stdout,
    });
    process.stderr.write(
      unknownVersionsNote(
        scenarios.flatMap((s) => s.newResults),
        held.agents,
        stackName,
      ),
    );
    return exitCode;
  }
  process.stdout.write(
    "\nsmoke calls against the pinned versions (first deploy: no versions before it to compare with, plain smoke):\n",
  );
  const { results, exitCode } = await runSmoke({
    definitions: agents,
    outputs: held.agents,
    selection: {},
    connection: { ...connection, onRetry: printRetry },
    concurrency: 4,
    files: reportFiles,
    out: process.stdout,
  });
  process.stderr.write(unknownVersionsNote(results, held.agents, stackName));
  return exitCode;
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

function agentTable(outputs: Record<string, AgentOutput>): string {
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
