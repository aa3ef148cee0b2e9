// A signal at every moment of a run's end (issue 49): the result being made, the clients closing,
// the reports being written, the run returning. In-process, so each moment is exact: the signal is
// delivered n turns of the event loop after the last call's result line. Whatever the moment, the run
// ends one of two ways only: complete and not interrupted (its reports written, its own exit code),
// or interrupted with exit 130, the one line, and reports that say so — and a signal after the last
// call ended interrupts nothing, so those moments are all complete. Never an exit without the
// reports asked for, never exit 130 beside reports of a run that was not interrupted.
import { spawn } from "node:child_process";
import { existsSync, readFileSync, rmSync } from "node:fs";
import path from "node:path";
import { setTimeout as sleep, setImmediate as tick } from "node:timers/promises";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { CommandIO } from "../../../src/commands/index.ts";
import { reportSchema } from "../../../src/results/index.ts";
import { type AgentsProject, agentsProject, deployStack } from "../../helpers/agents-project.ts";
import { CLI, runInProcess } from "../../helpers/cli.ts";
import { type PulumiSandbox, pulumiSandbox } from "../../helpers/pulumi.ts";
import { requestCounts, simulatorCall, startTestSimulator } from "../../helpers/simulator.ts";

const API_KEY = "sk-lifecycle-end-6b1e0f3c27";
const JSON_REPORT = "end.json";
const JUNIT_REPORT = "end.xml";

/** What a process would have left: its exit code, its stderr, and the report files at its exit. */
type Ending = { code: number; stderr: string; json: string | undefined; junit: string | undefined };

