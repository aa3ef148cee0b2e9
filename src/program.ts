// The Pulumi program (Pulumi.yaml `main`): one resource per file in agents/, procedural agents
// first, conversational agents linking them by id, and every version id as a stack output.
import path from "node:path";
import * as pulumi from "@pulumi/pulumi";
import { type AgentDefinition, formatDiagnostic, loadAgents } from "./definitions/index.ts";
import { ConversationalAgent, ProceduralAgent } from "./provider/index.ts";
import { requireConnection, resolveConnection } from "./settings/index.ts";

const config = new pulumi.Config("agents");
const stack = pulumi.getStack();
// Relative to the project (the directory of Pulumi.yaml), wherever the program file lives.
const projectDir = pulumi.runtime.getRootDirectory();
const agentsDir = path.resolve(projectDir, config.get("dir") ?? "agents");

const { agents: definitions, errors } = await loadAgents(agentsDir, { stack });
if (errors.length > 0) {
  // RunError: a clean failure with our file:line messages, no stack trace.
  throw new pulumi.RunError(
    `${errors.length} error(s) in ${path.relative(projectDir, agentsDir) || "."}:\n${errors.map(formatDiagnostic).join("\n")}`,
  );
}

// Fail at preview, before anything is created, when the provider would have no address or key:
// the same resolver as the provider's (on a loopback address the local dev key applies). The key
// is not used here and goes nowhere.
try {
  requireConnection(resolveConnection((key) => pulumi.runtime.getConfig(key)));
} catch (error) {
  throw new pulumi.RunError((error as Error).message);
}

type Created = { definition: AgentDefinition; resource: ProceduralAgent | ConversationalAgent };
const created = new Map<string, Created>();

for (const definition of definitions.filter((agent) => agent.kind === "procedural")) {
  const resource = new ProceduralAgent(
    definition.key,
    { name: definition.name, description: definition.description, config: definition.config },
    { protect: definition.protect },
  );
  created.set(definition.key, { definition, resource });
}

for (const definition of definitions.filter((agent) => agent.kind === "conversational")) {
  // The procedural resources' ids make the dependency real: a replaced procedural agent has a new
  // id, which replaces every conversational agent that links it.
  // The loader has checked that every key names a procedural agent, declared above.
  const linked = definition.postprocessAgents.map((key) => (created.get(key) as Created).resource.agentId);
  const resource = new ConversationalAgent(
    definition.key,
    {
      name: definition.name,
      description: definition.description,
      config: definition.config,
      ...(linked.length > 0 ? { postprocess_agents: linked } : {}),
    },
    { protect: definition.protect },
  );
  created.set(definition.key, { definition, resource });
}

/** `{key: version_id}`: what smoke calls pin. */
export const versions = Object.fromEntries([...created].map(([key, { resource }]) => [key, resource.versionId]));

/** `{key: {id, version_id, kind, name}}`. */
export const agents = Object.fromEntries(
  [...created].map(([key, { definition, resource }]) => [
    key,
    { id: resource.agentId, version_id: resource.versionId, kind: definition.kind, name: definition.name },
  ]),
);
