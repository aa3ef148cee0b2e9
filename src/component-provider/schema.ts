// The component provider's Pulumi schema, written out: what a YAML program type-checks against and
// what `pulumi package gen-sdk` generates Python, Go and .NET SDKs from. `config` is any value on
// purpose: the agent resources check it at preview against the contract, field by field, with the
// same errors as an agent file (Pulumi's TypeScript analyzer cannot express the package's types).

/** The provider's package name: its types are `agent-iac:index:…`, its own config namespace `agent-iac:`. */
export const PACKAGE = "agent-iac";

export const TOKENS = {
  conversational: `${PACKAGE}:index:ConversationalAgent`,
  procedural: `${PACKAGE}:index:ProceduralAgent`,
  directory: `${PACKAGE}:index:AgentDirectory`,
} as const;

const DEPLOYED_AGENT = `${PACKAGE}:index:DeployedAgent`;

const text = (description: string) => ({ type: "string", description });
const agentOutputs = (prefix: string) => ({
  properties: {
    agentId: text(`The agent's id (\`${prefix}_…\`).`),
    versionId: text(`The version this resource created (\`${prefix}_…@vN\`): what smoke calls pin.`),
  },
  required: ["agentId", "versionId"],
});
const config = (what: string) => ({
  $ref: "pulumi.json#/Any",
  description: `The ${what} agent's configuration, exactly as in an agent file's \`config:\` (the service's \`config\`); checked at preview, naming the field.`,
});

/** The schema for a given package version (the version the provider reports). */
export function componentSchema(version: string) {
  return {
    name: PACKAGE,
    displayName: "agent-iac",
    version,
    description: "Conversational and procedural phone agents as Pulumi resources, checked at preview.",
    config: {},
    types: {
      [DEPLOYED_AGENT]: {
        type: "object",
        description: "One deployed agent of an AgentDirectory.",
        properties: {
          id: text("The agent's id (`ca_…` or `pa_…`)."),
          version_id: text("The version this deployment created (`ca_…@vN`)."),
          kind: text("`conversational` or `procedural`."),
          name: text("The agent's name on the service."),
        },
        required: ["id", "version_id", "kind", "name"],
      },
    },
    resources: {
      [TOKENS.procedural]: {
        isComponent: true,
        description:
          "A procedural (post-call) agent on the service. Every change to its inputs creates a new agent with a new id, which replaces the conversational agents that link it.",
        inputProperties: {
          name: text("The agent's name on the service (procedures report it). Must not be empty."),
          description: text("What the agent does."),
          config: config("procedural"),
        },
        requiredInputs: ["name", "description", "config"],
        ...agentOutputs("pa"),
      },
      [TOKENS.conversational]: {
        isComponent: true,
        description:
          "A conversational agent on the service. Every change to its inputs creates a new agent (the service has no update). The resource's name is the agent's key for `agent-iac smoke`.",
        inputProperties: {
          name: text("The agent's name on the service. Must not be empty."),
          description: text("What the agent is for."),
          config: config("conversational"),
          postprocess_agents: {
            type: "array",
            description:
              "Procedural agents to run after each conversation: ProceduralAgent resources, or their ids (`agentId`). A replaced procedural agent has a new id, so this agent is replaced too.",
            items: { oneOf: [{ $ref: `#/resources/${TOKENS.procedural}` }, { type: "string" }] },
          },
        },
        requiredInputs: ["name", "description", "config"],
        ...agentOutputs("ca"),
      },
      [TOKENS.directory]: {
        isComponent: true,
        description:
          "A folder of agent files (`<key>.yaml`, with `<key>.<stack>.yaml` merged over it on that stack): one agent resource per file, with the same validation and file:line errors as `agent-iac validate`.",
        inputProperties: {
          dir: {
            type: "string",
            plain: true,
            description: "The directory of agent files, relative to the program's directory, e.g. `agents`.",
          },
        },
        requiredInputs: ["dir"],
        properties: {
          versions: {
            type: "object",
            additionalProperties: { type: "string" },
            description: "`{key: version_id}` of every agent in the directory: what smoke calls pin.",
          },
          agents: {
            type: "object",
            additionalProperties: { $ref: `#/types/${DEPLOYED_AGENT}` },
            description: "`{key: {id, version_id, kind, name}}` of every agent in the directory.",
          },
          previous_versions: {
            type: "object",
            additionalProperties: { type: "string" },
            description: "`{key: version_id}`: the version each agent held before its current one.",
          },
        },
        required: ["versions", "agents", "previous_versions"],
      },
    },
    language: {
      csharp: { rootNamespace: "AgentIac", namespaces: { [PACKAGE]: "Agents" }, packageReferences: { Pulumi: "3.*" } },
      go: { importBasePath: "example.com/agent-iac/sdk/go/agentiac", generateResourceContainerTypes: true },
      python: { packageName: "agent_iac" },
    },
  };
}
