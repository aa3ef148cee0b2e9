// The command line at its edges (issue 30): a closed stdout, mistyped flags and commands, and an old
// Node on the package path. Each runs the real command as a child process.
import { execFile } from "node:child_process";
import { existsSync } from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createClient } from "../../../src/api/index.ts";
import { projectRoot } from "../../../src/workspace/index.ts";
import { CLI, runCli, runInProcess } from "../../helpers/cli.ts";
import { simulatorCall, startTestSimulator } from "../../helpers/simulator.ts";

type Sim = Awaited<ReturnType<typeof startTestSimulator>>;

function sh(script: string, env: NodeJS.ProcessEnv): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile("bash", ["-c", script], { cwd: projectRoot, env, maxBuffer: 16 << 20 }, (error, stdout, stderr) => {
      resolve({ code: error ? (typeof error.code === "number" ? error.code : -1) : 0, stdout, stderr });
    });
  });
}

describe("a closed stdout", () => {
  let sim: Sim;
  beforeAll(async () => {
    sim = await startTestSimulator({ eventDelayMs: 1 });
    const client = createClient({ baseUrl: sim.url, apiKey: sim.apiKey });
    const notes = await client.proceduralAgents.create({ name: "notes", description: "d", config: {} });
    const agent = await client.conversationalAgents.create({
      name: "pipe",
      description: "d",
      config: { personas: [{ name: "Ada" }] },
      postprocess_agents: [notes.id],
    });
    // Enough procedures that their NDJSON outgrows a pipe's buffer (64 KiB) many times over.
    await simulatorCall(sim, "POST", "/_simulator/traffic", { agent_id: agent.id, count: 1500, livemode: false });
  });
  afterAll(async () => {
    await sim?.close();
  });

  it("`procedures list --json | head -3` ends quietly with exit 0 (EPIPE), as Unix tools do", async () => {
    const env = { ...process.env, NO_COLOR: "1", AGENT_IAC_API_KEY: sim.apiKey };
    const whole = await runCli(["procedures", "list", "--json", "--base-url", sim.url], { env });
    expect(whole.code, whole.stderr).toBe(0);
    expect(whole.stdout.length).toBeGreaterThan(256 * 1024);
    const piped = await sh(
      `"${process.execPath}" "${CLI}" procedures list --json --base-url "${sim.url}" | head -3; echo "exit=\${PIPESTATUS[0]}" >&2`,
      env,
    );
    expect(piped.stdout.trim().split("\n")).toHaveLength(3);
    expect(piped.stderr).toMatch(/^exit=0$/m);
    expect(piped.stderr).not.toMatch(/EPIPE|Error/);
  });
});

describe("mistyped words", () => {
  it("an unknown flag names the nearest one", async () => {
    const result = await runInProcess(["smoke", "--stak", "dev"]);
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/^agent-iac smoke: unknown option --stak: did you mean --stack\?$/m);
    expect(result.stderr).not.toMatch(/To specify a positional argument/);
  });

  it("an unknown command and subcommand name the nearest ones", async () => {
    const command = await runInProcess(["smok"]);
    expect(command.code).toBe(2);
    expect(command.stderr).toMatch(/unknown command "smok": did you mean "smoke"\?/);
    const sub = await runInProcess(["procedures", "lst"]);
    expect(sub.code).toBe(2);
    expect(sub.stderr).toMatch(/unknown subcommand "lst": did you mean "list"\?/);
    const far = await runInProcess(["deploy-everything"]);
    expect(far.stderr).toMatch(/unknown command "deploy-everything"\n/);
  });
});

describe("the package path on an old Node", () => {
  // The machines ship Node 20 as the system node; the package needs 22.12 (bin/agent-iac.js checks it).
  const oldNode = ["/usr/bin/node", "/usr/local/bin/node"].find((file) => existsSync(file));

  it("bin/agent-iac.js says which Node it needs instead of a raw ERR_UNKNOWN_FILE_EXTENSION stack", async () => {
    expect(oldNode, "a system Node to run the check with").toBeDefined();
    const version = await sh(`"${oldNode}" --version`, process.env);
    const major = Number(/^v(\d+)/.exec(version.stdout)?.[1]);
    const result = await sh(`"${oldNode}" "${path.join(projectRoot, "bin", "agent-iac.js")}" --help`, process.env);
    if (major < 22) {
      expect(result.code).toBe(2);
      expect(result.stderr).toMatch(/^agent-iac needs Node >= 22\.12 \(this is Node \d+\./m);
      expect(result.stderr).not.toMatch(/ERR_UNKNOWN_FILE_EXTENSION|\n\s+at /);
    } else {
      expect(result.code, result.stderr).toBe(0);
      expect(result.stdout).toMatch(/^usage: agent-iac <command>/);
    }
  });
});
