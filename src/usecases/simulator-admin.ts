// The simulator's own routes (/_simulator/…), read through the one request core with the server's
// own response schemas: which simulator serves an address, which agents it knows, and the
// procedures' post_url deliveries. Not part of the service: every read answers undefined where no
// agent-iac simulator answers, so the same code is harmless against anything else.
import type { z } from "zod";
import { ApiError, AuthenticationError, ConnectionError, RequestCore } from "../api/index.ts";
import {
  type SimulatorDelivery,
  type SimulatorHealth,
  type SimulatorInfo,
  simulatorAgents,
  simulatorDeliveries,
  simulatorHealth,
  simulatorInfo,
} from "../simulator/index.ts";

export type { SimulatorDelivery, SimulatorInfo };

/**
 * What serves an address: a simulator (with what it says of itself), one that refuses the key,
 * something else that answers (a service, a port-forward or tunnel to one: `answer` says how it
 * answered), or nothing (the connection was refused).
 */
export type Probe =
  | { kind: "simulator"; info: SimulatorInfo }
  | { kind: "refused" }
  | { kind: "other"; answer: string }
  | { kind: "none" };

export class SimulatorAdmin {
  readonly #core: RequestCore;

  constructor(baseUrl: string, apiKey?: string | undefined, timeoutMs = 5000) {
    // Read-only: no Service-Version header, the key optional (health needs none); one attempt.
    this.#core = new RequestCore({
      baseUrl,
      apiKey,
      readOnly: true,
      maxRetries: 0,
      timeouts: { connectMs: timeoutMs, headersMs: timeoutMs, bodyMs: timeoutMs, requestMs: timeoutMs },
    });
  }

  async #get<T>(path: string, schema: z.ZodType<T>): Promise<T | undefined> {
    return this.#core.request({ method: "GET", path, responseSchema: schema }).catch((error: unknown) => {
      if (error instanceof AuthenticationError) throw error;
      return undefined;
    });
  }

  /** GET /_simulator/health (open): an agent-iac simulator's own word, else undefined. */
  async health(): Promise<SimulatorHealth | undefined> {
    const body = await this.#get("/_simulator/health", simulatorHealth).catch(() => undefined);
    return body?.simulator === "agent-iac" ? body : undefined;
  }

  /** Who serves the address: its process, data file and directory, when it is a simulator. */
  async probe(): Promise<Probe> {
    try {
      const info = await this.#core.request({ method: "GET", path: "/_simulator/info", responseSchema: simulatorInfo });
      return { kind: "simulator", info };
    } catch (error) {
      if (error instanceof ConnectionError && !error.requestSent) return { kind: "none" };
      // A simulator that refuses the key still says what it is on its open health route.
      if (error instanceof AuthenticationError && (await this.health())) return { kind: "refused" };
      const answer =
        error instanceof ApiError && error.status !== undefined
          ? `HTTP ${error.status} to GET /_simulator/info`
          : error instanceof ConnectionError
            ? `the connection failed after the request (${error.networkCode ?? "no code"})`
            : `no answer a simulator gives (${error instanceof Error ? error.name : "unknown error"})`;
      return { kind: "other", answer };
    }
  }

  /** The ids of every agent it holds; undefined when it cannot say. */
  async agentIds(): Promise<Set<string> | undefined> {
    const listed = await this.#get("/_simulator/agents", simulatorAgents).catch(() => undefined);
    return listed && new Set([...listed.conversational, ...listed.procedural].map((agent) => agent.id));
  }

  /** The procedures' post_url deliveries it attempted; undefined when it cannot say. */
  async deliveries(): Promise<SimulatorDelivery[] | undefined> {
    return (await this.#get("/_simulator/deliveries", simulatorDeliveries).catch(() => undefined))?.deliveries;
  }

  close(): Promise<void> {
    return this.#core.close();
  }
}

/** One admin read on a fresh client, closed after it. */
export async function withSimulatorAdmin<T>(
  baseUrl: string,
  apiKey: string | undefined,
  read: (admin: SimulatorAdmin) => Promise<T>,
): Promise<T> {
  const admin = new SimulatorAdmin(baseUrl, apiKey);
  try {
    return await read(admin);
  } finally {
    await admin.close();
  }
}
