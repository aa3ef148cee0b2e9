// One data file, one simulator (issue 24 item 1), and the delivery sink (item 5).
import { spawn } from "node:child_process";
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  lockFileOf,
  probeSimulator,
  readSimulatorLock,
  SimulatorLockedError,
  startSimulator,
} from "../../src/simulator/index.ts";
import { createConversation, createConversational, createProcedural, ok, waitFor } from "./helpers.ts";

const KEY = "sk-lock";
const CLI = path.resolve("src/cli.ts");
let dir: string;

beforeAll(async () => {
  dir = await mkdtemp(path.join(tmpdir(), "sim-lock-"));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe("the data file's lock", () => {
  it("a second simulator on the same file is refused naming the holder; the first one's data stays intact", async () => {
    const file = path.join(dir, "shared.json");
    const first = await startSimulator({ port: 0, apiKey: KEY, dataFile: file, eventDelayMs: 1, quiet: true });
    try {
      const agent = await createProcedural(first);
      const held = await readSimulatorLock(file);
      expect(held).toMatchObject({ pid: process.pid, url: first.url, data_file: file });
      const second = startSimulator({ port: 0, apiKey: KEY, dataFile: file, quiet: true });
      await expect(second).rejects.toBeInstanceOf(SimulatorLockedError);
      await expect(second).rejects.toThrow(new RegExp(`process ${process.pid} at ${first.url}`));
      // The CLI: exit 2, naming pid and address; the first simulator keeps serving its data.
      const cli = await new Promise<{ code: number | null; stderr: string }>((resolve) => {
        const child = spawn(process.execPath, [CLI, "service", "--port", "0", "--data", file], {
          env: { ...process.env, AGENT_IAC_API_KEY: KEY },
        });
        let stderr = "";
        child.stderr.on("data", (c) => {
          stderr += c;
        });
        const timer = setTimeout(() => child.kill("SIGTERM"), 8000);
        child.on("exit", (code) => {
          clearTimeout(timer);
          resolve({ code, stderr });
        });
      });
      expect(cli.code).toBe(2);
      expect(cli.stderr).toContain(`process ${process.pid} at ${first.url}`);
      const agents = await ok(first, "GET", "/_simulator/agents");
      expect(agents.procedural.map((a: { id: string }) => a.id)).toEqual([agent.id]);
      expect(await probeSimulator(first.url)).toMatchObject({ ok: true, simulator: "agent-iac", profile: "default" });
    } finally {
      await first.close();
    }
    expect(await readSimulatorLock(file)).toBeUndefined();
    const state = JSON.parse(await readFile(file, "utf8"));
    expect(state.agents).toHaveLength(1);
  });

  it("a lock left by a process that no longer runs is taken over", async () => {
    const file = path.join(dir, "stale.json");
    const dead = await new Promise<number>((resolve) => {
      const child = spawn(process.execPath, ["-e", ""]);
      child.on("exit", () => resolve(child.pid as number));
    });
    await writeFile(lockFileOf(file), JSON.stringify({ pid: dead, url: "http://127.0.0.1:1", data_file: file }));
    expect(await readSimulatorLock(file)).toBeUndefined();
    const sim = await startSimulator({ port: 0, apiKey: KEY, dataFile: file, quiet: true });
    try {
      expect(await readSimulatorLock(file)).toMatchObject({ pid: process.pid, url: sim.url });
    } finally {
      await sim.close();
    }
  });

  it("probeSimulator finds nothing where no simulator listens", async () => {
    expect(await probeSimulator("http://127.0.0.1:1", 500)).toBeUndefined();
  });
});

describe("the delivery sink", () => {
  it("post_url on a loopback name with /_simulator/hooks/ is delivered to this simulator whatever the port", async () => {
    const sim = await startSimulator({ port: 0, apiKey: KEY, eventDelayMs: 1, quiet: true });
    try {
      const sink = await createProcedural(sim, {
        output: { post_url: "http://127.0.0.1:8787/_simulator/hooks/call-summary" },
      });
      const nowhere = await createProcedural(sim, { output: { post_url: "http://127.0.0.1:1/elsewhere" } }, "Lost");
      const ca = await createConversational(sim, { postprocess_agents: [sink.id, nowhere.id] });
      const conv = await createConversation(sim, ca.id);
      const deliveries = await waitFor(async () => {
        const body = await ok(sim, "GET", "/_simulator/deliveries");
        return body.deliveries.length === 2 && body;
      });
      expect(deliveries).toMatchObject({ ok: 1, failed: 1 });
      const hooks = await ok(sim, "GET", "/_simulator/hooks");
      expect(hooks.hooks).toEqual([
        {
          name: "call-summary",
          received_at: expect.any(String),
          body: expect.objectContaining({ conversation_id: conv.id, agent_id: sink.id, status: "completed" }),
        },
      ]);
      const failed = deliveries.deliveries.find((d: { ok: boolean }) => !d.ok);
      expect(failed).toMatchObject({ url: "http://127.0.0.1:1/elsewhere", status: null, error: expect.any(String) });
      // Anyone with the key can post to the sink too.
      await ok(sim, "POST", "/_simulator/hooks/manual", { hello: "world" });
      expect((await ok(sim, "GET", "/_simulator/hooks")).hooks.at(-1)).toMatchObject({
        name: "manual",
        body: { hello: "world" },
      });
    } finally {
      await sim.close();
    }
  });
});
