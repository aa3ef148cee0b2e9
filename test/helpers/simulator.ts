// Starting the simulator in the profile a test run asks for, and calls to its own routes
// (/_simulator/…) from tests.
import { request } from "undici";
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
