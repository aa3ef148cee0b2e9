// The example agents' smoke scenarios pass against the simulator's dialogue convention, for the
// dev stack and with the prod overlays (agents created through the client, without Pulumi).
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Client, createClient } from "../../src/api/index.ts";
import { callerShape } from "../../src/caller/index.ts";
import { loadAgents } from "../../src/definitions/index.ts";
import { runSmoke } from "../../src/smoke/index.ts";
import { SIMULATOR_SHAPES } from "../helpers/caller.ts";
import { createAgents, startTestSimulator, testProfile } from "../helpers/simulator.ts";

const AGENTS = path.resolve(import.meta.dirname, "../../agents");

describe("the example smoke scenarios", () => {
  let sim: Awaited<ReturnType<typeof startTestSimulator>>;
  let client: Client;
  beforeAll(async () => {
    sim = await startTestSimulator({ port: 0, eventDelayMs: 1, quiet: true });
    client = createClient({ baseUrl: sim.url, apiKey: sim.apiKey });
  });
  afterAll(async () => {
    await client?.close();
    await sim?.close();
  });

  it.each(["dev", "prod"])("all pass on stack %s, each with assertions", async (stack) => {
    const { agents, errors } = await loadAgents(AGENTS, { stack, from: process.cwd() });
    expect(errors).toEqual([]);
    const outputs = await createAgents(client, agents);
    let printed = "";
    const { results, exitCode } = await runSmoke({
      definitions: agents,
      held: outputs,
      selection: {},
      connection: { baseUrl: sim.url, apiKey: sim.apiKey },
      concurrency: 4,
      out: { write: (text: string) => (printed += text), isTTY: false },
      // The examples' callers, in the test profile's control-message shape.
      caller: { callerShape: callerShape(SIMULATOR_SHAPES[testProfile()].config, sim.url) },
    });
    expect(exitCode, printed).toBe(0);
    expect(results.length).toBe(agents.reduce((n, a) => n + a.smoke.length, 0));
    for (const result of results) {
      expect(result.status, printed).toBe("passed");
      expect(result.assertions.length).toBeGreaterThan(0);
    }
  });
});
