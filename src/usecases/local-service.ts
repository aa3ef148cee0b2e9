// The service `start` deploys to. A stack whose agents:baseUrl is not loopback uses that service.
// On a loopback address (the dev stack's), a simulator already serving it (`npm run service`) is
// used as it is, and so is anything else that answers there (a port-forward or tunnel to the
// service: never replaced by a throwaway simulator). Where nothing answers, the dev stack's run is
// served by the embedded simulator on a free port, persisting its data in .agent-iac/, with a copy
// of the stack's config file with that address; any other stack stops there (a ConfigError): it
// never gets a local simulator silently.
import { mkdir } from "node:fs/promises";
import path from "node:path";
import { ConfigError } from "../errors/index.ts";
import type { HeldAgent } from "../provider/index.ts";
import {
  CONFIG_KEYS,
  type Connection,
  type ProjectContext,
  type ResolvedConnection,
  requireConnection,
  STATE_DIR,
} from "../settings/index.ts";
import { readSimulatorLock, startSimulator } from "../simulator/index.ts";
import { recoveryCommand } from "./recovery.ts";
import { stackFileCopy } from "./session.ts";
import { type SimulatorDelivery, type SimulatorInfo, withSimulatorAdmin } from "./simulator-admin.ts";

type Simulator = Awaited<ReturnType<typeof startSimulator>>;

export type LocalService = {
  connection: ResolvedConnection;
  /** The simulator this run started (closed by `close`). */
  simulator?: Simulator;
  /** A simulator that already served the stack's address, used as it is. */
  reused?: { info: SimulatorInfo | undefined };
  /** The stack config file of this run (the stack's, with the started simulator's address). */
  configFile?: string;
  /** A simulator serves this run (started or reused): its deliveries can be read. */
  simulated: boolean;
  close(): Promise<void>;
};

/** The service for `stackName`'s connection; `say` hears which simulator is used. */
export async function localService(
  project: ProjectContext,
  connection: Connection,
  stackName: string,
  say: (line: string) => void,
): Promise<LocalService> {
  const workDir = project.dir;
  const none = async () => {};
  if (connection.baseUrl && !connection.loopback) {
    return { connection: requireConnection(connection, stackName), simulated: false, close: none };
  }
  const { stateDir } = project;
  const dataFile = path.join(stateDir, "simulator.json");
  if (connection.baseUrl) {
    const running = await runningSimulator(connection.baseUrl, connection.apiKey, dataFile, workDir);
    if (running.kind === "simulator") {
      say(`using the simulator already serving ${connection.baseUrl} (${describeSimulator(running.info, workDir)})`);
      return {
        connection: requireConnection(connection, stackName),
        reused: { info: running.info },
        simulated: true,
        close: none,
      };
    }
    if (running.kind === "other") {
      say(
        `using the service answering at ${connection.baseUrl} (not agent-iac's simulator: ${running.answer}) as stack ${stackName}'s service`,
      );
      return { connection: requireConnection(connection, stackName), simulated: false, close: none };
    }
  }
  if (stackName !== DEV_STACK) throw noLocalSimulator(connection.baseUrl, stackName);
  await mkdir(stateDir, { recursive: true });
  const simulator = await startSimulator({
    port: 0,
    dataFile,
    cwd: workDir,
    ...(connection.apiKey ? { apiKey: connection.apiKey } : {}),
    quiet: true,
  });
  say(
    `local simulator: ${simulator.url} (service id ${simulator.serviceId}, this process ${process.pid}, data file ${path.relative(workDir, dataFile)})`,
  );
  const configFile = await stackFileCopy(stackName, { [CONFIG_KEYS.baseUrl]: simulator.url }, { workDir, stateDir });
  return {
    connection: { baseUrl: simulator.url, apiKey: simulator.apiKey },
    simulator,
    configFile,
    simulated: true,
    close: () => simulator.close(),
  };
}

/**
 * Whether a simulator already serves `baseUrl`: then start uses it instead of starting a second one
 * on the same data file. A simulator that holds `dataFile` (its lock names the process and address)
 * at another address is an error: a second simulator on the file would be refused, and the stack
 * would deploy to an address nobody serves.
 */
async function runningSimulator(baseUrl: string, apiKey: string | undefined, dataFile: string, workDir: string) {
  const holder = await readSimulatorLock(dataFile);
  if (holder?.url && new URL(holder.url).host !== new URL(baseUrl).host) {
    throw new ConfigError(
      `${path.relative(workDir, dataFile)} is held by the simulator of process ${holder.pid} at ${holder.url}, not at the stack's address ${baseUrl}`,
      {
        hint: `stop that simulator, or serve the stack's address: npm run service -- --port ${new URL(baseUrl).port || 80} --data ${path.relative(workDir, dataFile)}`,
      },
    );
  }
  const probe = await withSimulatorAdmin(baseUrl, apiKey, (admin) => admin.probe());
  if (probe.kind === "refused") {
    throw new ConfigError(`the simulator serving ${baseUrl} refuses the stack's API key`, {
      hint: "give it the same key (AGENT_IAC_API_KEY when starting `npm run service`), or stop it",
    });
  }
  return probe;
}

