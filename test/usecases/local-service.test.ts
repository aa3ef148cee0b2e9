// Which service `start` deploys to (local-service.ts): a remote address as it is; on a loopback
// address a simulator already serving it (reused), anything else answering there, or — for the dev
// stack only — a simulator of its own; and the refusals before anything is created. Real
// simulators on port 0 with data files in temp projects, a plain HTTP server for "something else".
import { mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parse } from "yaml";
import { ConfigError } from "../../src/errors/index.ts";
import type { HeldAgent } from "../../src/provider/index.ts";
import { type Connection, type ProjectContext, projectContext } from "../../src/settings/index.ts";
import { readSimulatorLock, type Simulator } from "../../src/simulator/index.ts";
import { checkReusedSimulator, failedDeliveries, localService } from "../../src/usecases/local-service.ts";
import { withSimulatorAdmin } from "../../src/usecases/simulator-admin.ts";
import { rejectedWith } from "../helpers/rejection.ts";
import { startTestSimulator } from "../helpers/simulator.ts";
import {
  allEvents,
  createConversation,
  createConversational,
  createProcedural,
  ok,
  waitFor,
} from "../simulator/helpers.ts";

const dirs: string[] = [];
let project: ProjectContext;
/** A simulator that serves `project` (its data file, its directory), as `npm run service` would. */
let sim: Simulator;
let other: Server;
let otherUrl: string;
/** An address where nothing listens. */
let nobody: string;

async function tempProject(files: Record<string, string> = {}): Promise<ProjectContext> {
  const dir = await mkdtemp(path.join(os.tmpdir(), "local-service-"));
  dirs.push(dir);
  for (const [file, text] of Object.entries(files)) await writeFile(path.join(dir, file), text);
  return projectContext({ cwd: dir, env: {} });
}

const loopback = (baseUrl: string | undefined, apiKey?: string): Connection => ({
  baseUrl,
  apiKey,
  serviceVersion: undefined,
  keySource: apiKey ? "AGENT_IAC_API_KEY" : undefined,
  loopback: true,
});

const rejection = (promise: Promise<unknown>) => rejectedWith(promise, ConfigError);

beforeAll(async () => {
  project = await tempProject();
  await mkdir(project.stateDir, { recursive: true });
  sim = await startTestSimulator({
    apiKey: "sk-local",
    cwd: project.dir,
    dataFile: path.join(project.stateDir, "simulator.json"),
  });
  other = createServer((_request, response) => {
    response.writeHead(404, { "content-type": "application/json" });
    response.end('{"message":"not here"}');
  });
  await new Promise<void>((resolve) => other.listen(0, "127.0.0.1", resolve));
  otherUrl = `http://127.0.0.1:${(other.address() as AddressInfo).port}`;
  const closed = createServer();
  await new Promise<void>((resolve) => closed.listen(0, "127.0.0.1", resolve));
  nobody = `http://127.0.0.1:${(closed.address() as AddressInfo).port}`;
  await new Promise((resolve) => closed.close(resolve));
});
afterAll(async () => {
  await sim?.close();
  other?.closeAllConnections();
  await new Promise((resolve) => other?.close(resolve));
  for (const dir of dirs) await rm(dir, { recursive: true, force: true });
});

