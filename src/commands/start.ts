// `agent-iac start` (`npm start`), the main job: provision agents/ with `pulumi up` on the dev
// stack and smoke-call the versions it created. Where the stack points at a loopback address (the
// dev stack does), the embedded simulator serves this run on a free port, persisting its data in
// .agent-iac/, and the run uses a copy of the stack's config file with that address.
import { mkdir, readFile, writeFile } from "node:fs/promises";
import path from "node:path";
import { parseDocument } from "yaml";
import { LOOPBACK_NAMES } from "../contract/index.ts";
import { formatDiagnostic, loadAgents } from "../definitions/index.ts";
import { AGENT_TYPE_PREFIX } from "../provider/index.ts";
import { startSimulator } from "../simulator/index.ts";
import { type AgentOutput, runSmoke, UsageError } from "../smoke/index.ts";
import {
  ensurePulumi,
  openStack,
  pulumiEnvironment,
  pulumiErrorSummary,
  type Stack,
  ToolchainError,
} from "../workspace/index.ts";
import { parseCommand } from "./args.ts";

const HELP = `usage: agent-iac start [--stack NAME] [--no-smoke]

Runs \`pulumi up --yes\` for agents/ on the stack (default: dev), prints the agents and their
version ids, then places the smoke scenarios against those versions. When the stack's
agents:baseUrl is a loopback address (as in the dev stack), the local simulator serves the run
on a free port (its data in .agent-iac/simulator.json) and the API key is its dev key.
`;

export async function run(argv: string[]): Promise<number> {
  const parsed = parseCommand("start", HELP, argv, {
    stack: { type: "string", default: "dev" },
    "no-smoke": { type: "boolean", default: false },
  });
  if ("exitCode" in parsed) return parsed.exitCode;
  const { values } = parsed;
  const workDir = process.cwd();
  const stackName = values.stack;
  const stateDir = path.join(workDir, ".agent-iac");
  let simulator: Awaited<ReturnType<typeof startSimulator>> | undefined;
  try {
    await ensurePulumi();
    const env = pulumiEnvironment();
    const probe = await openStack({ stackName, workDir, env });
    const config = await probe.getAllConfig();
    const configuredUrl = config["agents:baseUrl"]?.value ?? process.env.AGENT_IAC_BASE_URL;

    let configFile: string | undefined;
    let connection: { baseUrl: string; apiKey: string | undefined };
    // The key the provider will use (stack config first, as it reads them); the simulator accepts it.
    const configuredKey = config["agents:apiKey"]?.value || process.env.AGENT_IAC_API_KEY;
    if (!configuredUrl || LOOPBACK_NAMES.has(hostnameOf(configuredUrl))) {
      await mkdir(stateDir, { recursive: true });
      simulator = await startSimulator({
        port: 0,
        dataFile: path.join(stateDir, "simulator.json"),
        ...(configuredKey ? { apiKey: configuredKey } : {}),
        quiet: true,
      });
      process.stdout.write(`local simulator: ${simulator.url} (service id ${simulator.serviceId})\n`);
      configFile = await runConfigFile(workDir, stateDir, stackName, simulator.url);
      connection = { baseUrl: simulator.url, apiKey: simulator.apiKey };
      // Handed to the provider through the environment, never as an argument.
      env.AGENT_IAC_API_KEY = simulator.apiKey;
    } else {
      connection = { baseUrl: configuredUrl, apiKey: configuredKey };
    }

    const stack = await openStack({ stackName, workDir, env });
    process.stdout.write(`pulumi up --yes (stack ${stackName})\n`);
    const dir = path.resolve(workDir, config["agents:dir"]?.value ?? "agents");
    const up = await stack
      .up({ configFile, onOutput: (text) => process.stdout.write(text) })
      .catch(async (error: unknown) => {
        const missing = await notCreated(stack, dir, stackName).catch(() => "");
        throw new DeployError(`pulumi up failed:\n${pulumiErrorSummary(error)}${missing}`);
      });
    const outputs = up.outputs.agents?.value as Record<string, AgentOutput> | undefined;
    const changes = Object.entries(up.summary.resourceChanges ?? {}).filter(([op, n]) => op !== "same" && n > 0);
    process.stdout.write(
      `\n${changes.length === 0 ? "No changes." : "Changes applied."}\n${agentTable(outputs ?? {})}\n`,
    );
    if (values["no-smoke"]) return 0;

    const { agents, errors } = await loadAgents(dir, { stack: stackName });
    if (errors.length > 0) throw new UsageError(errors.map(formatDiagnostic).join("\n"));
    if (!connection.apiKey) throw new UsageError("no API key for smoke calls: set AGENT_IAC_API_KEY");
    process.stdout.write("\nsmoke calls against the pinned versions:\n");
    await mkdir(path.join(workDir, "reports"), { recursive: true });
    const { exitCode } = await runSmoke({
      definitions: agents,
      outputs,
      selection: {},
      connection: { baseUrl: connection.baseUrl, apiKey: connection.apiKey },
      concurrency: 4,
      junitFile: path.join(workDir, "reports", "smoke.junit.xml"),
      jsonFile: path.join(workDir, "reports", "smoke.json"),
      out: process.stdout,
    });
    return exitCode;
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    process.stderr.write(`agent-iac start: ${message}\n`);
    if (error instanceof ToolchainError) return error.exitCode;
    if (error instanceof UsageError) return 2;
    return error instanceof DeployError ? 1 : 3;
  } finally {
    await simulator?.close();
  }
}

/** After a failed up: which declared agents the stack does not hold, and why when it is a link. */
async function notCreated(stack: Stack, dir: string, stackName: string): Promise<string> {
  const { agents } = await loadAgents(dir, { stack: stackName });
  const state = await stack.exportStack();
  const held = new Set(
    (state.deployment.resources ?? [])
      .filter((r: { type: string }) => r.type.startsWith(AGENT_TYPE_PREFIX))
      .map((r: { urn: string }) => r.urn.split("::").at(-1)),
  );
  const missing = agents.filter((a) => !held.has(a.key));
  if (missing.length === 0) return "";
  const lines = missing.map((agent) => {
    const blocked = agent.postprocessAgents.filter((key) => !held.has(key));
    const why =
      blocked.length > 0
        ? `not attempted: linked procedural agent ${blocked.join(", ")} was not created`
        : "see its error above";
    return `  ${agent.key} (${agent.kind}): ${why}`;
  });
  return `\n\nnot created (${missing.length} of ${agents.length}); run again once the cause is fixed:\n${lines.join("\n")}`;
}

function hostnameOf(url: string): string {
  try {
    return new URL(url).hostname;
  } catch {
    throw new UsageError(`agents:baseUrl is not a URL: ${JSON.stringify(url)}`);
  }
}

class DeployError extends Error {
  override name = "DeployError";
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
