// The packed package in a project of its own, the way a team uses it: `npm pack` of this checkout,
// a copy of one of examples/ outside the checkout, the docs' own install line with that tarball,
// and the installed package's simulator on a free port. Nothing of the checkout's sources is
// reachable from that project.
import { type ChildProcess, execFile, spawn } from "node:child_process";
import { cp, mkdir, mkdtemp, readFile, rename, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { expect } from "vitest";
import { projectRoot } from "../../src/workspace/index.ts";
import { packDirectory } from "./leaks.ts";
import type { SimulatorHandle } from "./simulator.ts";

export type Run = { code: number; stdout: string; stderr: string };

export function run(command: string, args: string[], cwd: string, env: NodeJS.ProcessEnv): Promise<Run> {
  return new Promise((resolve) => {
    execFile(command, args, { cwd, env: { ...env, NO_COLOR: "1" }, maxBuffer: 32 << 20 }, (error, stdout, stderr) => {
      resolve({ code: error ? (typeof error.code === "number" ? error.code : -1) : 0, stdout, stderr });
    });
  });
}

export type PackedProject = {
  /** The temp directory holding the project. */
  work: string;
  project: string;
  tarball: string;
  packedFiles: string[];
  /** The installed package's simulator. */
  sim: SimulatorHandle;
  cleanup(): Promise<void>;
};

/** How long a file waits for another's pack (a loaded 2-core machine's build takes about a minute). */
const PACK_WAIT_MS = 600_000;

/**
 * The run's one `npm pack` of the checkout, shared by every file that installs the package: its
 * prepack empties and rebuilds dist/, so two packs at once (two files in parallel workers) would
 * pack each other's half-built dist/. The first caller packs; the others wait for its result.
 */
async function packOnce(): Promise<{ packed: Run; dir: string }> {
  const dir = packDirectory();
  const result = path.join(dir, "pack.json");
  const first = await mkdir(dir).then(
    () => true,
    (error: NodeJS.ErrnoException) => {
      if (error.code === "EEXIST") return false;
      throw error;
    },
  );
  if (first) {
    // `npm pack` runs prepack: the build of dist/ (compiled JavaScript and types).
    const packed = await run("npm", ["pack", "--pack-destination", dir, "--json"], projectRoot, process.env);
    // Written whole, then renamed: a waiting file never reads half a result.
    await writeFile(`${result}.partial`, JSON.stringify(packed));
    await rename(`${result}.partial`, result);
    return { packed, dir };
  }
  for (let waited = 0; waited < PACK_WAIT_MS; waited += 500) {
    const text = await readFile(result, "utf8").catch(() => undefined);
    if (text) return { packed: JSON.parse(text) as Run, dir };
    await sleep(500);
  }
  throw new Error(`another test file's npm pack of the checkout did not finish in ${PACK_WAIT_MS / 1000} s`);
}

/** The path of the run's one `npm pack` of the checkout (./agent-iac-0.1.0.tgz in a folder of its own). */
export async function packedTarball(): Promise<string> {
  const { packed, dir } = await packOnce();
  expect(packed.code, packed.stderr).toBe(0);
  const [info] = JSON.parse(packed.stdout) as { filename: string }[];
  return path.join(dir, info?.filename ?? "");
}

/**
 * Packs the checkout (once per run), copies `examples/<example>` into a temp directory and installs
 * the tarball with the install line of `docs/<docsPage>` (which must keep the example's exact
 * @pulumi/pulumi pin), then starts the installed package's simulator with `env`.
 */
export async function packedProject(example: string, docsPage: string, env: NodeJS.ProcessEnv): Promise<PackedProject> {
  const work = await mkdtemp(path.join(os.tmpdir(), `agent-iac-${example}-`));
  let simulator: ChildProcess | undefined;
  const cleanup = async () => {
    simulator?.kill("SIGTERM");
    await rm(work, { recursive: true, force: true });
  };
  const { packed, dir } = await packOnce();
  expect(packed.code, packed.stderr).toBe(0);
  const [info] = JSON.parse(packed.stdout) as { filename: string; files: { path: string }[] }[];
  const tarball = path.join(dir, info?.filename ?? "");
  const project = path.join(work, "example");
  await cp(path.join(projectRoot, "examples", example), project, { recursive: true });
  const docs = await readFile(path.join(projectRoot, "docs", docsPage), "utf8");
  const line = /^npm install .*agent-iac-0\.1\.0\.tgz.*$/m.exec(docs)?.[0] ?? "";
  const words = line
    .split(/\s+/)
    .slice(1)
    .map((word) => (word.endsWith(".tgz") ? tarball : word));
  expect(words).toContain("@pulumi/pulumi@3.259.0");
  const install = await run("npm", [...words, "--prefer-offline", "--no-audit", "--no-fund"], project, process.env);
  expect(install.code, install.stderr).toBe(0);
  const manifest = JSON.parse(await readFile(path.join(project, "package.json"), "utf8")) as {
    dependencies: Record<string, string>;
  };
  expect(manifest.dependencies["@pulumi/pulumi"]).toBe("3.259.0");

  const bin = path.join(project, "node_modules", "agent-iac", "bin", "agent-iac.js");
  const child = spawn(process.execPath, [bin, "service", "--port", "0"], { cwd: project, env });
  simulator = child;
  const url = await new Promise<string>((resolve, reject) => {
    let out = "";
    child.stdout?.setEncoding("utf8").on("data", (chunk: string) => {
      out += chunk;
      const match = /listening on (http:\/\/\S+)/.exec(out);
      if (match?.[1]) resolve(match[1]);
    });
    child.on("exit", (code) => reject(new Error(`the simulator exited (${code}): ${out}`)));
  });
  return {
    work,
    project,
    tarball,
    packedFiles: info?.files.map((f) => f.path) ?? [],
    sim: { url, apiKey: env.AGENT_IAC_API_KEY ?? "" },
    cleanup,
  };
}
