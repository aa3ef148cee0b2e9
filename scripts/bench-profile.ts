// `npm run bench -- --profile`: where the seconds of a fleet go, from CPU profiles of every process
// an operation starts — the engine (the `pulumi` CLI, Go; `--profiling`), and each Node process
// (the program, the dynamic provider, a policy pack; `--cpu-prof`). For agent-iac and the engine's
// control side by side: `up` from empty, then a one-agent change (timed once without profiling,
// then profiled). Prints one table per operation; writes the profiles' summary to
// .agent-iac/bench-profile.json and keeps the raw profiles in .agent-iac/profiles/ (open a
// .cpuprofile in Chrome's DevTools, an engine.*.cpu with `go tool pprof`).
import { spawn } from "node:child_process";
import { cp, mkdir, readdir, readFile, rm, writeFile } from "node:fs/promises";
import path from "node:path";
import { performance } from "node:perf_hooks";
import { STATE_DIR } from "../src/settings/index.ts";
import { openStack, projectRoot } from "../src/workspace/index.ts";
import { pulumiSandbox } from "../test/helpers/pulumi.ts";
import { changeOneAgent, writeFleet } from "./bench-agents.ts";
import { writeBodies } from "./bench-fleet.ts";
import { describeLoad, LoadMonitor } from "./bench-load.ts";
import { simulatorProcess } from "./bench-simulator.ts";

/** Chrome DevTools' CPU profile, as Node's --cpu-prof writes it (only the fields read here). */
export type CpuProfile = {
  nodes: { id: number; callFrame: { functionName: string; url: string }; children?: number[] }[];
  samples: number[];
  timeDeltas: number[];
  startTime: number;
  endTime: number;
};

export type Role = "program" | "provider" | "policy pack" | "other";
export type ProcessSummary = {
  role: Role;
  /** From the profiler's start (at process start) to exit. */
  livedS: number;
  /** CPU seconds sampled outside `(idle)`. */
  busyS: number;
  /** Busy seconds by who spent them (see `ownerOf`). */
  categories: Record<string, number>;
};

export function roleOf(profile: CpuProfile): Role {
  const urls = profile.nodes.map((n) => n.callFrame.url);
  if (urls.some((u) => u.includes("cmd/dynamic-provider"))) return "provider";
  if (urls.some((u) => u.includes("cmd/run-policy-pack/"))) return "policy pack";
  if (urls.some((u) => u.includes("cmd/run/"))) return "program";
  return "other";
}

/**
 * Who spent a sample: the frame nearest the leaf that belongs to someone, skipping libraries that
 * only work for their caller (YAML, zod, undici) and Node's internals other than its module loader,
 * so YAML parsing called by agent-iac is agent-iac's, and a stack trace the SDK captures is the
 * SDK's stack-trace formatting.
 */
