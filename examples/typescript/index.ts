// Agents declared in code next to the rest of a stack: a procedural agent, a conversational agent
// that runs it after each call, and a folder of agent files (agents/), all with agent-iac.
import * as pulumi from "@pulumi/pulumi";
import { AgentDirectory, ConversationalAgent, ProceduralAgent } from "agent-iac";

const notes = new ProceduralAgent("call-notes", {
  name: "Call notes",
  description: "Writes a short note after every completed call.",
  config: {
    filter_statuses: ["completed"],
    runtime: { model: "openai/gpt-4o-mini", prompt: { type: "fixed", text: "Write a three-line note of the call." } },
  },
});

const frontDesk = new ConversationalAgent("front-desk", {
  name: "Front desk",
  description: "Answers the main number and takes messages.",
  config: {
    personas: [{ name: "Ada", voice: { id: "female-1", provider: "service" } }],
    runtime: { model: "openai/gpt-4o", prompt: { type: "fixed", text: "You are Ada. Take a message politely." } },
    language: { default_language: "English" },
  },
  postprocess_agents: [notes.agentId], // links by id: a new notes agent replaces this one too
});

const team = new AgentDirectory("team", { dir: "agents" });

export const versions = pulumi
  .all([team.versions, notes.versionId, frontDesk.versionId])
  .apply(([files, callNotes, desk]) => ({ ...files, "call-notes": callNotes, "front-desk": desk }));
export const agents = team.agents;
