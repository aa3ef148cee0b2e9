// The agents program (Pulumi.yaml `main` runs it through src/program.ts): the agent files of the
// stack's agents:dir (default agents/), one resource per agent at the stack's root, and every
// version id as a stack output. The same function runs as an inline program of the Automation API
// (src/usecases/session.ts), in the process that asked for the update.
import { readFileSync, realpathSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import * as pulumi from "@pulumi/pulumi";
import { parse } from "yaml";
import { capturePromiseStacks } from "../pulumi-seams/index.ts";
import { agentsDirSetting } from "../settings/index.ts";
import { declareAgents, type ProgramContext, readAgentDirectory } from "./index.ts";
import { previousVersions, stackOutputsBefore, versionsBeforeIn } from "./previous.ts";

export async function agentsProgram(where: ProgramContext) {
  const dir = agentsDirSetting((key) => pulumi.runtime.getConfig(key)) ?? "agents";
  // Read before any agent is declared: the outputs of the stack's last update (./previous.ts).
  const before = versionsBeforeIn(await stackOutputsBefore());
  const declared = declareAgents(await readAgentDirectory(dir, where));
  return {
    /** `{key: version_id}`: what smoke calls pin. */
    versions: declared.versions,
    /** `{key: {id, version_id, kind, name}}`. */
    agents: declared.agents,
    /** `{key: version_id}`: the version each agent held before its current one (what its last replace left). */
    previous_versions: previousVersions(declared.versions, before),
  };
}

// src/program.ts in the checkout (dist/program.js in an installed copy, which no Pulumi.yaml names).
const here = fileURLToPath(import.meta.url);
const PROGRAM = path.resolve(path.dirname(here), "..", `program${path.extname(here)}`);

/**
 * The agents program to run inline for the project in `projectDir` when its Pulumi.yaml runs this
 * one (`main` is this checkout's src/program.ts), with the project's directory and environment
 * (the CLI-started program inherits both); undefined for any other program, which the CLI runs.
 */
export function inlineAgentsProgram(
  projectDir: string,
  env: NodeJS.ProcessEnv,
): pulumi.automation.PulumiFn | undefined {
  let main: unknown;
  try {
    const project = parse(readFileSync(path.join(projectDir, "Pulumi.yaml"), "utf8"));
    const runtime = typeof project?.runtime === "object" ? project.runtime?.name : project?.runtime;
    if (runtime !== "nodejs") return undefined;
    main = project.main;
  } catch {
    return undefined;
  }
  if (typeof main !== "string" || !sameFile(path.resolve(projectDir, main), PROGRAM)) return undefined;
  // As src/program.ts does for its own process: no stack trace captured for every promise the SDK
  // makes, unless the run asks (AGENT_IAC_DEBUG=1); nothing else in this process loses a stack.
  return async () => {
    capturePromiseStacks(env.AGENT_IAC_DEBUG === "1");
    return agentsProgram({ projectDir, env });
  };
}

function sameFile(a: string, b: string): boolean {
  try {
    return realpathSync(a) === realpathSync(b);
  } catch {
    return false;
  }
}
