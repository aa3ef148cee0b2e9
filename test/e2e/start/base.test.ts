// `npm start` at its edges (issue 30): the comparison base survives a run that did not compare (an
// interrupted smoke, a failed up), and a reused simulator that does not know the stack's agents is
// named, with both ways out. Each stack here points at its own simulator on a loopback address.
import { type ChildProcess, spawn } from "node:child_process";
import { appendFile, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parseDocument } from "yaml";
import { startSimulator } from "../../../src/simulator/index.ts";
import { projectRoot } from "../../../src/workspace/index.ts";
import { CLI, runCli } from "../../helpers/cli.ts";
import { copyDevStack } from "../../helpers/dev-address.ts";
import { type PulumiSandbox, projectCopy, pulumiSandbox } from "../../helpers/pulumi.ts";
import { simulatorCall } from "../../helpers/simulator.ts";

const API_KEY = "sk-start-base-4b7e21d9c3a0";

// Each case deploys and smoke-calls several times: minutes on a busy 2-core machine.
describe("npm start: the comparison base and the simulator it uses", { timeout: 300_000 }, () => {
  let sandbox: PulumiSandbox;
  let project: { dir: string; cleanup(): Promise<void> };
  const env = () => ({
    ...process.env,
    ...sandbox.env,
    AGENT_IAC_API_KEY: API_KEY,
    PULUMI_CONFIG_PASSPHRASE: "p",
    NO_COLOR: "1",
  });
  const start = (stack: string) => runCli(["start", "--stack", stack], { cwd: project.dir, env: env() });
  const outputs = async (stack: string) => {
    const out = await new Promise<string>((resolve) => {
      const child = spawn("pulumi", ["stack", "output", "versions", "--json", "--stack", stack], {
        cwd: project.dir,
        env: env(),
      });
      let text = "";
      child.stdout.on("data", (chunk) => {
        text += chunk;
      });
      child.on("close", () => resolve(text));
    });
    return JSON.parse(out) as Record<string, string>;
  };

  beforeAll(async () => {
    sandbox = await pulumiSandbox();
    project = await projectCopy(path.join(projectRoot, "test", "fixtures", "agents-project"));
    await copyDevStack(project.dir, projectRoot);
  });
  afterAll(async () => {
    await project?.cleanup();
    await sandbox?.cleanup();
  });

  it("compares with the versions before the first deploy not yet compared: an interrupted smoke or a failed up does not consume them", async () => {
    const service = await startSimulator({
      host: "127.0.0.5",
      port: 0,
      apiKey: API_KEY,
      eventDelayMs: 40,
      quiet: true,
    });
    try {
      await writeFile(path.join(project.dir, "Pulumi.base.yaml"), `config:\n  agents:baseUrl: ${service.url}\n`);
      const first = await start("base");
      expect(first.code, first.stderr).toBe(0);
      const v1 = await outputs("base");

      // A prompt edit, deployed; the run is interrupted during its smoke calls (its up finished).
      await appendFile(path.join(project.dir, "prompts", "support.md"), "\nMention the spring promotion.\n");
      const child = spawn(process.execPath, [CLI, "start", "--stack", "base"], { cwd: project.dir, env: env() });
      let out = "";
      child.stdout.on("data", (chunk) => {
        out += chunk;
        if (/smoke calls against/.test(out)) child.kill("SIGINT");
      });
      await new Promise((resolve) => child.on("close", resolve));
      expect(out).toContain("Changes applied.");
      const v2 = await outputs("base");
      expect(v2.support).not.toBe(v1.support);

      // The next run compares the scenarios with the version from before the edit.
      const compared = await start("base");
      expect([0, 1], compared.stderr).toContain(compared.code);
      expect(compared.stdout).toMatch(/comparison base: the versions from before the deploy of /);
      expect(compared.stdout).toContain(`support/greets-and-summarizes (${v1.support} → ${v2.support})`);
      expect(compared.stdout).not.toContain(`same version ${v2.support}`);

      // That comparison completed: the base is consumed, the next run's base is its own deploy's.
      const again = await start("base");
      expect(again.code, again.stderr).toBe(0);
      expect(again.stdout).toContain(`= unchanged support/greets-and-summarizes (same version ${v2.support})`);

      // An up that fails part-way: one conversational create fails, the other may succeed.
      await appendFile(path.join(project.dir, "prompts", "support.md"), "\nAnd the summer one.\n");
      const booking = path.join(project.dir, "agents", "booking.yaml");
      const doc = parseDocument(await readFile(booking, "utf8"));
      doc.setIn(["description"], "Books appointments, now with a new description.");
      await writeFile(booking, doc.toString());
      await simulatorCall(service, "POST", "/_simulator/faults", {
        route: "POST /conversational_agents",
        count: 1,
        status: 503,
      });
      const failed = await start("base");
      expect(failed.code).toBe(3);
      const fixed = await start("base");
      expect([0, 1], fixed.stderr).toContain(fixed.code);
      const v3 = await outputs("base");
      for (const key of ["support", "booking"]) {
        expect(v3[key]).not.toBe(v2[key]);
        expect(fixed.stdout).toMatch(new RegExp(`${key}/\\S+ \\(${v2[key]} → ${v3[key]}\\)`));
      }
    } finally {
      await service.close();
    }
  });

  it("names a reused simulator that does not know the stack's agents (another checkout's), with both ways out", async () => {
    const other = await mkdtemp(path.join(os.tmpdir(), "agent-iac-other-checkout-"));
    const serve = (cwd: string, data: string, port: string) =>
      new Promise<{ child: ChildProcess; url: string }>((resolve, reject) => {
        const child = spawn(
          process.execPath,
          [CLI, "service", "--host", "127.0.0.6", "--port", port, "--data", data, "--api-key", API_KEY],
          { cwd, env: { ...process.env, NO_COLOR: "1" }, stdio: ["ignore", "pipe", "pipe"] },
        );
        let text = "";
        child.stdout?.on("data", (chunk) => {
          text += chunk;
          const match = /listening on (http:\/\/\S+)/.exec(text);
          if (match?.[1]) resolve({ child, url: match[1] });
        });
        child.on("exit", (code) => reject(new Error(`the simulator exited (${code}): ${text}`)));
      });
    const stop = (child: ChildProcess) =>
      new Promise((resolve) => {
        child.once("exit", resolve);
        child.kill("SIGTERM");
      });
    let ours: ChildProcess | undefined;
    let theirs: ChildProcess | undefined;
    try {
      // This checkout's simulator: the stack's agents are created in it.
      const first = await serve(project.dir, path.join(project.dir, ".agent-iac", "simulator.json"), "0");
      ours = first.child;
      const port = new URL(first.url).port;
      await writeFile(path.join(project.dir, "Pulumi.shared.yaml"), `config:\n  agents:baseUrl: ${first.url}\n`);
      const deployed = await start("shared");
      expect(deployed.code, deployed.stderr).toBe(0);
      expect(deployed.stdout).toContain(
        `using the simulator already serving ${first.url} (process ${ours.pid}, data file .agent-iac/simulator.json, started in this directory`,
      );
      await stop(ours);
      ours = undefined;

      // Another checkout's simulator on the same address: it knows none of them.
      const second = await serve(other, path.join(other, "simulator.json"), port);
      theirs = second.child;
      const run = await start("shared");
      expect(run.code).toBe(2);
      expect(run.stdout).toContain(
        `using the simulator already serving ${first.url} (process ${theirs.pid}, data file ${path.join(other, "simulator.json")}, started in ${other}`,
      );
      expect(run.stderr).toMatch(/does not know 4 of the agents stack shared pins/);
      expect(run.stderr).toContain("it is probably another checkout's simulator");
      expect(run.stderr).toContain(`kill ${theirs.pid}`);
      expect(run.stderr).toContain("pulumi config set agents:baseUrl");
      expect(run.stderr).toMatch(/create the agents in it:\n\s+pulumi up --yes --stack shared --replace/);
      expect(run.stderr).toContain("no call was placed");
      expect(run.stdout).not.toMatch(/passed, \d+ failed/);
    } finally {
      if (ours) await stop(ours);
      if (theirs) await stop(theirs);
      await rm(other, { recursive: true, force: true });
    }
  });
});
