// Persistence across restarts (--data), and `agent-iac service` as a process.
import { type ChildProcess, spawn } from "node:child_process";
import { mkdtemp, readdir, readFile, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Simulator, startSimulator } from "../../src/simulator/index.ts";
import { CLI, runCli } from "../helpers/cli.ts";
import {
  allEvents,
  createConversation,
  createConversational,
  createProcedural,
  ok,
  readSse,
  types,
  VERSION,
  waitFor,
} from "./helpers.ts";

const KEY = "sk-persist-7d2a11";
let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), "agent-iac-sim-"));
});
afterAll(() => rm(dir, { recursive: true, force: true }));

describe("persistence with a data file", () => {
  it("a restart keeps agents, conversations with their events, procedures, feedbacks, tokens and the service id", async () => {
    const file = path.join(dir, "state.json");
    const first = await startSimulator({ port: 0, apiKey: KEY, dataFile: file, eventDelayMs: 1, quiet: true });
    let before: Record<string, unknown>;
    let conversationId: string;
    let token: string;
    try {
      const pa = await createProcedural(first, {
        output: { output_schema: { type: "object", properties: { summary: { type: "string" } } } },
      });
      const ca = await createConversational(first, { postprocess_agents: [pa.id] });
      const created = await createConversation(first, ca.id);
      conversationId = created.id;
      token = created.channel.token;
      await allEvents(first, created.id);
      await waitFor(async () => (await ok(first, "GET", "/procedures")).page[0]?.status === "completed");
      await ok(first, "POST", "/_simulator/feedbacks", {
        conversation_id: created.id,
        rating: "good",
        reasons: ["fast"],
      });
      before = await snapshot(first, created.id);
    } finally {
      await first.close();
    }
    expect((await readdir(dir)).filter((name) => name.endsWith(".tmp"))).toEqual([]);
    const text = await readFile(file, "utf8");
    expect(text).not.toContain(token);
    expect(text).not.toContain(KEY);

    const second = await startSimulator({ port: 0, apiKey: KEY, dataFile: file, eventDelayMs: 1, quiet: true });
    try {
      expect(second.serviceId).toBe(before.serviceId);
      expect(await snapshot(second, conversationId)).toEqual({ ...before, serviceId: second.serviceId });
      // The stream token issued before the restart still opens its stream.
      const sse = await readSse(`${second.url}/conversations/${conversationId}/events?token=${token}`, {
        "service-version": VERSION,
      });
      expect(sse.status).toBe(200);
      expect(types(sse.events).at(-1)).toBe("conversation.ended");
      // Stored agents still run conversations, by bare id and by version.
      const agents = await ok(second, "GET", "/_simulator/agents");
      const again = await createConversation(second, `${agents.conversational[0].id}@v1`);
      expect(types(await allEvents(second, again.id)).at(-1)).toBe("conversation.ended");
    } finally {
      await second.close();
    }
  });

  it("a conversation running at shutdown is failed (interrupted) on restart, and its stream ends", async () => {
    const file = path.join(dir, "interrupted.json");
    const first = await startSimulator({ port: 0, apiKey: KEY, dataFile: file, eventDelayMs: 1, quiet: true });
    let id: string;
    try {
      const ca = await createConversational(first);
      id = (
        await createConversation(first, ca.id, { context: { simulation: { wait_for_user: true, user_turns: [] } } })
      ).id;
      await waitFor(async () => (await ok(first, "GET", "/conversations")).data[0].status === "in_progress");
    } finally {
      await first.close();
    }
    const second = await startSimulator({ port: 0, apiKey: KEY, dataFile: file, eventDelayMs: 1, quiet: true });
    try {
      const item = (await ok(second, "GET", "/conversations")).data[0];
      expect(item).toMatchObject({ id, status: "failed", failure_reason: expect.stringMatching(/interrupted/) });
      expect(types(await allEvents(second, id)).at(-1)).toBe("conversation.ended");
    } finally {
      await second.close();
    }
  });
});

async function snapshot(sim: Simulator, conversationId: string) {
  return {
    serviceId: (await ok(sim, "GET", "/_simulator/info")).service_id,
    agents: await ok(sim, "GET", "/_simulator/agents"),
    conversations: await ok(sim, "GET", "/conversations"),
    events: await allEvents(sim, conversationId),
    procedures: await ok(sim, "GET", "/procedures"),
    scoped: await ok(sim, "GET", `/conversations/${conversationId}/procedures`),
    feedbacks: await ok(sim, "GET", `/feedbacks?service_id=${sim.serviceId}`),
  };
}

describe("agent-iac service", () => {
  const cli = (args: string[], env: Record<string, string> = {}) =>
    runCli(["service", ...args], { env: { ...process.env, AGENT_IAC_API_KEY: "", ...env } });

  it("--help, bad flags and the dev key on a non-loopback host", async () => {
    const help = await cli(["--help"]);
    expect(help.code).toBe(0);
    expect(help.stdout).toContain("--event-delay-ms");
    const bad = await cli(["--port", "eighty"]);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/--port/);
    const unknown = await cli(["--colour"]);
    expect(unknown.code).toBe(2);
    const exposed = await cli(["--host", "0.0.0.0", "--port", "0"]);
    expect(exposed.code).toBe(2);
    expect(exposed.stderr).toMatch(/dev key/);
  });

  it("--port 0 prints the chosen address and service id (never the key); SIGTERM stops it and flushes --data", async () => {
    const file = path.join(dir, "cli.json");
    const child = spawn(process.execPath, [CLI, "service", "--port", "0", "--data", file, "--event-delay-ms", "1"], {
      env: { ...process.env, AGENT_IAC_API_KEY: KEY },
    });
    try {
      let stdout = "";
      child.stdout.on("data", (chunk) => {
        stdout += chunk;
      });
      const url = await waitFor(
        async () => /listening on (http:\/\/127\.0\.0\.1:\d+) \(service id (svc_\w+)\)/.exec(stdout)?.[1],
      );
      expect(url).not.toMatch(/:0$/);
      expect(stdout).toContain("AGENT_IAC_API_KEY");
      const sim = { url, apiKey: KEY, serviceId: "", close: async () => {} };
      const ca = await createConversational(sim);
      const exit = new Promise<number | null>((resolve) => child.once("exit", resolve));
      child.kill("SIGTERM");
      expect(await exit).toBe(0);
      expect(stdout).toContain("stopped (SIGTERM)");
      expect(stdout).not.toContain(KEY);
      const state = JSON.parse(await readFile(file, "utf8"));
      expect(state.agents.map((a: { id: string }) => a.id)).toEqual([ca.id]);
    } finally {
      stop(child);
    }
  });
});

function stop(child: ChildProcess) {
  if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
}