describe("a signal at any moment of a run's end", { timeout: 600_000 }, () => {
  let sandbox: PulumiSandbox;
  let sim: Awaited<ReturnType<typeof startTestSimulator>>;
  let project: AgentsProject;

  const files = () => ({
    json: path.join(project.dir, "reports", JSON_REPORT),
    junit: path.join(project.dir, "reports", JUNIT_REPORT),
  });
  const read = (file: string) => (existsSync(file) ? readFileSync(file, "utf8") : undefined);

  /**
   * One smoke call; with `ticks`, a SIGINT that many turns of the event loop after the run's first
   * write (the call's result line: the last call has ended). `late`: it came after the run ended.
   */
  async function smokeRun(ticks?: number): Promise<Ending & { late: boolean }> {
    for (const file of Object.values(files())) rmSync(file, { force: true });
    let ended = false;
    let exited: Ending | undefined;
    let sent: Promise<boolean> | undefined;
    const signalAfter = async (io: CommandIO, n: number) => {
      for (let i = 0; i < n; i++) await tick();
      io.signal("SIGINT");
      return ended;
    };
    const run = await runInProcess(
      ["smoke", "--stack", "test", "--agent", "support", "--json", JSON_REPORT, "--junit", JUNIT_REPORT],
      {
        cwd: project.dir,
        env: { ...process.env, ...sandbox.env, AGENT_IAC_API_KEY: API_KEY },
        onWrite: (_text, io) => {
          if (ticks !== undefined) sent ??= signalAfter(io, ticks);
        },
        onIdleSignal: (signal, note) => {
          // The process says this and exits (processIO in src/commands/lifecycle.ts): it leaves what is there now.
          const stderr = `interrupted (${signal})${note}\n`;
          exited ??= { code: 130, stderr, json: read(files().json), junit: read(files().junit) };
        },
      },
    );
    ended = true;
    const late = (await sent) ?? false;
    const ending = exited ?? {
      code: run.code,
      stderr: run.stderr,
      json: read(files().json),
      junit: read(files().junit),
    };
    return { ...ending, late };
  }

  /** The two endings a run may have; returns which it was. */
  function expectWhole(ending: Ending, at: string): "complete" | "interrupted" {
    const said = `${at}: exit ${ending.code}\n${ending.stderr}`;
    expect(ending.json, `${said}\nno JSON report`).toBeDefined();
    expect(ending.junit, `${said}\nno JUnit report`).toMatch(/<testsuites /);
    const report = reportSchema.parse(JSON.parse(ending.json ?? "{}"));
    if (ending.code === 130) {
      expect(ending.stderr.trimEnd().split("\n").at(-1), said).toMatch(
        /^interrupted: [01] of 1 calls finished; reports in reports\/end\.xml, reports\/end\.json$/,
      );
      expect(report.interrupted, said).toBe(true);
      return "interrupted";
    }
    expect(ending.stderr, said).not.toMatch(/interrupt/i);
    expect(report.interrupted, said).toBe(false);
    expect(
      report.results.map((r) => r.status),
      said,
    ).toEqual(["passed"]);
    expect(ending.code, said).toBe(0);
    return "complete";
  }

  beforeAll(async () => {
    sandbox = await pulumiSandbox();
    sim = await startTestSimulator({ port: 0, apiKey: API_KEY, eventDelayMs: 1, quiet: true });
    project = await agentsProject(sandbox, { baseUrl: sim.url, apiKey: API_KEY });
    await deployStack(project.stack);
  }, 300_000);
  afterAll(async () => {
    await project?.cleanup();
    await sim?.close();
    await sandbox?.cleanup();
  });

  it("ends complete or interrupted with its reports, never in between, whenever the signal comes", async () => {
    expect(expectWhole(await smokeRun(), "no signal")).toBe("complete");
    const endings = new Set<string>();
    // Every turn at first (the result being made, the clients closing), then ever wider steps
    // (the reports being written) until the signal comes after the run has ended.
    for (let ticks = 0; ; ticks += ticks < 8 ? 1 : Math.ceil(ticks / 2)) {
      const ending = await smokeRun(ticks);
      endings.add(expectWhole(ending, `SIGINT ${ticks} turn(s) after the call's result line`));
      if (ending.late) break;
    }
    // Every moment comes after the call ended on its own: the signal stopped nothing, so at each one
    // the run is complete, its reports and exit code its results' (a stop that cuts a call short is
    // the next test's, and interrupted-repeats.test.ts's).
    expect([...endings]).toEqual(["complete"]);
  });

  it("a Ctrl+C that also ends stdout's reader (`| tee`) still ends with exit 130 and both reports", async () => {
    // The process boundary itself: the pipe closed under the run, then the signal.
    for (const file of Object.values(files())) rmSync(file, { force: true });
    await simulatorCall(sim, "POST", "/_simulator/faults", { route: "POST /conversations", latency_ms: 3000 });
    try {
      const placed = async () => (await requestCounts(sim)).by_route["POST /conversations"] ?? 0;
      const before = await placed();
      const child = spawn(
        process.execPath,
        [CLI, "smoke", "--stack", "test", "--agent", "support", "--json", JSON_REPORT, "--junit", JUNIT_REPORT],
        { cwd: project.dir, env: { ...process.env, ...sandbox.env, AGENT_IAC_API_KEY: API_KEY, NO_COLOR: "1" } },
      );
      let stderr = "";
      child.stderr.on("data", (chunk) => {
        stderr += chunk;
      });
      const exited = new Promise<number | null>((resolve) => child.once("exit", resolve));
      const deadline = Date.now() + 60_000;
      while ((await placed()) <= before && Date.now() < deadline) await sleep(50);
      // The terminal's Ctrl+C ends the reader of the pipe too: the run's next line meets a closed pipe.
      child.stdout.destroy();
      child.kill("SIGINT");
      const code = await exited;
      expectWhole(
        { code: code ?? -1, stderr, json: read(files().json), junit: read(files().junit) },
        "SIGINT with stdout closed",
      );
      expect(code).toBe(130);
    } finally {
      await simulatorCall(sim, "DELETE", "/_simulator/faults");
    }
  });
});
