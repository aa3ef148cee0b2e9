// Interrupted or failed runs from their first moment (issue 41): a signal in the first second of
// `smoke`, `plan`, `watch` or `audit` — while the command's code still loads or the stack is read —
// exits 130 and leaves none of the earlier run's report files it was asked for (they are removed:
// this run wrote none; the line names each, under reports/ for a bare name); a `start` that fails
// leaves no earlier green reports/smoke.*. Real processes (signals and exit codes are the process
// boundary), the real Pulumi CLI and the simulator on port 0.
import { spawn } from "node:child_process";
import { mkdir, readFile, stat, writeFile } from "node:fs/promises";
import path from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type AgentsProject, agentsProject } from "../../helpers/agents-project.ts";
import { CLI, runCli, runInProcess } from "../../helpers/cli.ts";
import { type PulumiSandbox, pulumiSandbox } from "../../helpers/pulumi.ts";
import { startTestSimulator } from "../../helpers/simulator.ts";

const API_KEY = "sk-first-moment-e2e-7b21c4";
const EARLIER = "earlier-green-run-81d3";
const SLOW = 300_000;

type Run = { code: number | null; signal: NodeJS.Signals | null; stderr: string };

describe("an interrupted or failed run leaves no earlier run's reports, from its first moment", {
  timeout: SLOW,
}, () => {
  let sandbox: PulumiSandbox;
  let sim: Awaited<ReturnType<typeof startTestSimulator>>;
  let project: AgentsProject;

  const env = () => ({ ...process.env, ...sandbox.env, AGENT_IAC_API_KEY: API_KEY, NO_COLOR: "1" });
  const reports = () => path.join(project.dir, "reports");
  async function plant(names: string[]) {
    await mkdir(reports(), { recursive: true });
    for (const name of names) await writeFile(path.join(reports(), name), `${EARLIER}\n`);
  }
  async function expectGone(names: string[]) {
    for (const name of names) {
      await expect(stat(path.join(reports(), name)), name).rejects.toMatchObject({ code: "ENOENT" });
    }
  }

  /** Spawns the CLI and sends `signal` after `afterMs` (the command's code is still loading, or the stack read). */
  async function signalled(args: string[], signal: NodeJS.Signals, afterMs = 1000): Promise<Run> {
    const child = spawn(process.execPath, [CLI, ...args], { cwd: project.dir, env: env(), stdio: "pipe" });
    let stderr = "";
    child.stderr.on("data", (chunk) => {
      stderr += chunk;
    });
    child.stdout.resume();
    const exited = new Promise<[number | null, NodeJS.Signals | null]>((resolve) =>
      child.once("exit", (code, sig) => resolve([code, sig])),
    );
    const early = await Promise.race([exited, sleep(afterMs).then(() => undefined)]);
    expect(early, `exited before the signal:\n${stderr}`).toBeUndefined();
    child.kill(signal);
    const [code, sig] = await exited;
    return { code, signal: sig, stderr };
  }

  beforeAll(async () => {
    sandbox = await pulumiSandbox();
    sim = await startTestSimulator({ port: 0, apiKey: API_KEY, eventDelayMs: 1, quiet: true });
    project = await agentsProject(sandbox, { baseUrl: sim.url, apiKey: API_KEY });
  }, SLOW);
  afterAll(async () => {
    await project?.cleanup();
    await sim?.close();
    await sandbox?.cleanup();
  });

  const cases: { command: string; args: string[]; files: string[]; signal: NodeJS.Signals }[] = [
    {
      command: "smoke",
      args: ["smoke", "--stack", "test", "--json", "i4.json", "--junit", "i4.xml", "--html", "i4.html"],
      files: ["i4.xml", "i4.json", "i4.html"],
      signal: "SIGTERM",
    },
    {
      command: "plan",
      args: ["plan", "--stack", "test", "--markdown", "plan.md", "--json", "plan.json"],
      files: ["plan.md", "plan.json"],
      signal: "SIGINT",
    },
    {
      command: "watch",
      args: ["watch", "--stack", "test", "--json", "watch.json", "--markdown", "watch.md"],
      files: ["watch.json", "watch.md"],
      signal: "SIGINT",
    },
    {
      command: "audit",
      args: ["audit", "--stack", "test", "--json", "audit.json", "--markdown", "audit.md"],
      files: ["audit.json", "audit.md"],
      signal: "SIGINT",
    },
  ];
  for (const { command, args, files, signal } of cases) {
    it(`\`${command}\` stopped by ${signal} in its first second: exit 130, the earlier reports removed and named`, async () => {
      await plant(files);
      const run = await signalled(args, signal);
      expect(run.signal, run.stderr).toBeNull();
      expect(run.code, run.stderr).toBe(130);
      await expectGone(files);
      const removed = files.map((name) => `reports/${name}`).join(", ");
      expect(run.stderr.trim()).toBe(`interrupted (${signal}); no report written (${removed} removed: not this run's)`);
    });
  }

  it("a `start` that fails (nothing answers at the stack's address: exit 2) leaves no earlier green reports/smoke.*", async () => {
    const names = ["smoke.json", "smoke.junit.xml", "smoke.html"];
    await plant(names);
    await writeFile(path.join(project.dir, "Pulumi.down.yaml"), "config:\n  agents:baseUrl: http://127.0.0.1:9\n");
    const run = await runCli(["start", "--stack", "down"], { cwd: project.dir, env: env() });
    expect(run.code, run.stderr).toBe(2);
    await expectGone(names);
    // `--help` is no run: it clears nothing.
    await plant(names);
    expect((await runCli(["start", "--help"], { cwd: project.dir, env: env() })).code).toBe(0);
    for (const name of names) expect(await readFile(path.join(reports(), name), "utf8")).toBe(`${EARLIER}\n`);
  });

  it("a refused `report merge` leaves no earlier merged report; the reports it reads are never cleared", async () => {
    await plant(["merged.json", "merged.xml"]);
    await writeFile(path.join(project.dir, "shard.json"), '{"format":"agent-iac-report"}\n');
    const run = await runInProcess(
      ["report", "merge", "shard.json", "--json", "merged.json", "--junit", "merged.xml"],
      {
        cwd: project.dir,
        env: env(),
      },
    );
    expect(run.code, run.stderr).toBe(2);
    await expectGone(["merged.json", "merged.xml"]);
    expect(await readFile(path.join(project.dir, "shard.json"), "utf8")).toContain("agent-iac-report");
    // A merge writing over one of its inputs reads it first (and refuses it here): it is not removed.
    const input = path.join(reports(), "merged.json");
    await writeFile(input, '{"format":"agent-iac-report"}\n');
    const again = await runInProcess(["report", "merge", input, "--json", "merged.json"], {
      cwd: project.dir,
      env: env(),
    });
    expect(again.code, again.stderr).toBe(2);
    expect(again.stderr).toContain("merged.json");
    expect(await readFile(input, "utf8")).toContain("agent-iac-report");
  });
});
