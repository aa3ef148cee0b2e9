// The Pulumi program (Pulumi.yaml `main`): the agent files of the stack's agents:dir (default
// agents/), one resource per agent, and every version id as a stack output. The same code as the
// AgentDirectory component, with the agents at the stack's root where this program has always
// declared them (so upgrading replaces nothing: test/package.upgrade.test.ts).
import * as pulumi from "@pulumi/pulumi";
import {
  declareAgents,
  previousVersions,
  readAgentDirectory,
  stackOutputsBefore,
  versionsBeforeIn,
} from "./component/index.ts";
import { agentsDirSetting } from "./settings/index.ts";

// The SDK captures a stack trace for every promise it makes (kept only to name leaked promises) and
// formats each through source-map-support: at 1,000 agents that was 1.5 s of the program's 5.3 s of
// CPU and about 2 s of an 11 s one-agent change. This program's errors reach the user without
// stacks anyway (src/workspace/output.ts), so it captures none unless asked (AGENT_IAC_DEBUG=1).
if (process.env.AGENT_IAC_DEBUG !== "1") Error.stackTraceLimit = 0;

const dir = agentsDirSetting((key) => pulumi.runtime.getConfig(key)) ?? "agents";
// Read before any agent is declared: the outputs of the stack's last update (src/component/previous.ts).
const before = versionsBeforeIn(await stackOutputsBefore());
const declared = declareAgents(await readAgentDirectory(dir));

/** `{key: version_id}`: what smoke calls pin. */
export const versions = declared.versions;

/** `{key: {id, version_id, kind, name}}`. */
export const agents = declared.agents;

/** `{key: version_id}`: the version each agent held before its current one (what its last replace left). */
export const previous_versions = previousVersions(declared.versions, before);