describe("localService", () => {
  it("a remote address is used as it is: no simulator, nothing said; without a key it is refused", async () => {
    const said: string[] = [];
    const remote = { ...loopback("https://agents.example.com", "sk-remote"), loopback: false };
    const service = await localService(project, remote, "prod", (line) => said.push(line));
    expect(service).toMatchObject({
      connection: { baseUrl: "https://agents.example.com", apiKey: "sk-remote" },
      simulated: false,
    });
    expect([service.simulator, service.reused, service.configFile, said]).toEqual([
      undefined,
      undefined,
      undefined,
      [],
    ]);
    const error = await rejection(localService(project, { ...remote, apiKey: undefined }, "prod", () => {}));
    expect(error.message).toMatch(/^no API key for stack prod/);
  });

  it("a simulator already serving the stack's address is reused, and said whose it is", async () => {
    const said: string[] = [];
    const service = await localService(project, loopback(sim.url, "sk-local"), "qa", (line) => said.push(line));
    expect(service).toMatchObject({ simulated: true, connection: { baseUrl: sim.url, apiKey: "sk-local" } });
    expect(service.reused?.info).toMatchObject({ pid: process.pid, service_id: sim.serviceId });
    expect(service.simulator).toBeUndefined();
    expect(said).toEqual([
      `using the simulator already serving ${sim.url} (process ${process.pid}, data file .agent-iac/simulator.json, started in this directory, service id ${sim.serviceId})`,
    ]);
    await service.close();
    // Reused, not owned: closing the run leaves it serving.
    expect(await withSimulatorAdmin(sim.url, "sk-local", (admin) => admin.probe())).toMatchObject({
      kind: "simulator",
    });
  });

  it("a simulator that refuses the stack's key stops the run", async () => {
    const error = await rejection(localService(project, loopback(sim.url, "sk-other"), "dev", () => {}));
    expect(error.message).toBe(`the simulator serving ${sim.url} refuses the stack's API key`);
    expect(error.hint).toMatch(/AGENT_IAC_API_KEY/);
  });

  it("something else answering at a loopback address (a tunnel, a port-forward) is used, never replaced", async () => {
    const fresh = await tempProject();
    const said: string[] = [];
    const service = await localService(fresh, loopback(otherUrl, "sk-x"), "dev", (line) => said.push(line));
    expect(service).toMatchObject({ simulated: false, connection: { baseUrl: otherUrl } });
    expect(service.simulator).toBeUndefined();
    expect(said).toEqual([
      `using the service answering at ${otherUrl} (not agent-iac's simulator: HTTP 404 to GET /_simulator/info) as stack dev's service`,
    ]);
  });

  it("the project's data file held by a simulator at another address than the stack's is refused", async () => {
    const error = await rejection(localService(project, loopback(nobody, "sk-local"), "dev", () => {}));
    expect(error.message).toBe(
      `.agent-iac/simulator.json is held by the simulator of process ${process.pid} at ${sim.url}, not at the stack's address ${nobody}`,
    );
    expect(error.hint).toContain(`npm run service -- --port ${new URL(nobody).port} --data .agent-iac/simulator.json`);
  });

  it("a stack other than dev never gets a simulator of its own: nothing answering, or no address", async () => {
    const fresh = await tempProject();
    const port = new URL(nobody).port;
    const silent = await rejection(localService(fresh, loopback(nobody, "k"), "qa", () => {}));
    expect(silent.message).toBe(
      `nothing answers at ${nobody} (stack qa's agents:baseUrl); start serves only the dev stack with a simulator of its own, so stack qa was not deployed`,
    );
    expect(silent.hint).toContain(
      `npm run service -- --host 127.0.0.1 --port ${port} --data .agent-iac/qa.simulator.json`,
    );
    expect(silent.hint).toContain("pulumi config set agents:baseUrl <url> --stack qa");
    const unset = await rejection(localService(fresh, loopback(undefined), "qa", () => {}));
    expect(unset.message).toMatch(/^stack qa sets no agents:baseUrl; /);
    expect(unset.hint).toMatch(/for a simulator: npm run service\)/);
  });

  it("the dev stack with nothing answering: a simulator of its own, on its data file, with a stack file pointing at it", async () => {
    const fresh = await tempProject({
      "Pulumi.dev.yaml": `config:\n  agents:baseUrl: ${nobody}\n  agents:judgeModel: kept-model\n`,
    });
    const said: string[] = [];
    const service = await localService(fresh, loopback(nobody, "sk-dev"), "dev", (line) => said.push(line));
    try {
      const url = service.simulator?.url as string;
      expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
      expect(url).not.toBe(nobody);
      expect(service).toMatchObject({ simulated: true, connection: { baseUrl: url, apiKey: "sk-dev" } });
      expect(said).toEqual([expect.stringMatching(/^local simulator: .* data file \.agent-iac\/simulator\.json\)$/)]);
      // The run's copy of the stack file: the started simulator's address, the other settings kept.
      expect(service.configFile).toBe(path.join(fresh.stateDir, "Pulumi.dev.run.yaml"));
      expect(parse(await readFile(service.configFile as string, "utf8"))).toEqual({
        config: { "agents:baseUrl": url, "agents:judgeModel": "kept-model" },
      });
      expect((await readSimulatorLock(path.join(fresh.stateDir, "simulator.json")))?.url).toBe(url);
    } finally {
      await service.close();
    }
    expect(await withSimulatorAdmin(service.connection.baseUrl, "sk-dev", (admin) => admin.probe())).toEqual({
      kind: "none",
    });
  });
});