export function ownerOf(stack: { functionName: string; url: string }[], root: string): string {
  const ours = [`${pathToUrl(root)}/src/`, `${pathToUrl(root)}/policy/`];
  for (const { url } of stack) {
    if (url.includes("source-map-support")) return "stack traces (source-map-support)";
    if (ours.some((prefix) => url.startsWith(prefix))) return "agent-iac";
    if (url.startsWith("node:internal/modules/")) return "module loading";
    if (url.includes("/node_modules/@pulumi/")) return "Pulumi SDK";
    if (url.includes("/node_modules/@grpc/") || url.includes("google-protobuf")) return "gRPC and protobuf";
    if (/\/node_modules\/(yaml|zod|undici)\//.test(url) || url.startsWith("node:") || url === "") continue;
    if (url.includes("/node_modules/")) return "other libraries";
    return "other";
  }
  const leaf = stack[0]?.functionName ?? "";
  if (leaf === "(garbage collector)") return "garbage collection";
  if (leaf === "(program)") return "native (V8 and Node, unattributed)";
  return "Node runtime";
}

const pathToUrl = (p: string) => `file://${p}`;

export function summarizeProfile(profile: CpuProfile, root: string): ProcessSummary {
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const parent = new Map<number, number>();
  for (const n of profile.nodes) for (const child of n.children ?? []) parent.set(child, n.id);
  const ownerById = new Map<number, string>();
  const owner = (id: number) => {
    let known = ownerById.get(id);
    if (known === undefined) {
      const stack = [];
      for (let at: number | undefined = id; at !== undefined; at = parent.get(at)) {
        const node = byId.get(at);
        if (node) stack.push(node.callFrame);
      }
      known = ownerOf(stack, root);
      ownerById.set(id, known);
    }
    return known;
  };
  const categories: Record<string, number> = {};
  let busyS = 0;
  // A sample lasts until the next one (as DevTools counts it).
  profile.samples.forEach((id, i) => {
    const seconds = (profile.timeDeltas[i + 1] ?? 0) / 1e6;
    if (byId.get(id)?.callFrame.functionName === "(idle)") return;
    busyS += seconds;
    const category = owner(id);
    categories[category] = (categories[category] ?? 0) + seconds;
  });
  return { role: roleOf(profile), livedS: (profile.endTime - profile.startTime) / 1e6, busyS, categories };
}

/** `go tool pprof`'s header: "Duration: 9.41s, Total samples = 4.21s (44.74%)" → 4.21. */
export function pprofTotalSeconds(header: string): number | undefined {
  const match = /Total samples = ([\d.]+)(ms|s)\b/.exec(header);
  if (!match?.[1]) return undefined;
  return Number(match[1]) / (match[2] === "ms" ? 1000 : 1);
}

/** bash's `times`: the second line is the children's user and system time ("0m12.345s 0m1.234s"). */
export function childrenCpuSeconds(times: string): number | undefined {
  const line = times.trim().split("\n").at(-1) ?? "";
  const parts = [...line.matchAll(/(\d+)m([\d.]+)s/g)];
  if (parts.length !== 2) return undefined;
  return parts.reduce((sum, [, minutes, seconds]) => sum + Number(minutes) * 60 + Number(seconds), 0);
}

type Operation = {
  wallS: number;
  /** CPU of every process the command started, from the kernel (user + system). */
  treeCpuS?: number;
  /** The engine's CPU (the `pulumi` process), from its Go profile. */
  engineCpuS?: number;
  processes: ProcessSummary[];
};

/**
 * NODE_OPTIONS that profile every Node process into `dir`. The engine stops a provider with SIGINT
 * and Node writes its profile only on a normal exit, so a preload turns SIGINT into an exit.
 */
export async function profilingNodeOptions(dir: string): Promise<string> {
  const preload = path.join(dir, "exit-on-sigint.cjs");
  await writeFile(preload, "process.on('SIGINT', () => process.exit(0));\n");
  return `--cpu-prof --cpu-prof-dir=${dir} --require=${preload}`;
}

/** Runs `pulumi <args>` in `cwd` with every process profiled into `dir`. */
async function profiled(cwd: string, env: Record<string, string>, args: string[], dir: string): Promise<Operation> {
  await rm(dir, { recursive: true, force: true });
  await mkdir(dir, { recursive: true });
  const nodeOptions = await profilingNodeOptions(dir);
  const started = performance.now();
  const stderr = await new Promise<string>((resolve, reject) => {
    // bash's `times` after the command: the CPU of the whole process tree, reaped.
    const child = spawn("bash", ["-c", 'pulumi "$@" >/dev/null; status=$?; times >&2; exit $status', "bash", ...args], {
      cwd,
      env: { ...env, NODE_OPTIONS: nodeOptions },
      stdio: ["ignore", "ignore", "pipe"],
    });
    let text = "";
    child.stderr.setEncoding("utf8").on("data", (chunk: string) => {
      text += chunk;
    });
    child.on("error", reject);
    child.on("close", (code) => (code === 0 ? resolve(text) : reject(new Error(`pulumi ${args[0]} failed:\n${text}`))));
  });
  const wallS = (performance.now() - started) / 1000;
  const processes: ProcessSummary[] = [];
  let engineCpuS: number | undefined;
  for (const file of await readdir(dir)) {
    if (file.endsWith(".cpuprofile")) {
      const profile = JSON.parse(await readFile(path.join(dir, file), "utf8")) as CpuProfile;
      processes.push(summarizeProfile(profile, projectRoot));
    } else if (file.endsWith(".cpu")) {
      engineCpuS = pprofTotalSeconds(await goPprofTop(path.join(dir, file)));
    }
  }
  return { wallS, treeCpuS: childrenCpuSeconds(stderr), engineCpuS, processes };
}

/** `go tool pprof -top`'s output; "" without Go (the engine's row then reads "—", the rest stands). */
function goPprofTop(file: string): Promise<string> {
  return new Promise((resolve) => {
    const child = spawn("go", ["tool", "pprof", "-top", "-nodecount=1", file], { stdio: ["ignore", "pipe", "pipe"] });
    let text = "";
    child.stdout.setEncoding("utf8").on("data", (chunk: string) => {
      text += chunk;
    });
    child.on("error", () => resolve(""));
    child.on("close", () => resolve(text));
  });
}

async function timedUp(cwd: string, env: Record<string, string>, args: string[]): Promise<number> {
  const started = performance.now();
  await new Promise<void>((resolve, reject) => {
    const child = spawn("pulumi", args, { cwd, env, stdio: "ignore" });
    child.on("error", reject);
    child.on("close", (code) => (code === 0 ? resolve() : reject(new Error(`pulumi ${args[0]} failed (${code})`))));
  });
  return (performance.now() - started) / 1000;
}

/** One column per side and operation: wall, engine, each process's lived/busy and its categories. */
export function profileTable(columns: { name: string; op: Operation }[]): string {
  const rows: [string, ...string[]][] = [];
  const s = (v: number | undefined) => (v === undefined ? "—" : `${v.toFixed(2)} s`);
  rows.push(["wall time, profiled", ...columns.map((c) => s(c.op.wallS))]);
  rows.push(["CPU of every process (kernel)", ...columns.map((c) => s(c.op.treeCpuS))]);
  rows.push(["engine (`pulumi`, Go) CPU", ...columns.map((c) => s(c.op.engineCpuS))]);
  for (const role of ["program", "provider", "policy pack", "other"] as const) {
    const of = (c: { op: Operation }) => c.op.processes.filter((p) => p.role === role);
    if (columns.every((c) => of(c).length === 0)) continue;
    const sum = (c: { op: Operation }, pick: (p: ProcessSummary) => number) =>
      of(c).reduce((total, p) => total + pick(p), 0);
    rows.push([
      `${role}: processes, lived, CPU`,
      ...columns.map((c) => `${of(c).length}, ${s(sum(c, (p) => p.livedS))}, ${s(sum(c, (p) => p.busyS))}`),
    ]);
    const names = new Set(columns.flatMap((c) => of(c).flatMap((p) => Object.keys(p.categories))));
    const ranked = [...names].sort(
      (a, b) =>
        Math.max(...columns.map((c) => sum(c, (p) => p.categories[b] ?? 0))) -
        Math.max(...columns.map((c) => sum(c, (p) => p.categories[a] ?? 0))),
    );
    for (const name of ranked)
      rows.push([`  ${name}`, ...columns.map((c) => s(sum(c, (p) => p.categories[name] ?? 0)))]);
  }
  const header = `| | ${columns.map((c) => c.name).join(" | ")} |\n|---|${columns.map(() => "---").join("|")}|\n`;
  return header + rows.map((r) => `| ${r.join(" | ")} |`).join("\n");
}

export async function profileFleet(options: { agents: number; log(line: string): void }): Promise<void> {
  const load = new LoadMonitor().start();
  options.log(`load average before: ${load.before.join(" / ")} on ${load.cores} cores`);
  const sim = await simulatorProcess(50);
  const sandbox = await pulumiSandbox();
  const work = path.join(projectRoot, STATE_DIR, "profiles");
  await rm(work, { recursive: true, force: true });
  await mkdir(work, { recursive: true });
  try {
    const agentsDir = path.join(work, "agents");
    await writeFleet(agentsDir, options.agents);
    const bodiesFile = path.join(work, "bodies.json");
    await writeBodies(agentsDir, bodiesFile);
    const env = { ...(process.env as Record<string, string>), ...sandbox.env, AGENT_IAC_API_KEY: sim.apiKey };
    const sides = {
      "agent-iac": {
        dir: path.join(work, "agent-iac"),
        source: path.join(projectRoot, "test", "fixtures", "agents-project"),
      },
      control: {
        dir: path.join(work, "control"),
        source: path.join(projectRoot, "scripts", "bench", "trivial-project"),
      },
    };
    for (const [name, side] of Object.entries(sides)) {
      await cp(side.source, side.dir, { recursive: true });
      const stack = await openStack({ stackName: name, workDir: side.dir, env: sandbox.env });
      if (name === "control") await stack.setConfig("bench:bodies", { value: bodiesFile });
      else {
        await stack.setConfig("agents:baseUrl", { value: sim.url });
        await stack.setConfig("agents:dir", { value: agentsDir });
      }
    }
    const args = (stack: string) => [
      "up",
      "--yes",
      "--skip-preview",
      "--non-interactive",
      "--parallel",
      "16",
      "--stack",
      stack,
    ];
    const columns: { name: string; op: Operation }[] = [];
    const unprofiled: Record<string, number> = {};
    for (const name of Object.keys(sides) as (keyof typeof sides)[]) {
      options.log(`${name}: up from empty, ${options.agents} agents, profiled`);
      const dir = path.join(work, `${name}-up`);
      const op = await profiled(sides[name].dir, env, [...args(name), `--profiling=${dir}/engine`], dir);
      columns.push({ name: `${name}: up from empty`, op });
    }
    // The change: revision 1 timed without profiling, revision 2 profiled (each replaces one agent).
    for (const revision of [1, 2]) {
      await changeOneAgent(agentsDir, revision);
      await writeBodies(agentsDir, bodiesFile);
      for (const name of Object.keys(sides) as (keyof typeof sides)[]) {
        if (revision === 1) {
          options.log(`${name}: one-agent change, timed`);
          unprofiled[name] = await timedUp(sides[name].dir, env, args(name));
        } else {
          options.log(`${name}: one-agent change, profiled`);
          const dir = path.join(work, `${name}-change`);
          const op = await profiled(sides[name].dir, env, [...args(name), `--profiling=${dir}/engine`], dir);
          columns.push({ name: `${name}: one-agent change`, op });
        }
      }
    }
    const verdict = await load.stop();
    const table = profileTable(columns);
    process.stdout.write(
      `\nCPU profiles at ${options.agents} agents (file backend, --parallel 16); machine: ${describeLoad(verdict)}\n` +
        `one-agent change without profiling: ${Object.entries(unprofiled)
          .map(([name, s]) => `${name} ${s.toFixed(2)} s`)
          .join(", ")}\n\n${table}\n\nprofiles: ${path.relative(process.cwd(), work)}/\n`,
    );
    await writeFile(
      path.join(projectRoot, STATE_DIR, "bench-profile.json"),
      `${JSON.stringify({ date: new Date().toISOString(), agents: options.agents, load: verdict, unprofiled, columns }, null, 2)}\n`,
    );
  } finally {
    sim.close();
    await sandbox.cleanup();
    await rm(path.join(work, "agents"), { recursive: true, force: true });
  }
}