/** The stack `npm start` serves with its own simulator when nothing answers at the stack's address. */
const DEV_STACK = "dev";

/** Nothing answers at a stack's loopback address and it is not the dev stack: no simulator is started for it. */
function noLocalSimulator(baseUrl: string | undefined, stackName: string): ConfigError {
  const where = baseUrl
    ? `nothing answers at ${baseUrl} (stack ${stackName}'s agents:baseUrl)`
    : `stack ${stackName} sets no agents:baseUrl`;
  const url = baseUrl ? new URL(baseUrl) : undefined;
  const serve = url
    ? `npm run service -- --host ${url.hostname} --port ${url.port || 80} --data ${STATE_DIR}/${stackName}.simulator.json`
    : "npm run service";
  return new ConfigError(
    `${where}; start serves only the dev stack with a simulator of its own, so stack ${stackName} was not deployed`,
    {
      hint:
        `start the service it means first (for a simulator: ${serve}), ` +
        `or point it at its service: pulumi config set agents:baseUrl <url> --stack ${stackName}`,
    },
  );
}

/** A reused simulator must hold the agents the stack pins (checked before `pulumi up`); otherwise say whose it probably is. */
export async function checkReusedSimulator(
  service: LocalService,
  held: Record<string, HeldAgent>,
  { name: stackName, project }: { name: string; project: ProjectContext },
): Promise<void> {
  if (!service.reused) return;
  const { baseUrl, apiKey } = service.connection;
  const ids = await withSimulatorAdmin(baseUrl, apiKey, (admin) => admin.agentIds()).catch(() => undefined);
  if (!ids) return;
  const missing = Object.entries(held)
    .filter(([, agent]) => agent.id && !ids.has(agent.id))
    .map(([key]) => key);
  if (missing.length === 0) return;
  throw foreignSimulatorError({ baseUrl, info: service.reused.info, missing, held, stackName, project });
}

/** "process 4242, data file .agent-iac/simulator.json, started in /home/ann/agent-iac": what is known. */
function describeSimulator(info: SimulatorInfo | undefined, workDir: string): string {
  if (!info) return "a simulator that does not say who it is";
  const parts: string[] = [];
  if (info.pid !== undefined) parts.push(`process ${info.pid}`);
  if (info.data_file !== undefined) {
    parts.push(info.data_file ? `data file ${shown(info.data_file, workDir)}` : "no data file (in memory)");
  }
  if (info.cwd) parts.push(`started in ${info.cwd === workDir ? "this directory" : info.cwd}`);
  if (info.service_id) parts.push(`service id ${info.service_id}`);
  return parts.length > 0 ? parts.join(", ") : "a simulator that does not say who it is";
}

const shown = (file: string, workDir: string) => {
  const relative = path.relative(workDir, file);
  return relative && !relative.startsWith("..") ? relative : file;
};

/** The error of a reused simulator that does not know the stack's agents: who it is, and both ways out. */
function foreignSimulatorError(options: {
  baseUrl: string;
  info: SimulatorInfo | undefined;
  missing: string[];
  held: Record<string, HeldAgent>;
  stackName: string;
  project: ProjectContext;
}): ConfigError {
  const { baseUrl, info, missing, held, stackName, project } = options;
  const versions = missing.map((key) => `  ${key}: ${held[key]?.version_id ?? "?"}`).join("\n");
  const ours = path.join(project.stateDir, "simulator.json");
  const other = info?.data_file && info.data_file !== ours;
  const probably = other
    ? `it is probably another checkout's simulator (its data file is not ${shown(ours, project.dir)})`
    : "it is probably another checkout's simulator, or one whose data was reset";
  const recover = recoveryCommand(stackName, held, missing) ?? `pulumi up --yes --stack ${stackName}`;
  return new ConfigError(
    `the simulator serving ${baseUrl} (${describeSimulator(info, project.dir)}) does not know ${missing.length} of the agents stack ${stackName} pins:\n${versions}\n${probably}; nothing was deployed and no call was placed`,
    {
      hint:
        "either use the simulator that holds them: stop this one (" +
        (info?.pid ? `kill ${info.pid}` : "Ctrl+C in its terminal") +
        ") and run `npm start` again (it starts the checkout's own), or point the stack elsewhere:\n" +
        `  pulumi config set agents:baseUrl http://127.0.0.1:<port> --stack ${stackName}\n` +
        "or, if this simulator is the one you mean to use, create the agents in it:\n" +
        `  ${recover}`,
    },
  );
}

/**
 * The procedures' post_url deliveries of this run's conversations that failed (a simulator holds
 * earlier runs' and seeded traffic's too), and how many of this run's there were.
 */
export async function failedDeliveries(
  connection: ResolvedConnection,
  conversations: ReadonlySet<string>,
): Promise<{ failed: SimulatorDelivery[]; total: number }> {
  const all = await withSimulatorAdmin(connection.baseUrl, connection.apiKey, (admin) => admin.deliveries()).catch(
    () => undefined,
  );
  const ours = (all ?? []).filter((d) => d.conversation_id && conversations.has(d.conversation_id));
  return { failed: ours.filter((d) => !d.ok), total: ours.length };
}
