// The first run on a clean machine: scripts/ensure-pulumi with an empty cache (Go's own module and
// build caches shared, so the "build" takes seconds), an interrupted build, a run waiting for
// another's build, and `npx agent-iac` and `npm start` in a fresh clone with an empty user cache. CI's machine has the CLI cached, so without these tests the
// cold path would never run there.
import { type ChildProcess, execFile, execFileSync, spawn } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { access, mkdir, mkdtemp, readdir, rm, symlink, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { projectRoot } from "../../../src/workspace/index.ts";
import { moveDevAddress } from "../../helpers/dev-address.ts";
import { RUN_MARK } from "../../helpers/leaks.ts";

const SCRIPT = path.join(projectRoot, "scripts", "ensure-pulumi");
const PULUMI_VERSION = `v${JSON.parse(readFileSync(path.join(projectRoot, "node_modules/@pulumi/pulumi/package.json"), "utf8")).version}`;
const EXECUTABLES = ["pulumi", "pulumi-language-nodejs", "pulumi-resource-pulumi-nodejs"];

/** Go's caches as this machine has them: a cold agent-iac cache must not mean a cold Go build. */
function goCaches(): Record<string, string> {
  const env = JSON.parse(execFileSync("go", ["env", "-json", "GOCACHE", "GOMODCACHE", "GOPATH"], { encoding: "utf8" }));
  return env as Record<string, string>;
}

/**
 * The PATH of a machine with no Pulumi CLI: without the directories that hold a `pulumi` (test files
 * run one after another in a worker, and an earlier one's ensurePulumi() put the cached CLI first).
 */
function pathWithoutPulumi(): string {
  const dirs = (process.env.PATH ?? "").split(path.delimiter);
  return dirs.filter((dir) => dir !== "" && !existsSync(path.join(dir, "pulumi"))).join(path.delimiter);
}

type Run = { code: number | null; signal: NodeJS.Signals | null; stdout: string; stderr: string };
type Started = { child: ChildProcess; done: Promise<Run>; printed: (pattern: RegExp) => Promise<void> };

/** Starts scripts/ensure-pulumi on a machine without Pulumi; `printed` resolves once its stderr matches. */
function startEnsurePulumi(cacheDir: string): Started {
  const child = spawn(SCRIPT, [], {
    cwd: projectRoot,
    env: { ...process.env, PATH: pathWithoutPulumi(), ...goCaches(), AGENT_IAC_CACHE_DIR: cacheDir },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let stdout = "";
  let stderr = "";
  child.stdout?.on("data", (chunk) => {
    stdout += chunk;
  });
  child.stderr?.on("data", (chunk) => {
    stderr += chunk;
  });
  const done = new Promise<Run>((resolve) => {
    child.on("close", (code, signal) => resolve({ code, signal, stdout, stderr }));
  });
  const printed = (pattern: RegExp) =>
    new Promise<void>((resolve, reject) => {
      const check = () => {
        if (!pattern.test(stderr)) return;
        child.stderr?.off("data", check);
        resolve();
      };
      child.stderr?.on("data", check);
      check();
      done.then((run) => reject(new Error(`ended (${run.code}) without printing ${pattern}:\n${run.stderr}`)));
    });
  return { child, done, printed };
}

const ensurePulumi = (cacheDir: string) => startEnsurePulumi(cacheDir).done;

async function exists(file: string): Promise<boolean> {
  return access(file).then(
    () => true,
    () => false,
  );
}

// Each case builds the CLI from Go modules (twice for the interrupted one): seconds with Go's caches
// warm, but over 120 s once in a full CI run (a Go cache trim or a partly cold cache), so the bound
// is a build's, not a unit test's.
describe("scripts/ensure-pulumi on an empty cache", { timeout: 600_000 }, () => {
  const dirs: string[] = [];
  const emptyCache = async () => {
    const dir = await mkdtemp(path.join(os.tmpdir(), "agent-iac-cold-cache-"));
    dirs.push(dir);
    return dir;
  };
  afterAll(async () => {
    for (const dir of dirs) await rm(dir, { recursive: true, force: true });
  });

  it("an interrupted build leaves nothing a later run trusts, and the next run completes", async () => {
    const cache = await emptyCache();
    // A leftover from a build that was killed outright (SIGKILL: no trap ran), with a `pulumi` in it.
    const stale = path.join(cache, "pulumi", `${PULUMI_VERSION}.build.abc123`);
    await mkdir(stale, { recursive: true });
    await writeFile(path.join(stale, "pulumi"), "#!/bin/sh\nexit 1\n", { mode: 0o755 });

    const started = startEnsurePulumi(cache);
    await started.printed(/building pulumi/);
    started.child.kill("SIGTERM");
    const interrupted = await started.done;
    expect(interrupted.code).toBe(143);
    expect(interrupted.stderr).toContain("terminated; removing the unfinished build");
    expect(interrupted.stderr).not.toContain("Terminated");
    const left = await readdir(path.join(cache, "pulumi"));
    expect(left.filter((name) => !name.endsWith(".lock"))).toEqual([]);

    const next = await ensurePulumi(cache);
    expect(next.code, next.stderr).toBe(0);
    const dir = next.stdout.trim().split("\n").at(-1) ?? "";
    for (const name of EXECUTABLES) expect(await exists(path.join(dir, name)), name).toBe(true);
  });

  it("builds once while another run waits on its lock with a heartbeat, exits 0, prints the directory last, leaves no build directory, and is cached after", async () => {
    const cache = await emptyCache();
    const builder = startEnsurePulumi(cache);
    await builder.printed(/building pulumi/);
    // Paused, the builder holds the lock for as long as the waiter takes to show its heartbeat.
    builder.child.kill("SIGSTOP");
    const waiter = startEnsurePulumi(cache);
    try {
      await waiter.printed(/still waiting for the other build/);
    } finally {
      builder.child.kill("SIGCONT");
    }
    const [built, waited] = await Promise.all([builder.done, waiter.done]);
    expect(built.code, built.stderr).toBe(0);
    expect(waited.code, waited.stderr).toBe(0);
    const lock = path.join(cache, "pulumi", `${PULUMI_VERSION}.lock`);
    expect(waited.stderr).toContain(
      `waiting for another build of pulumi ${PULUMI_VERSION} (process ${builder.child.pid}, holding ${lock})`,
    );
    expect(waited.stderr).not.toContain("building pulumi");
    expect(waited.stderr).not.toContain("Terminated");
    expect(waited.stdout.trim()).toBe(built.stdout.trim());

    // The build itself (one build serves both runs, and every later one): it printed the directory
    // last, holds the executables, left no build directory, and the next run finds it cached.
    const dir = built.stdout.trim().split("\n").at(-1) ?? "";
    expect(dir).toBe(path.join(cache, "pulumi", dir.split("/").at(-1) ?? ""));
    expect(dir).toMatch(/\/pulumi\/v3\.\d+\.\d+$/);
    for (const name of [...EXECUTABLES, "LANGUAGE-HOST"]) expect(await exists(path.join(dir, name)), name).toBe(true);
    expect(await readdir(path.join(cache, "pulumi"))).not.toContainEqual(expect.stringContaining(".build."));
    expect(built.stderr).toMatch(/ensure-pulumi: built pulumi v3\.\d+\.\d+/);
    expect(built.stderr).not.toContain("Terminated");
    const cached = await ensurePulumi(cache);
    expect(cached.code, cached.stderr).toBe(0);
    expect(cached.stdout.trim()).toBe(dir);
    expect(cached.stderr).not.toContain("building");
  });
});

describe("npm start in a fresh clone with an empty user cache", () => {
  let root: string;
  let clone: string;
  let env: NodeJS.ProcessEnv;

  beforeAll(async () => {
    root = await mkdtemp(path.join(os.tmpdir(), "agent-iac-first-run-"));
    clone = path.join(root, "clone");
    await promisify(execFile)("git", ["clone", "--quiet", projectRoot, clone]);
    // `npm ci` would install the same lockfile's packages; linking the checkout's keeps this test
    // to the first-run path under test: the toolchain build, the stack's creation, the first `up`.
    await symlink(path.join(projectRoot, "node_modules"), path.join(clone, "node_modules"));
    // Not the developer's 127.0.0.1:8787: their `npm run service` may be running.
    await moveDevAddress(clone);
    const home = path.join(root, "home");
    const cache = path.join(root, "cache");
    await mkdir(home);
    await mkdir(cache);
    env = {
      PATH: pathWithoutPulumi(),
      HOME: home,
      XDG_CACHE_HOME: cache,
      ...goCaches(),
      NO_COLOR: "1",
      [RUN_MARK]: process.env[RUN_MARK],
    };
  });
  afterAll(async () => {
    await rm(root, { recursive: true, force: true });
  });

  const inClone = (command: string, args: string[], extra: NodeJS.ProcessEnv = {}) =>
    new Promise<{ code: number; stdout: string; stderr: string }>((resolve) => {
      const options = { cwd: clone, env: { ...env, ...extra }, maxBuffer: 16 << 20 };
      execFile(command, args, options, (error, stdout, stderr) => {
        resolve({ code: error ? Number(error.code ?? -1) : 0, stdout, stderr });
      });
    });
  const npmStart = () => inClone("npm", ["start", "--silent"]);

  it("npx agent-iac on the machine's own Node (older than the package's) prints no npm warning", async () => {
    // A user's shell: npx and npm run on the machine's Node, the command on node_modules' Node 24.
    const machineNode = ["/usr/bin/node", "/usr/local/bin/node"].find((file) => existsSync(file));
    expect(machineNode, "a system Node to run npx with").toBeDefined();
    const dirs = (env.PATH ?? "").split(path.delimiter).filter((dir) => !dir.includes("node_modules"));
    const PATH = [path.dirname(machineNode ?? ""), ...dirs].join(path.delimiter);
    // The first npx in a checkout installs it into npx's cache (the fresh HOME's): where the warnings were.
    const help = await inClone("npx", ["agent-iac", "--help"], { PATH });
    expect(help.code, help.stderr).toBe(0);
    expect(help.stdout).toMatch(/^usage: agent-iac <command>/);
    expect(help.stderr).not.toMatch(/npm warn|EBADENGINE/i);
  });

  it("succeeds the first time: the CLI is built, the agents are created and smoke-called", async () => {
    const first = await npmStart();
    expect(first.code, `${first.stdout}\n${first.stderr}`).toBe(0);
    expect(first.stderr).toMatch(/ensure-pulumi: built pulumi/);
    expect(first.stderr).not.toContain("Terminated");
    expect(first.stdout).toMatch(/^support\s+\w+\s+ca_[A-Za-z0-9_-]+@v1\s/m);
    expect(first.stdout.trim().split("\n").at(-1)).toMatch(/^[1-9]\d* passed, 0 failed$/);
    const built = await readdir(path.join(root, "cache", "agent-iac", "pulumi"));
    expect(built).toContainEqual(expect.stringMatching(/^v3\.\d+\.\d+$/));
    expect(built).not.toContainEqual(expect.stringContaining(".build."));
  });

  it("reports no changes the second time", async () => {
    const second = await npmStart();
    expect(second.code, `${second.stdout}\n${second.stderr}`).toBe(0);
    expect(second.stdout).toContain("No changes.");
    expect(second.stderr).not.toContain("building pulumi");
  });
});
