// The Pulumi program (Pulumi.yaml `main`): the agent files of the stack's agents:dir (default
// agents/), one resource per agent, and every version id as a stack output. The same code as the
// AgentDirectory component, with the agents at the stack's root where this program has always
// declared them (so upgrading replaces nothing: test/package.upgrade.test.ts).
import * as pulumi from "@pulumi/pulumi";
import { declareAgents, readAgentDirectory } from "./component/index.ts";

const dir = new pulumi.Config("agents").get("dir") ?? "agents";
const declared = declareAgents(await readAgentDirectory(dir));

/** `{key: version_id}`: what smoke calls pin. */
export const versions = declared.versions;

/** `{key: {id, version_id, kind, name}}`. */
export const agents = declared.agents;
