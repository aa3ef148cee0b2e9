// Which simulator `npm start` reuses (issue 30): a simulator already serving the stack's loopback
// address may be this checkout's, another checkout's, or one whose data was reset. Its own
// GET /_simulator/info names its process, data file and directory; GET /_simulator/agents says
// whether it knows the agents the stack pins. A simulator that does not know them is named, with
// both ways out — never only `pulumi up --replace`, which would create the agents in the wrong one.
import path from "node:path";
import { CliError } from "../errors/index.ts";
import type { HeldAgent } from "../provider/index.ts";

export type SimulatorIdentity = {
  service_id?: string;
  pid?: number;
  data_file?: string | null;
  cwd?: string;
  started_at?: string;
};

async function adminGet<T>(baseUrl: string, apiKey: string | undefined, route: string): Promise<T | undefined> {
  const response = await fetch(new URL(route, baseUrl.endsWith("/") ? baseUrl : `${baseUrl}/`), {
    headers: apiKey ? { authorization: `Bearer ${apiKey}` } : {},
    signal: AbortSignal.timeout(5000),
  }).catch(() => undefined);
  if (!response?.ok) {
    await response?.body?.cancel();
    return undefined;
  }
  return (await response.json().catch(() => undefined)) as T | undefined;
}

/** What the simulator serving `baseUrl` says about itself (an older one says only its service id). */
export function simulatorIdentity(baseUrl: string, apiKey: string | undefined) {
  return adminGet<SimulatorIdentity>(baseUrl, apiKey, "_simulator/info");
}

/** "process 4242, data file .agent-iac/simulator.json, started in /home/ann/agent-iac": what is known. */
export function describeSimulator(identity: SimulatorIdentity | undefined): string {
  if (!identity) return "a simulator that does not say who it is";
  const parts: string[] = [];
  if (identity.pid !== undefined) parts.push(`process ${identity.pid}`);
  if (identity.data_file !== undefined) {
    parts.push(identity.data_file ? `data file ${shown(identity.data_file)}` : "no data file (in memory)");
  }
  if (identity.cwd) parts.push(`started in ${identity.cwd === process.cwd() ? "this directory" : identity.cwd}`);
  if (identity.service_id) parts.push(`service id ${identity.service_id}`);
  return parts.length > 0 ? parts.join(", ") : "a simulator that does not say who it is";
}

const shown = (file: string) => {
  const relative = path.relative(process.cwd(), file);
  return relative && !relative.startsWith("..") ? relative : file;
};

/** The stack's agents (key → id) the simulator does not hold; [] when it knows them all (or cannot say). */
export async function unknownAgents(
  baseUrl: string,
  apiKey: string | undefined,
  held: Record<string, HeldAgent>,
): Promise<string[]> {
  type Listed = { conversational?: { id: string }[]; procedural?: { id: string }[] };
  const listed = await adminGet<Listed>(baseUrl, apiKey, "_simulator/agents");
  if (!listed) return [];
  const ids = new Set([...(listed.conversational ?? []), ...(listed.procedural ?? [])].map((agent) => agent.id));
  return Object.entries(held)
    .filter(([, agent]) => agent.id && !ids.has(agent.id))
    .map(([key]) => key);
}

/** The error of a reused simulator that does not know the stack's agents: who it is, and both ways out. */
export function foreignSimulatorError(options: {
  baseUrl: string;
  identity: SimulatorIdentity | undefined;
  missing: string[];
  held: Record<string, HeldAgent>;
  stackName: string;
}): CliError {
  const { baseUrl, identity, missing, held, stackName } = options;
  const versions = missing.map((key) => `  ${key}: ${held[key]?.version_id ?? "?"}`).join("\n");
  const ours = path.resolve(".agent-iac", "simulator.json");
  const other = identity?.data_file && identity.data_file !== ours;
  const probably = other
    ? `it is probably another checkout's simulator (its data file is not ${shown(ours)})`
    : "it is probably another checkout's simulator, or one whose data was reset";
  const replace = missing
    .map((key) => held[key]?.urn)
    .filter(Boolean)
    .map((urn) => `--replace '${urn}'`)
    .join(" ");
  return new CliError(
    `the simulator serving ${baseUrl} (${describeSimulator(identity)}) does not know ${missing.length} of the agents stack ${stackName} pins:\n${versions}\n${probably}; no call was placed`,
    2,
    {
      hint:
        "either use the simulator that holds them: stop this one (" +
        (identity?.pid ? `kill ${identity.pid}` : "Ctrl+C in its terminal") +
        ") and run `npm start` again (it starts the checkout's own), or point the stack elsewhere:\n" +
        `  pulumi config set agents:baseUrl http://127.0.0.1:<port> --stack ${stackName}\n` +
        "or, if this simulator is the one you mean to use, create the agents in it:\n" +
        `  pulumi up --stack ${stackName} ${replace}`.trimEnd(),
    },
  );
}
