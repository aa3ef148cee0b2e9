// Starting the simulator in the profile a test run asks for, and calls to its own routes
// (/_simulator/…) from tests.
import { mkdtemp, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { request } from "undici";
import { it } from "vitest";
import { type Client, createClient } from "../../src/api/index.ts";
import { type AgentDefinition, formatDiagnostic, loadAgents } from "../../src/definitions/index.ts";
import type { HeldAgent } from "../../src/provider/index.ts";
import { type ProfileName, type Simulator, type SimulatorOptions, startSimulator } from "../../src/simulator/index.ts";
import { type TempProject, tempProject } from "../definitions/helpers.ts";

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

/**
 * A test of what sends the same requests, or none, under either simulator profile (Pulumi's state,
 * previews, the backend's lock): it belongs to the default profile's run only, so the variant run
 * does not declare it (rather than report a duplicate it never meant to run as skipped).
 */
export function defaultProfileOnly(name: string, fn: () => Promise<void>, timeout?: number): void {
  if (testProfile() !== "variant") it(name, fn, timeout);
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

/** A simulator with agents created on it, and `close()` for both and the test's files. */
export type AgentsService = {
  sim: Simulator;
  agents: AgentDefinition[];
  held: Record<string, HeldAgent>;
  close(): Promise<void>;
};

/** The example agents: with a temporary directory for the test's files. */
export type ExampleService = AgentsService & { dir: string };

/** The simulator on port 0 with the example agents (agents/, dev stack) created on it, and a temporary directory. */
export async function exampleService(options: { eventDelayMs: number }): Promise<ExampleService> {
  const sim = await startSimulator({ port: 0, eventDelayMs: options.eventDelayMs, quiet: true });
  const dir = await mkdtemp(path.join(os.tmpdir(), "example-service-"));
  const agents = (
    await loadAgents(path.resolve(import.meta.dirname, "../../agents"), { stack: "dev", from: process.cwd() })
  ).agents;
  const client = createClient({ baseUrl: sim.url, apiKey: sim.apiKey });
  const held = await createAgents(client, agents).finally(() => client.close());
  const close = async () => {
    await sim.close();
    await rm(dir, { recursive: true, force: true });
  };
  return { sim, agents, held, dir, close };
}

/** The agents of a temp project (its root, for the test's own files). */
export type ProjectService = AgentsService & { project: TempProject };

/**
 * A default-profile simulator on port 0 with the agents of `files` (a temp project: `agents/…`)
 * created on it. Files with errors fail here, with their diagnostics.
 */
export async function projectService(files: Record<string, string>): Promise<ProjectService> {
  const sim = await startTestSimulator({ profile: "default" });
  const project = await tempProject(files);
  const close = async () => {
    await sim.close();
    await project.cleanup();
  };
  const { agents, errors } = await loadAgents(project.agents, { from: process.cwd() });
  if (errors.length > 0) {
    await close();
    throw new Error(`the test's agent files are invalid:\n${errors.map(formatDiagnostic).join("\n")}`);
  }
  const client = createClient({ baseUrl: sim.url, apiKey: sim.apiKey });
  const held = await createAgents(client, agents).finally(() => client.close());
  return { sim, agents, held, project, close };
}
