// A failed `pulumi up` of `start` is one clean message: redirected to a file (not a terminal), the
// output holds no escape sequence, no inspected object or promise, no line twice, and names the
// agent, the service's reason and its request id.
import { spawn } from "node:child_process";
import { open, readFile } from "node:fs/promises";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type AgentsProject, agentsProject } from "../../helpers/agents-project.ts";
import { CLI } from "../../helpers/cli.ts";
import { type PulumiSandbox, pulumiSandbox } from "../../helpers/pulumi.ts";
import { simulatorCall, startTestSimulator } from "../../helpers/simulator.ts";

const API_KEY = "sk-failed-up-e2e-71c4b2a09d";

describe("a failed `up` (real Pulumi CLI, a create refused by the simulator)", { timeout: 300_000 }, () => {
  let sandbox: PulumiSandbox;
  let sim: Awaited<ReturnType<typeof startTestSimulator>>;
  let project: AgentsProject;

  beforeAll(async () => {
    sandbox = await pulumiSandbox();
    sim = await startTestSimulator({ port: 0, apiKey: API_KEY, eventDelayMs: 1, quiet: true });
    project = await agentsProject(sandbox, { baseUrl: sim.url, apiKey: API_KEY });
  }, 300_000);
  afterAll(async () => {
    await project?.cleanup();
    await sim?.close();
    await sandbox?.cleanup();
  });

  it("is one message in a redirected file: no ESC byte, no `Promise {`, no `<ref *`, no line twice", async () => {
    await simulatorCall(sim, "POST", "/_simulator/faults", {
      route: "POST /procedural_agents",
      count: 1,
      status: 400,
    });
    const file = path.join(project.dir, "start.log");
    const handle = await open(file, "w");
    // FORCE_COLOR as a CI runner may set it: the file is still no terminal.
    const env: NodeJS.ProcessEnv = { ...process.env, ...sandbox.env, AGENT_IAC_API_KEY: API_KEY, FORCE_COLOR: "1" };
    delete env.NO_COLOR;
    const child = spawn(process.execPath, [CLI, "start", "--stack", "test"], {
      cwd: project.dir,
      env,
      stdio: ["ignore", handle.fd, handle.fd],
    });
    const code = await new Promise<number | null>((resolve) => child.once("exit", resolve));
    await handle.close();
    const text = await readFile(file, "utf8");
    expect(code, text).toBe(3);
    expect(text).not.toContain("\u001b");
    expect(text).not.toContain("Promise {");
    expect(text).not.toContain("<ref *");
    expect(text).not.toMatch(/^\s+at /m);
    const lines = text.split("\n").filter((line) => line.trim() !== "");
    const twice = lines.filter((line, i) => lines.indexOf(line) !== i);
    expect(twice, text).toEqual([]);
    // The agent, the service's reason and its request id.
    expect(text).toMatch(/could not create procedural agent "[^"]+"/);
    expect(text).toMatch(/→ 400/);
    expect(text).toMatch(/req_[A-Za-z0-9]+/);
  });
});
