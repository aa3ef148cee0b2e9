// Calls to the simulator's own routes (/_simulator/…) from tests.
import { request } from "undici";

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
