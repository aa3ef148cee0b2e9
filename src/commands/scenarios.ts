// The one scenario loader (issue 30): every command that plays scenarios — smoke, smoke --compare,
// plan --behave, replay and start — reads them here, so an agent's scenarios are the same wherever
// they are played. Three places hold them: the agent files of the stack's agents:dir, the other
// folders its AgentDirectory components deploy (found through the state), and smoke/<key>.yaml for
// agents declared in TypeScript.
import { readdir } from "node:fs/promises";
import path from "node:path";
import { type AgentDefinition, declaredAgents, formatDiagnostic, SCENARIO_DIR } from "../definitions/index.ts";
import { CliError, type ExitCode } from "../errors/index.ts";
import type { HeldAgent } from "../provider/index.ts";

export type ScenarioSources = {
  stackName: string;
  /** The stack's agents:dir, absolute; its files are `fromFiles`, already read. */
  dir: string;
  fromFiles: AgentDefinition[];
  /**
   * What the stack's state holds (its agents and its AgentDirectory folders). Without it (offline:
   * replay reads no state), every smoke/<key>.yaml of the project stands for an agent declared in code.
   */
  held?: { agents: Record<string, HeldAgent>; directories: string[] };
  /** The exit code of a problem in a scenario file (default 2, a configuration error). */
  exitCode?: ExitCode;
};

/** The agents with their scenarios, or a CliError after every problem is printed at its file:line. */
export async function scenarioAgents(sources: ScenarioSources): Promise<AgentDefinition[]> {
  const projectDir = process.cwd();
  const held = sources.held ?? { agents: await scenarioFileAgents(projectDir), directories: [] };
  const declared = await declaredAgents({
    projectDir,
    stack: sources.stackName,
    held: held.agents,
    directories: held.directories,
    fromFiles: sources.fromFiles,
    loadedDir: sources.dir,
  });
  if (declared.errors.length > 0) {
    for (const error of declared.errors) process.stderr.write(`${formatDiagnostic(error)}\n`);
    throw new CliError(`${declared.errors.length} error(s) in the scenario files`, sources.exitCode ?? 2);
  }
  return [...sources.fromFiles, ...declared.agents];
}

/** Offline: smoke/<key>.yaml files name conversational agents declared in code. */
async function scenarioFileAgents(projectDir: string): Promise<Record<string, Pick<HeldAgent, "kind" | "name">>> {
  const names = await readdir(path.join(projectDir, SCENARIO_DIR)).catch(() => [] as string[]);
  return Object.fromEntries(
    names
      .filter((name) => name.endsWith(".yaml"))
      .map((name) => name.slice(0, -".yaml".length))
      .map((key) => [key, { kind: "conversational" as const, name: key }]),
  );
}