const agent = (key: string, id: string): HeldAgent => ({
  key,
  kind: "conversational",
  id,
  version_id: `${id}-v1`,
  name: key,
  postprocess_agents: [],
  urn: `urn:pulumi:dev::agents::agents:Conversational::${key}`,
});

describe("checkReusedSimulator", () => {
  it("a reused simulator that does not know the stack's agents stops the deploy, with who it is and both ways out", async () => {
    const known = await createConversational(sim);
    const held = { desk: agent("desk", known.id), lobby: agent("lobby", "ca_unknown") };
    const service = await localService(project, loopback(sim.url, "sk-local"), "dev", () => {});
    const error = await rejection(checkReusedSimulator(service, held, { name: "dev", project }));
    expect(error.message).toContain(`does not know 1 of the agents stack dev pins:\n  lobby: ca_unknown-v1\n`);
    expect(error.message).toContain("nothing was deployed and no call was placed");
    expect(error.hint).toContain(`kill ${process.pid}`);
    expect(error.hint).toContain(
      "pulumi up --yes --stack dev --replace 'urn:pulumi:dev::agents::agents:Conversational::lobby'",
    );
    // All known: nothing to say.
    await expect(checkReusedSimulator(service, { desk: held.desk }, { name: "dev", project })).resolves.toBeUndefined();
  });

  it("a reused simulator on another checkout's data file is said to be probably that checkout's", async () => {
    const elsewhere = await tempProject();
    await mkdir(elsewhere.stateDir, { recursive: true });
    const theirs = await startTestSimulator({
      apiKey: "sk-local",
      cwd: elsewhere.dir,
      dataFile: path.join(elsewhere.stateDir, "simulator.json"),
    });
    try {
      const fresh = await tempProject();
      const service = await localService(fresh, loopback(theirs.url, "sk-local"), "dev", () => {});
      const error = await rejection(
        checkReusedSimulator(service, { lobby: agent("lobby", "ca_unknown") }, { name: "dev", project: fresh }),
      );
      expect(error.message).toContain(
        `started in ${elsewhere.dir}, service id ${theirs.serviceId}) does not know 1 of the agents stack dev pins`,
      );
      expect(error.message).toContain(
        "it is probably another checkout's simulator (its data file is not .agent-iac/simulator.json)",
      );
    } finally {
      await theirs.close();
    }
  });

  it("a service this run did not find running is not asked", async () => {
    const held = { lobby: agent("lobby", "ca_unknown") };
    const remote = await localService(
      project,
      { ...loopback("https://agents.example.com", "k"), loopback: false },
      "prod",
      () => {},
    );
    await expect(checkReusedSimulator(remote, held, { name: "prod", project })).resolves.toBeUndefined();
  });
});

describe("failedDeliveries", () => {
  it("only this run's conversations' deliveries, and which of them failed", async () => {
    const output = { output_schema: null };
    const sink = await createProcedural(sim, {
      output: { ...output, post_url: "http://127.0.0.1/_simulator/hooks/a" },
    });
    const remote = await createProcedural(sim, { output: { ...output, post_url: "http://example.com/hook" } });
    const desk = await createConversational(sim, { postprocess_agents: [sink.id, remote.id] });
    const ours = await createConversation(sim, desk.id);
    const theirs = await createConversation(sim, desk.id);
    await Promise.all([allEvents(sim, ours.id), allEvents(sim, theirs.id)]);
    // Procedures run after the conversation ends: wait until both conversations' deliveries are recorded.
    await waitFor(async () => {
      const { deliveries } = await ok<{ deliveries: unknown[] }>(sim, "GET", "/_simulator/deliveries");
      return deliveries.length >= 4;
    });
    const connection = { baseUrl: sim.url, apiKey: "sk-local" };
    const result = await failedDeliveries(connection, new Set([ours.id]));
    expect(result.total).toBe(2);
    expect(result.failed).toEqual([
      expect.objectContaining({ conversation_id: ours.id, url: "http://example.com/hook", ok: false }),
    ]);
    expect(await failedDeliveries(connection, new Set(["conv_elsewhere"]))).toEqual({ failed: [], total: 0 });
    // Where no simulator answers, none is known of.
    expect(await failedDeliveries({ baseUrl: otherUrl, apiKey: "k" }, new Set([ours.id]))).toEqual({
      failed: [],
      total: 0,
    });
  });
});
