// The service `start` deploys to. A stack whose agents:baseUrl is not loopback uses that service.
// On a loopback address (the dev stack's), a simulator already serving it (`npm run service`) is
// used as it is; otherwise the embedded simulator serves this run on a free port, persisting its
// data in .agent-iac/, and the run uses a copy of the stack's config file with that address.
import { mkdir } from "node:fs/promises";
import path from "node:path";
import { ConfigError } from "../errors/index.ts";
import type { HeldAgent } from "../provider/index.ts";
import { type Connection, type ResolvedConnection, requireConnection } from "../settings/index.ts";
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
  connection: Connection,
  stackName: string,
  say: (line: string) => void,
  workDir = process.cwd(),
): Promise<LocalService> {
  const none = async () => {};
  if (connection.baseUrl && !connection.loopback) {
    return { connection: requireConnection(connection, stackName), simulated: false, close: none };
  }
  const stateDir = path.join(workDir, ".agent-iac");
  const dataFile = path.join(stateDir, "simulator.json");
  if (connection.baseUrl) {
    const running = await runningSimulator(connection.baseUrl, connection.apiKey, dataFile);
    if (running) {
      say(`using the simulator already serving ${connection.baseUrl} (${describeSimulator(running.info)})`);
      return { connection: requireConnection(connection, stackName), reused: running, simulated: true, close: none };
    }
  }
  await mkdir(stateDir, { recursive: true });
  const simulator = await startSimulator({
    port: 0,
    dataFile,
    ...(connection.apiKey ? { apiKey: connection.apiKey } : {}),
    quiet: true,
  });
  say(
    `local simulator: ${simulator.url} (service id ${simulator.serviceId}, this process ${process.pid}, data file ${path.relative(workDir, dataFile)})`,
  );
  const configFile = await stackFileCopy(stackName, { "agents:baseUrl": simulator.url }, { workDir, stateDir });
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
async function runningSimulator(baseUrl: string, apiKey: string | undefined, dataFile: string) {
  const holder = await readSimulatorLock(dataFile);
  if (holder?.url && new URL(holder.url).host !== new URL(baseUrl).host) {
    throw new ConfigError(
      `${path.relative(process.cwd(), dataFile)} is held by the simulator of process ${holder.pid} at ${holder.url}, not at the stack's address ${baseUrl}`,
      {
        hint: `stop that simulator, or serve the stack's address: npm run service -- --port ${new URL(baseUrl).port || 80} --data ${path.relative(process.cwd(), dataFile)}`,
      },
    );
  }
  const probe = await withSimulatorAdmin(baseUrl, apiKey, (admin) => admin.probe());
  if (probe.kind === "refused") {
    throw new ConfigError(`the simulator serving ${baseUrl} refuses the stack's API key`, {
      hint: "give it the same key (AGENT_IAC_API_KEY when starting `npm run service`), or stop it",
    });
  }
  return probe.kind === "simulator" ? { info: probe.info } : undefined;
}

/** A reused simulator must hold the agents the stack pins; otherwise say whose it probably is. */
export async function checkReusedSimulator(
  service: LocalService,
  held: Record<string, HeldAgent>,
  stackName: string,
): Promise<void> {
  if (!service.reused) return;
  const { baseUrl, apiKey } = service.connection;
  const ids = await withSimulatorAdmin(baseUrl, apiKey, (admin) => admin.agentIds()).catch(() => undefined);
  if (!ids) return;
  const missing = Object.entries(held)
    .filter(([, agent]) => agent.id && !ids.has(agent.id))
    .map(([key]) => key);
  if (missing.length === 0) return;
  throw foreignSimulatorError({ baseUrl, info: service.reused.info, missing, held, stackName });
}

/** "process 4242, data file .agent-iac/simulator.json, started in /home/ann/agent-iac": what is known. */
function describeSimulator(info: SimulatorInfo | undefined): string {
  if (!info) return "a simulator that does not say who it is";
  const parts: string[] = [];
  if (info.pid !== undefined) parts.push(`process ${info.pid}`);
  if (info.data_file !== undefined) {
    parts.push(info.data_file ? `data file ${shown(info.data_file)}` : "no data file (in memory)");
  }
  if (info.cwd) parts.push(`started in ${info.cwd === process.cwd() ? "this directory" : info.cwd}`);
  if (info.service_id) parts.push(`service id ${info.service_id}`);
  return parts.length > 0 ? parts.join(", ") : "a simulator that does not say who it is";
}

const shown = (file: string) => {
  const relative = path.relative(process.cwd(), file);
  return relative && !relative.startsWith("..") ? relative : file;
};

/** The error of a reused simulator that does not know the stack's agents: who it is, and both ways out. */
function foreignSimulatorError(options: {
  baseUrl: string;
  info: SimulatorInfo | undefined;
  missing: string[];
  held: Record<string, HeldAgent>;
  stackName: string;
}): ConfigError {
  const { baseUrl, info, missing, held, stackName } = options;
  const versions = missing.map((key) => `  ${key}: ${held[key]?.version_id ?? "?"}`).join("\n");
  const ours = path.resolve(".agent-iac", "simulator.json");
  const other = info?.data_file && info.data_file !== ours;
  const probably = other
    ? `it is probably another checkout's simulator (its data file is not ${shown(ours)})`
    : "it is probably another checkout's simulator, or one whose data was reset";
  const recover = recoveryCommand(stackName, held, missing) ?? `pulumi up --yes --stack ${stackName}`;
  return new ConfigError(
    `the simulator serving ${baseUrl} (${describeSimulator(info)}) does not know ${missing.length} of the agents stack ${stackName} pins:\n${versions}\n${probably}; no call was placed`,
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
