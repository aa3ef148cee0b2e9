// The simulator's own routes as the use cases read them (what `start` decides on): which kind of
// thing answers an address, which agents a simulator holds, its deliveries, and nothing (no throw)
// where something else answers. A real simulator on port 0, and plain HTTP servers for the rest.
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createClient } from "../../src/api/index.ts";
import type { Simulator } from "../../src/simulator/index.ts";
import { withSimulatorAdmin } from "../../src/usecases/simulator-admin.ts";
import { startTestSimulator } from "../helpers/simulator.ts";

let sim: Simulator;
const servers: Server[] = [];
const ids: string[] = [];

/** A plain HTTP server on port 0 whose every answer `handle` writes. */
async function plainServer(handle: Parameters<typeof createServer>[1]): Promise<string> {
  const server = createServer(handle);
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

beforeAll(async () => {
  sim = await startTestSimulator({ apiKey: "sk-admin", cwd: "/srv/checkout" });
  const client = createClient({ baseUrl: sim.url, apiKey: sim.apiKey });
  try {
    const procedural = await client.proceduralAgents.create({ name: "Notes", description: "d", config: {} });
    ids.push(procedural.id);
  } finally {
    await client.close();
  }
});
afterAll(async () => {
  await sim?.close();
  for (const server of servers) {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  }
});

describe("SimulatorAdmin.probe", () => {
  it("a simulator with the key says who it is", async () => {
    const probe = await withSimulatorAdmin(sim.url, "sk-admin", (admin) => admin.probe());
    expect(probe).toMatchObject({
      kind: "simulator",
      info: { pid: process.pid, service_id: sim.serviceId, cwd: "/srv/checkout", data_file: null },
    });
  });

  it("a simulator that refuses the key is told from anything else by its open health route", async () => {
    expect(await withSimulatorAdmin(sim.url, "sk-wrong", (admin) => admin.probe())).toEqual({ kind: "refused" });
    // …which still answers, with the simulator's own word, without a key.
    expect(await withSimulatorAdmin(sim.url, undefined, (admin) => admin.health())).toMatchObject({
      simulator: "agent-iac",
      service_id: sim.serviceId,
    });
  });

  it("something else that answers is 'other', with how it answered", async () => {
    const notFound = await plainServer((_request, response) => {
      response.writeHead(404, { "content-type": "application/json" });
      response.end('{"error":"no"}');
    });
    expect(await withSimulatorAdmin(notFound, "k", (admin) => admin.probe())).toEqual({
      kind: "other",
      answer: "HTTP 404 to GET /_simulator/info",
    });
    // A 401 from something that is no simulator (its health route is not agent-iac's) is not "refused".
    const guarded = await plainServer((_request, response) => {
      response.writeHead(401, { "content-type": "application/json" });
      response.end('{"error":"who are you"}');
    });
    expect(await withSimulatorAdmin(guarded, "k", (admin) => admin.probe())).toEqual({
      kind: "other",
      answer: "HTTP 401 to GET /_simulator/info",
    });
    const hangsUp = await plainServer((request) => request.socket.destroy());
    expect(await withSimulatorAdmin(hangsUp, "k", (admin) => admin.probe())).toMatchObject({
      kind: "other",
      answer: expect.stringMatching(/^the connection failed after the request \(/),
    });
  });

  it("nothing listening is 'none'", async () => {
    const closed = await plainServer(() => {});
    const server = servers.pop() as Server;
    await new Promise((resolve) => server.close(resolve));
    expect(await withSimulatorAdmin(closed, "k", (admin) => admin.probe())).toEqual({ kind: "none" });
  });
});

describe("SimulatorAdmin reads", () => {
  it("the agent ids a simulator holds; undefined where it cannot say (no simulator, a refused key)", async () => {
    expect(await withSimulatorAdmin(sim.url, "sk-admin", (admin) => admin.agentIds())).toEqual(new Set(ids));
    expect(await withSimulatorAdmin(sim.url, "sk-wrong", (admin) => admin.agentIds())).toBeUndefined();
    const other = await plainServer((_request, response) => {
      response.writeHead(200, { "content-type": "application/json" });
      response.end('{"conversational": "not a list"}');
    });
    expect(await withSimulatorAdmin(other, "k", (admin) => admin.agentIds())).toBeUndefined();
    expect(await withSimulatorAdmin(other, "k", (admin) => admin.health())).toBeUndefined();
  });

  it("deliveries: none yet on a fresh simulator, undefined from anything else", async () => {
    expect(await withSimulatorAdmin(sim.url, "sk-admin", (admin) => admin.deliveries())).toEqual([]);
    const other = await plainServer((_request, response) => {
      response.writeHead(500);
      response.end();
    });
    expect(await withSimulatorAdmin(other, "k", (admin) => admin.deliveries())).toBeUndefined();
  });
});
