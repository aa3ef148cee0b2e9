// Agents read back from a stack's state: the fleet layout keeps the body in the inputs and only ids
// and digests in the outputs; a stack deployed before it kept the body in the outputs.
import { describe, expect, it } from "vitest";
import { AGENT_TYPE_PREFIX, stateAgent, stateAgents, stateBodies } from "../../src/provider/index.ts";

const urn = (name: string, type: string) => `urn:pulumi:dev::agents::${type}::${name}`;
const conversational = `${AGENT_TYPE_PREFIX}ConversationalAgent`;
const procedural = `${AGENT_TYPE_PREFIX}ProceduralAgent`;

describe("stateAgent", () => {
  it("reads the name and links from the inputs when the outputs hold ids and digests", () => {
    const agent = stateAgent({
      urn: urn("support", conversational),
      type: conversational,
      inputs: { name: "Support", postprocess_agents: ["pa_1", "pa_2"], config: {} },
      outputs: { agentId: "ca_1", versionId: "ca_1@v1", digests: { name: "x" } },
    });
    expect(agent).toEqual({
      key: "support",
      kind: "conversational",
      id: "ca_1",
      version_id: "ca_1@v1",
      name: "Support",
      postprocess_agents: ["pa_1", "pa_2"],
      urn: urn("support", conversational),
    });
  });

  it("reads a stack deployed before that layout, whose outputs hold the body", () => {
    const agent = stateAgent({
      urn: urn("summary", procedural),
      type: procedural,
      outputs: { agentId: "pa_1", versionId: "pa_1@v2", name: "Summary" },
    });
    expect(agent).toMatchObject({ key: "summary", kind: "procedural", name: "Summary", postprocess_agents: [] });
  });

  it("skips other resources, deletions and agents without ids", () => {
    const deployment = {
      resources: [
        { urn: "urn:pulumi:dev::agents::pulumi:pulumi:Stack::agents-dev", type: "pulumi:pulumi:Stack" },
        {
          urn: urn("old", conversational),
          type: conversational,
          delete: true,
          outputs: { agentId: "ca_0", versionId: "ca_0@v1" },
        },
        { urn: urn("pending", conversational), type: conversational, inputs: { name: "Pending" } },
        { urn: urn("kept", conversational), type: conversational, outputs: { agentId: "ca_2", versionId: "ca_2@v1" } },
      ],
    };
    expect(Object.keys(stateAgents(deployment))).toEqual(["kept"]);
    expect(stateAgents(undefined)).toEqual({});
  });
});

describe("stateBodies", () => {
  it("reads each agent's request body from the inputs (the fleet layout) or the outputs (before it)", () => {
    const deployment = {
      resources: [
        {
          urn: urn("support", conversational),
          type: conversational,
          inputs: {
            name: "Support",
            description: "Helps.",
            config: { tool: { tools: [] } },
            postprocess_agents: ["pa_1"],
          },
          outputs: { agentId: "ca_1", versionId: "ca_1@v1", digests: { name: "x" } },
        },
        {
          urn: urn("summary", procedural),
          type: procedural,
          outputs: { agentId: "pa_1", versionId: "pa_1@v2", name: "Summary", description: "Sums.", config: { a: 1 } },
        },
        { urn: urn("pending", conversational), type: conversational, inputs: { name: "Pending" } },
      ],
    };
    expect(stateBodies(deployment)).toEqual({
      support: {
        name: "Support",
        description: "Helps.",
        config: { tool: { tools: [] } },
        postprocess_agents: ["pa_1"],
      },
      summary: { name: "Summary", description: "Sums.", config: { a: 1 } },
    });
  });
});
