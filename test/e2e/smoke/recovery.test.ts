// Recovery advice that recovers (issue 42): after the service lost the stack's agents (a reset
// simulator), `smoke` names the versions it does not know and prints ONE command that creates
// again every agent that must be — the procedural agents linked to a conversational one too, first —
// and that command, run as printed through a shell with the real Pulumi CLI, is followed by a
// passing `smoke`.
import { execFile } from "node:child_process";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ensurePulumi } from "../../../src/workspace/index.ts";
import { type AgentsProject, agentsProject, deployStack } from "../../helpers/agents-project.ts";
import { runCli } from "../../helpers/cli.ts";
import { type PulumiSandbox, pulumiSandbox } from "../../helpers/pulumi.ts";
import { simulatorCall, startTestSimulator, storedAgents } from "../../helpers/simulator.ts";

const API_KEY = "sk-recovery-e2e-71c0e94ab3";

/** Runs a command line through /bin/sh, as a user pastes it. */
function shell(command: string, options: { cwd: string; env: NodeJS.ProcessEnv }) {
  return new Promise<{ code: number; stdout: string; stderr: string }>((resolve) => {
    execFile("/bin/sh", ["-c", command], { ...options, maxBuffer: 16 << 20 }, (error, stdout, stderr) => {
      resolve({ code: error ? (typeof error.code === "number" ? error.code : -1) : 0, stdout, stderr });
    });
  });
}

describe("recovery from a service that lost the stack's agents", () => {
  let sandbox: PulumiSandbox;
  let sim: Awaited<ReturnType<typeof startTestSimulator>>;
  let project: AgentsProject;
  let env: NodeJS.ProcessEnv;
  const printed: string[] = [];

  beforeAll(async () => {
    const pulumiDir = await ensurePulumi();
    sandbox = await pulumiSandbox();
    sim = await startTestSimulator({ port: 0, apiKey: API_KEY, eventDelayMs: 1, quiet: true });
    project = await agentsProject(sandbox, { baseUrl: sim.url, apiKey: API_KEY });
    await deployStack(project.stack);
    env = {
      ...process.env,
      ...sandbox.env,
      AGENT_IAC_API_KEY: API_KEY,
      PATH: `${pulumiDir}${path.delimiter}${process.env.PATH ?? ""}`,
      NO_COLOR: "1",
    };
  });
  afterAll(async () => {
    await project?.cleanup();
    await sim?.close();
    await sandbox?.cleanup();
  });

  it("smoke prints the one command that restores the stack; run as printed, the next smoke passes", async () => {
    await simulatorCall(sim, "POST", "/_simulator/reset");
    const lost = await runCli(["smoke", "--stack", "test"], { cwd: project.dir, env });
    printed.push(lost.stdout, lost.stderr);
    expect(lost.code).toBe(3);
    expect(lost.stderr).toContain("the service does not know versions that stack test pins");
    expect(lost.stderr).toMatch(/^ {2}support: ca_\S+@v1$/m);
    expect(lost.stderr).toContain("with the procedural agents linked to them: call-summary, qa-scorer");
    const commands = lost.stderr.split("\n").filter((line) => /^\s+pulumi up /.test(line));
    // One command, not one per agent: the procedural agents first, then the conversational ones.
    expect(commands).toHaveLength(1);
    const command = commands[0]?.trim() ?? "";
    const order = [...command.matchAll(/--replace '[^']+::([\w-]+)'/g)].map((m) => m[1]);
    expect(order).toEqual(["call-summary", "qa-scorer", "booking", "support"]);

    const recovered = await shell(command, { cwd: project.dir, env });
    printed.push(recovered.stdout, recovered.stderr);
    expect(recovered.code, recovered.stderr + recovered.stdout).toBe(0);
    const stored = await storedAgents(sim);
    expect(stored.conversational).toHaveLength(2);
    expect(stored.procedural).toHaveLength(2);

    const again = await runCli(["smoke", "--stack", "test"], { cwd: project.dir, env });
    printed.push(again.stdout, again.stderr);
    expect(again.code, again.stderr).toBe(0);
    expect(again.stdout.trim().split("\n").at(-1)).toMatch(/^\d+ passed, 0 failed$/);
    expect(again.stderr).not.toContain("does not know");
  });

  it("never writes the API key", () => {
    for (const text of printed) expect(text).not.toContain(API_KEY);
  });
});
