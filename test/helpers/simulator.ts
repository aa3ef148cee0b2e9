// Starting the simulator in the profile a test run asks for, and calls to its own routes
// (/_simulator/…) from tests.
import { mkdtemp, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { request } from "undici";
import { type Client, createClient } from "../../src/api/index.ts";
import { type AgentDefinition, loadAgents } from "../../src/definitions/index.ts";
import type { HeldAgent } from "../../src/provider/index.ts";
import { type ProfileName, type Simulator, type SimulatorOptions, startSimulator } from "../../src/simulator/index.ts";

export type SimulatorHandle = { url: string; apiKey: string };

export async function simulatorCall<T = unknown>(
  sim: SimulatorHandle,
  method: "GET" | "POST" | "DELETE",
  path: string,
  body?: unknown,
): Promise<T> {
  const response = await request(`${sim.url}${path}`, {
    method,
    headers: {
      authorization: `Bearer ${sim.apiKey}`,
      "service-version": "2025-06-19",
      ...(body === undefined ? {} : { "content-type": "application/json" }),
    },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await response.body.text();
  if (response.statusCode >= 400) throw new Error(`${method} ${path}: ${response.statusCode} ${text}`);
  return (text ? JSON.parse(text) : undefined) as T;
}

export type StoredAgents = {
  conversational: { id: string; name: string; postprocess_agents?: string[]; [key: string]: unknown }[];
  procedural: { id: string; name: string; [key: string]: unknown }[];
};

export const storedAgents = (sim: SimulatorHandle) => simulatorCall<StoredAgents>(sim, "GET", "/_simulator/agents");

export type RequestCounts = { count: number; by_route: Record<string, number> };

export const requestCounts = (sim: SimulatorHandle) => simulatorCall<RequestCounts>(sim, "GET", "/_simulator/requests");

/**
 * The service profile end-to-end tests run against: AGENT_IAC_TEST_PROFILE=variant selects the
 * simulator's variant profile (see src/simulator/README.md), anything else the default one.
 */
export function testProfile(): ProfileName {
  return process.env.AGENT_IAC_TEST_PROFILE === "variant" ? "variant" : "default";
}

/** Starts a simulator on a free loopback port, quiet, in the test profile unless `options.profile` says. */
export function startTestSimulator(options: SimulatorOptions = {}): Promise<Simulator> {
  return startSimulator({ port: 0, eventDelayMs: 1, quiet: true, profile: testProfile(), ...options });
}

/** Creates each agent on the service in the given order (procedural ones before those that link them); returns the outputs a stack would hold. */
export async function createAgents(
  client: Client,
  agents: readonly AgentDefinition[],
): Promise<Record<string, HeldAgent>> {
  const outputs: Record<string, HeldAgent> = {};
  for (const agent of agents) {
    const body = { name: agent.name, description: agent.description, config: agent.config };
    const created =
      agent.kind === "procedural"
        ? await client.proceduralAgents.create(body)
        : await client.conversationalAgents.create({
            ...body,
            postprocess_agents: agent.postprocessAgents.map((key) => outputs[key]?.id ?? ""),
          } as Parameters<typeof client.conversationalAgents.create>[0]);
    outputs[agent.key] = {
      key: agent.key,
      id: created.id,
      version_id: created.version_id,
      kind: agent.kind,
      name: agent.name,
      postprocess_agents: [],
      urn: "",
    };
  }
  return outputs;
}

export type ExampleService = {
  sim: Simulator;
  agents: AgentDefinition[];
  outputs: Record<string, HeldAgent>;
  /** A temporary directory for the test's files. */
  dir: string;
  close(): Promise<void>;
};

/** The simulator on port 0 with the example agents (agents/, dev stack) created on it, and a temporary directory. */
export async function exampleService(options: { eventDelayMs: number }): Promise<ExampleService> {
  const sim = await startSimulator({ port: 0, eventDelayMs: options.eventDelayMs, quiet: true });
  const dir = await mkdtemp(path.join(os.tmpdir(), "example-service-"));
  const agents = (await loadAgents(path.resolve(import.meta.dirname, "../../agents"), { stack: "dev" })).agents;
  const client = createClient({ baseUrl: sim.url, apiKey: sim.apiKey });
  const outputs = await createAgents(client, agents).finally(() => client.close());
  const close = async () => {
    await sim.close();
    await rm(dir, { recursive: true, force: true });
  };
  return { sim, agents, outputs, dir, close };
}
