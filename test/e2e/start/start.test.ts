// `npm start` (agent-iac start), the main job, end to end in a copy of the project: provisions the
// examples against the embedded simulator, smoke-calls them, and leaks no secret anywhere.
import { spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { copyFile, mkdir, mkdtemp, readdir, readFile, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startSimulator } from "../../../src/simulator/index.ts";
import { LOCAL_PASSPHRASE, projectRoot } from "../../../src/workspace/index.ts";
import { CLI, runCli } from "../../helpers/cli.ts";
import { copyDevStack } from "../../helpers/dev-address.ts";
import { type PulumiSandbox, projectCopy, pulumiSandbox } from "../../helpers/pulumi.ts";
import { simulatorCall, storedAgents } from "../../helpers/simulator.ts";

const API_KEY = "sk-start-e2e-0c6f2a9d4e71";
const TOKEN_PATTERN = /tok_[A-Za-z0-9_-]{24}/;

// Each case runs npm start (a deploy and smoke calls) once or more: minutes on a busy 2-core machine.
describe("npm start", { timeout: 300_000 }, () => {
  let sandbox: PulumiSandbox;
  let project: { dir: string; cleanup(): Promise<void> };
  const logs: string[] = [];

  const run = async (...args: string[]) => {
    // The committed dev stack file carries the salt of the local-only default passphrase, which
    // applies by itself only on the checkout's own backend: this test's backend is a temp dir.
    const env = {
      ...process.env,
      ...sandbox.env,
      AGENT_IAC_API_KEY: API_KEY,
      PULUMI_CONFIG_PASSPHRASE: LOCAL_PASSPHRASE,
    };
    const result = await runCli(["start", ...args], { cwd: project.dir, env });
    logs.push(result.stdout, result.stderr);
    return result;
  };
  const start = async () => {
    const result = await run();
    expect(result.code, result.stderr).toBe(0);
    return result.stdout;
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

  it("provisions the examples, prints their version ids and passes their smoke scenarios", async () => {
    const out = await start();
    expect(out).toMatch(/local simulator: http:\/\/127\.0\.0\.1:\d+/);
    expect(out).toContain("Changes applied.");
    // The dev stack's policy pack ran, and the example agents break none of its rules.
    expect(out).toMatch(/Policies:\s+✅ agent-iac@v[\d.]+ \(local: \S+\/policy\)/);
    expect(out).not.toMatch(/\[(advisory|mandatory)\]/);
    for (const key of ["support", "booking", "call-summary", "qa-scorer"]) {
      expect(out).toMatch(new RegExp(`^${key}\\s+\\w+\\s+(ca|pa)_[A-Za-z0-9_-]+@v1\\s`, "m"));
    }
    expect(out.trim().split("\n").at(-1)).toMatch(/^[1-9]\d* passed, 0 failed$/);
    const junit = await readFile(path.join(project.dir, "reports", "smoke.junit.xml"), "utf8");
    expect(junit).toMatch(/failures="0" errors="0"/);
  });

  it("reports no changes the second time, with the same version ids", async () => {
    const first = logs[0] ?? "";
    const out = await start();
    expect(out).toContain("No changes.");
    const ids = (text: string) => [...text.matchAll(/(?:ca|pa)_[A-Za-z0-9_-]+@v1/g)].map((m) => m[0]).sort();
    expect(new Set(ids(out.split("smoke calls")[0] ?? ""))).toEqual(new Set(ids(first.split("smoke calls")[0] ?? "")));
  });

  it("writes a state that names no path of this machine: source positions relative to the project", async () => {
    // The engine makes a file: URL relative to the project; an ES module's frame used to reach it as
    // `file:///<cwd>/file:/<absolute path>`, which it kept whole.
    const entries = await readdir(sandbox.backendDir, { recursive: true, withFileTypes: true });
    const state = entries.find((entry) => entry.isFile() && entry.name === "dev.json");
    expect(state).toBeDefined();
    const text = await readFile(path.join(state?.parentPath ?? "", state?.name ?? ""), "utf8");
    const positions = [...text.matchAll(/"sourcePosition":\s*"([^"]+)"/g)].map((match) => match[1] ?? "");
    // Every agent resource has one, written by this package's code.
    expect(positions.filter((p) => /\/src\/(component|provider)\//.test(p)).length).toBeGreaterThan(0);
    for (const position of positions) expect(position).toMatch(/^project:\/\/\/(?!file:)/);
    expect(text).not.toContain(projectRoot);
    expect(text).not.toContain(project.dir);
  });

  it("uses a stack's own service when it points elsewhere, and names what a failed up did not create", async () => {
    // 127.0.0.2 is not the dev stack's loopback address, so start uses this service as it is.
    const service = await startSimulator({ host: "127.0.0.2", port: 0, apiKey: API_KEY, eventDelayMs: 1, quiet: true });
    try {
      await writeFile(path.join(project.dir, "Pulumi.remote.yaml"), `config:\n  agents:baseUrl: ${service.url}\n`);
      await simulatorCall(service, "POST", "/_simulator/faults", {
        route: "POST /procedural_agents",
        count: 1,
        status: 503,
      });
      const failed = await run("--stack", "remote");
      // A failed up is a service or backend failure (exit 3), said in the project's own words.
      expect(failed.code).toBe(3);
      expect(failed.stderr).not.toMatch(/^\s+at /m);
      expect(failed.stderr).not.toContain("\u001b[");
      expect(failed.stdout).not.toContain("local simulator");
      expect(failed.stderr).toMatch(/could not create procedural agent "[^"]+": POST \/procedural_agents → 503/);
      expect(failed.stderr).toMatch(/not created \(2 of 4\)/);
      expect(failed.stderr).toMatch(
        /support \(conversational\): not attempted: linked procedural agent (call-summary|qa-scorer) was not created/,
      );

      // A rate-limited create is retried, and the retry leaves one line in the up's output.
      await simulatorCall(service, "POST", "/_simulator/faults", {
        route: "POST /procedural_agents",
        count: 1,
        status: 429,
      });
      const again = await run("--stack", "remote");
      expect(again.code, `${again.stdout}\n${again.stderr}`).toBe(0);
      expect(again.stdout).toContain(`using the simulator already serving ${service.url}`);
      expect(again.stdout).toMatch(/retrying POST \/procedural_agents after 429 in \d+(\.\d)? m?s \(attempt 2 of \d\)/);
      expect(again.stdout.trim().split("\n").at(-1)).toMatch(/^[1-9]\d* passed, 0 failed$/);
      const stored = await storedAgents(service);
      expect(stored.procedural.length + stored.conversational.length).toBe(4);

      // A key refused in the smoke phase (its access check) is said in the stack's terms, as smoke says it.
      await simulatorCall(service, "POST", "/_simulator/faults", {
        route: "GET /conversations",
        count: 1,
        status: 401,
      });
      const refused = await run("--stack", "remote");
      expect(refused.stdout).toContain("No changes.");
      expect(refused.code, refused.stderr).toBe(2);
      expect(refused.stderr).toContain("agent-iac start: the service refused the API key from AGENT_IAC_API_KEY");
      expect(refused.stderr).toContain("check the stack's secret agents:apiKey or AGENT_IAC_API_KEY");
    } finally {
      await service.close();
    }
  });

  it("stops cleanly on SIGINT during pulumi up; the next start completes with exactly the declared agents", async () => {
    // Each create takes 5 s, so the signal lands while the first creates are in flight: the run
    // forwards it to the Pulumi CLI 0.75 s later (src/workspace/interrupt.ts), which a loaded
    // machine stretches to seconds, and the conversational agents' creates wait for the procedural
    // ones they link.
    const service = await startSimulator({ host: "127.0.0.3", port: 0, apiKey: API_KEY, latencyMs: 5000, quiet: true });
    try {
      await writeFile(path.join(project.dir, "Pulumi.interrupt.yaml"), `config:\n  agents:baseUrl: ${service.url}\n`);
      const env = {
        ...process.env,
        ...sandbox.env,
        AGENT_IAC_API_KEY: API_KEY,
        PULUMI_CONFIG_PASSPHRASE: "p",
        NO_COLOR: "1",
      };
      const child = spawn(process.execPath, [CLI, "start", "--stack", "interrupt", "--no-smoke"], {
        cwd: project.dir,
        env,
        stdio: ["ignore", "pipe", "pipe"],
      });
      let out = "";
      let err = "";
      child.stdout.on("data", (chunk) => {
        out += chunk;
      });
      child.stderr.on("data", (chunk) => {
        err += chunk;
      });
      const exited = new Promise<number | null>((resolve) => child.on("exit", resolve));
      // Interrupt once the first create is under way.
      for (let i = 0; i < 600 && !/creating/.test(out); i++) await sleep(100);
      expect(out).toMatch(/creating/);
      child.kill("SIGINT");
      const code = await exited;
      logs.push(out, err);
      expect(code, `${out}\n${err}`).toBe(130);
      expect(err).toContain("interrupted (SIGINT)");
      expect(err).toContain("the stack is unlocked");
      expect(err).not.toMatch(/^\s+at /m);

      // The signal landed mid-up: the creates in flight finished, the rest were not started.
      const partial = await storedAgents(service);
      expect(partial.procedural.length + partial.conversational.length, `${out}\n${err}`).toBeLessThan(4);

      // A lock left by a process that could not unlock (killed outright) is said as such, with the recovery.
      const locks = path.join(sandbox.backendDir, ".pulumi", "locks", "organization", "agents", "interrupt");
      await mkdir(locks, { recursive: true });
      const lock = path.join(locks, "killed.json");
      await writeFile(lock, JSON.stringify({ pid: 1, username: "ci", hostname: "runner", timestamp: new Date() }));
      const locked = await runCli(["start", "--stack", "interrupt"], { cwd: project.dir, env });
      await rm(lock);
      expect(locked.code).toBe(3);
      expect(locked.stderr).toContain("stack interrupt is locked");
      expect(locked.stderr).toContain("pulumi cancel --stack interrupt --yes");
      expect(locked.stderr).not.toContain("not created");

      const again = await runCli(["start", "--stack", "interrupt"], { cwd: project.dir, env });
      logs.push(again.stdout, again.stderr);
      expect(again.code, `${again.stdout}\n${again.stderr}`).toBe(0);
      expect(again.stdout.trim().split("\n").at(-1)).toMatch(/^[1-9]\d* passed, 0 failed$/);
      const stored = await storedAgents(service);
      expect(stored.procedural.length + stored.conversational.length).toBe(4);
    } finally {
      await service.close();
    }
  });

  it("smoke calls the versions the stack holds when a failed up left the outputs behind, and says so", async () => {
    const service = await startSimulator({ host: "127.0.0.4", port: 0, apiKey: API_KEY, eventDelayMs: 1, quiet: true });
    const files = ["booking.yaml", "qa-scorer.yaml"].map((f) => path.join(project.dir, "agents", f));
    const originals = await Promise.all(files.map((f) => readFile(f, "utf8")));
    try {
      await writeFile(path.join(project.dir, "Pulumi.stale.yaml"), `config:\n  agents:baseUrl: ${service.url}\n`);
      expect((await run("--stack", "stale", "--no-smoke")).code).toBe(0);
      // booking's replacement is created; qa-scorer's is refused, so the update fails part-way.
      await Promise.all(
        files.map((f, i) => writeFile(f, (originals[i] ?? "").replace(/^description: (.*)$/m, "description: $1 (v2)"))),
      );
      await simulatorCall(service, "POST", "/_simulator/faults", {
        route: "POST /procedural_agents",
        count: 1,
        status: 400,
      });
      expect((await run("--stack", "stale", "--no-smoke")).code).toBe(3);

      const env = {
        ...process.env,
        ...sandbox.env,
        AGENT_IAC_API_KEY: API_KEY,
        PULUMI_CONFIG_PASSPHRASE: LOCAL_PASSPHRASE,
      };
      const smoke = await runCli(["smoke", "--stack", "stale", "--agent", "booking"], { cwd: project.dir, env });
      logs.push(smoke.stdout, smoke.stderr);
      expect(smoke.stderr).toMatch(/outputs of stack stale are from an earlier update.*other versions of booking\b/);
      const stored = await storedAgents(service);
      const bookings = stored.conversational.filter((a) => a.name === stored.conversational.at(-1)?.name);
      expect(bookings.length).toBe(2);
      const newest = stored.conversational.at(-1)?.id ?? "";
      // The call went to the version the state holds (the new booking), not the outputs' old one.
      expect(smoke.stdout).toContain(`${newest}@v1`);
      expect(smoke.code, smoke.stderr).toBe(0);

      // A wrong key is a configuration error in smoke as in the list commands (exit 2), before any call.
      const wrongKey = { ...env, AGENT_IAC_API_KEY: "sk-wrong-key-for-smoke" };
      const refused = await runCli(["smoke", "--stack", "stale"], { cwd: project.dir, env: wrongKey });
      expect(refused.code).toBe(2);
      expect(refused.stderr).toContain("the service refused the API key from AGENT_IAC_API_KEY");
      expect(refused.stderr + refused.stdout).not.toContain("sk-wrong-key-for-smoke");
      const listed = await runCli(["conversations", "list", "--stack", "stale"], { cwd: project.dir, env: wrongKey });
      expect(listed.code).toBe(2);

      // The service loses its agents (a reset, another simulator writing the data file): the pinned
      // versions are unknown to it, said by agent key with the command that creates them again.
      await simulatorCall(service, "POST", "/_simulator/reset");
      const lost = await runCli(["smoke", "--stack", "stale", "--agent", "booking"], { cwd: project.dir, env });
      expect(lost.code).toBe(3);
      expect(lost.stderr).toContain("the service does not know a version that stack stale pins");
      expect(lost.stderr).toMatch(/^ {2}booking: ca_\S+@v1$/m);
      expect(lost.stderr).toMatch(
        /^ {2}pulumi up --yes --stack stale --replace 'urn:pulumi:stale::agents::[^']+::booking'$/m,
      );
    } finally {
      await Promise.all(files.map((f, i) => writeFile(f, originals[i] ?? "")));
      await service.close();
    }
  });

  it("writes the API key and the stream tokens nowhere: state, outputs, logs, reports, simulator data", async () => {
    const written: { file: string; text: string }[] = [];
    for (const root of [project.dir, sandbox.backendDir]) {
      for (const entry of await readdir(root, { recursive: true, withFileTypes: true })) {
        if (!entry.isFile()) continue;
        const file = path.join(entry.parentPath, entry.name);
        written.push({ file, text: await readFile(file, "utf8") });
      }
    }
    const files = written.map((w) => path.relative(project.dir, w.file));
    expect(files).toContain(path.join(".agent-iac", "simulator.json"));
    expect(files).toContain(path.join("reports", "smoke.json"));
    expect(written.some((w) => w.file.endsWith(path.join("agents", "dev.json")))).toBe(true); // the stack's state
    // The simulator did issue tokens: its data holds their hashes, one per conversation.
    const data = written.find((w) => w.file.endsWith("simulator.json"))?.text ?? "";
    expect(Object.keys(JSON.parse(data).tokens ?? {}).length).toBeGreaterThan(0);
    for (const { file, text } of [...written, ...logs.map((text) => ({ file: "(stdout/stderr)", text }))]) {
      expect(text, file).not.toContain(API_KEY);
      expect(text, file).not.toMatch(TOKEN_PATTERN);
    }
  });

  it("refuses the public passphrase on another backend: exit 2, the tracked stack file unchanged", async () => {
    const file = path.join(project.dir, "Pulumi.staging.yaml");
    await copyFile(path.join(projectRoot, "Pulumi.staging.yaml"), file);
    const before = await readFile(file, "utf8");
    const backend = await mkdtemp(path.join(os.tmpdir(), "agent-iac-backend-"));
    try {
      const env: Record<string, string | undefined> = {
        ...process.env,
        ...sandbox.env,
        PULUMI_BACKEND_URL: `file://${backend}`,
      };
      delete env.PULUMI_CONFIG_PASSPHRASE;
      delete env.PULUMI_CONFIG_PASSPHRASE_FILE;
      const result = await runCli(["start", "--stack", "staging"], { cwd: project.dir, env });
      expect(result.code).toBe(2);
      expect(result.stderr).toMatch(/stack staging on file:\/\/.* needs a passphrase/);
      expect(result.stderr).toContain("PULUMI_CONFIG_PASSPHRASE");
      expect(await readFile(file, "utf8")).toBe(before);
      expect(await readdir(backend, { recursive: true })).toEqual([]);
      // The earlier runs' green smoke report does not outlive a failed start.
      expect(existsSync(path.join(project.dir, "reports", "smoke.json"))).toBe(false);
    } finally {
      await rm(backend, { recursive: true, force: true });
    }
  });

  it("says which post_url deliveries failed (the example's own reach the simulator's sink)", async () => {
    // The runs so far used the example's post_url (the simulator's sink): nothing was said.
    expect(logs.join("\n")).not.toContain("post_url deliveries");
    const file = path.join(project.dir, "agents", "call-summary.yaml");
    const text = await readFile(file, "utf8");
    await writeFile(file, text.replace(/post_url: .*/, "post_url: http://127.0.0.1:9/hooks/nowhere"));
    const result = await run();
    expect(result.code, result.stderr).toBe(0); // the procedures still complete
    expect(result.stderr).toMatch(/post_url deliveries: [1-9]\d* of [1-9]\d* failed/);
    expect(result.stderr).toContain("http://127.0.0.1:9/hooks/nowhere");

    // With the hook fixed (the run after compares with the broken version, whose own calls do fail
    // again), the failures of earlier runs are not said again: the simulator still lists them.
    await writeFile(file, text);
    expect((await run()).code).toBe(0);
    const fixed = await run();
    expect(fixed.code, fixed.stderr).toBe(0);
    expect(fixed.stdout).toContain("No changes.");
    expect(fixed.stderr).not.toContain("post_url deliveries");
  }, 300_000);
});
