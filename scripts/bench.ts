// `npm run bench`: what agent-iac costs on top of the work it does, as ratios of two things
// measured in the same run (these machines are shared and noisy). Not part of `npm test`.
// First the fleet curve (scripts/bench-fleet.ts: 10, 100 and 1,000 agents beside the engine's
// control, on the file and Postgres backends; one run), then the figures B1–B5 (median and spread
// of 3 runs). Writes bench-results.json (gitignored), prints both tables, and draws the curve
// (docs/fleet-curve.svg for a full run, .agent-iac/fleet-curve.svg otherwise). It records the load
// it ran under (scripts/bench-load.ts), per fleet point and step, and warns when the machine was busy.
//
//   npm run bench                         the whole benchmark (about 20 minutes on 2 cores)
//   npm run bench -- --quick              10 and 100 agents, file backend, no figures (BENCH_QUICK=1 too)
//   npm run bench -- --agents 10,100 --backends postgres --skip-figures
//   npm run bench -- --decisions          only the decision rules (scripts/bench-decisions.ts and
//                                         bench-drift.ts, about two minutes)
//   npm run bench -- --variants           only try's variants against a fixed design of equal power (scripts/bench-variants.ts)
//   npm run bench -- --caller             only the caller's cost per turn (scripts/bench-caller.ts, ~1 minute)
//   npm run bench -- --profile [--agents 1000]   CPU profiles of every process, ours vs the control
//                                         (scripts/bench-profile.ts, file backend, a few minutes)

import { cp, mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { createServer } from "node:http";
import os from "node:os";
import path from "node:path";
import { performance } from "node:perf_hooks";
import { parseArgs } from "node:util";
import { request } from "undici";
import { createClient, TranscriptBuilder } from "../src/api/index.ts";
import { loadAgents } from "../src/definitions/index.ts";
import { STATE_DIR } from "../src/settings/index.ts";
import { runSmoke } from "../src/smoke/index.ts";
import { openStack, projectRoot } from "../src/workspace/index.ts";
import { stateFile } from "../test/helpers/agents-project.ts";
import { conversationalKey, proceduralKey, writeGeneratedAgents } from "../test/helpers/generate.ts";
import { type Backend, pulumiSandbox } from "../test/helpers/pulumi.ts";
import { requestCounts } from "../test/helpers/simulator.ts";
import { type CallerBenchResult, callerBench, callerTable } from "./bench-caller.ts";
import { fleetChart } from "./bench-chart.ts";
import { decisionBench, decisionTables } from "./bench-decisions.ts";
import { curveTable, type FleetResult, fleetCurve, targetTable } from "./bench-fleet.ts";
import { busyWarning, describeLoad, LIMITS, LoadMonitor, type LoadVerdict, targetVerdict } from "./bench-load.ts";
import { profileFleet } from "./bench-profile.ts";
import { simulatorProcess } from "./bench-simulator.ts";
import { variantsRows, variantsTable } from "./bench-variants.ts";

const { values: flags } = parseArgs({
  options: {
    quick: { type: "boolean" },
    agents: { type: "string" },
    backends: { type: "string" },
    "skip-figures": { type: "boolean" },
    chart: { type: "string" },
    decisions: { type: "boolean" },
    variants: { type: "boolean" },
    caller: { type: "boolean" },
    profile: { type: "boolean" },
  },
});
const QUICK = flags.quick === true || process.env.BENCH_QUICK === "1";
const AGENTS = (flags.agents ?? (QUICK ? "10,100" : "10,100,1000")).split(",").map(Number);
const BACKENDS = (flags.backends ?? (QUICK ? "file" : "file,postgres")).split(",") as Backend[];
const FIGURES = !(QUICK || flags["skip-figures"]);
const FULL_CURVE = [10, 100, 1000].every((n) => AGENTS.includes(n)) && BACKENDS.length === 2;
const CHART = flags.chart ?? path.join(projectRoot, FULL_CURVE ? "docs" : STATE_DIR, "fleet-curve.svg");

const RUNS = 3;
const PAIRS = 50; // 100 agents
const PARALLEL = 16;
const LATENCY_MS = 50;
const SSE_EVENTS = 100_000;
/** The caller's figure: a network of 25 ms each way, an agent that answers after 300 ms, 8 calls of 4 turns. */
const CALLER = { oneWayMs: 25, responseDelayMs: 300, calls: 8 };

type Figure = { id: string; what: string; target: string; values: number[]; ok?: (median: number) => boolean };

const seconds = (ms: number) => ms / 1000;
const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] ?? Number.NaN;

async function timed<T>(work: () => Promise<T>): Promise<[number, T]> {
  const started = performance.now();
  const result = await work();
  return [performance.now() - started, result];
}

async function main() {
  const benchStarted = performance.now();
  const load = new LoadMonitor().start();
  process.stdout.write(
    `load average before the run: ${load.before.join(" / ")} (1 / 5 / 15 min) on ${load.cores} cores; other processes' CPU ${load.measured ? "sampled every second" : "not measured (Linux only)"}\n`,
  );
  const before = busyWarning(load.verdict(), "the minute before the run");
  if (before) process.stderr.write(`${before}\n`);
  const figureLoads: LoadVerdict[] = [];
  const sandbox = await pulumiSandbox();
  const sim = await simulatorProcess(LATENCY_MS);
  const client = createClient({ baseUrl: sim.url, apiKey: sim.apiKey });
  const work = await mkdtemp(path.join(projectRoot, STATE_DIR, "bench-"));
  const figures: Record<string, Figure> = {
    B1a: {
      id: "B1a",
      what: "up overhead ÷ the same 100 creations made directly with the client",
      target: "reported",
      values: [],
    },
    B1b: {
      id: "B1b",
      what: "up overhead ÷ up of 100 trivial dynamic resources (same shape, 50 ms create)",
      target: "≤ 1.2",
      values: [],
      ok: (m) => m <= 1.2,
    },
    B2req: {
      id: "B2 requests",
      what: "requests to the service during a no-op preview of 100 agents",
      target: "0",
      values: [],
      ok: (m) => m === 0,
    },
    B2: {
      id: "B2",
      what: "no-op preview of 100 agents ÷ no-op preview of 1 agent",
      target: "≤ 1.5",
      values: [],
      ok: (m) => m <= 1.5,
    },
    B2engine: {
      id: "B2 engine",
      what: "the same ratio for trivial dynamic resources (the engine's own scaling, for reference)",
      target: "reference",
      values: [],
    },
    B3: {
      id: "B3",
      what: "state bytes per agent ÷ (config JSON bytes + 4 KB)",
      target: "≤ 2",
      values: [],
      ok: (m) => m <= 2,
    },
    B4: {
      id: "B4",
      what: "16 scenarios at --concurrency 8 ÷ (2 × median single scenario)",
      target: "≤ 1.3",
      values: [],
      ok: (m) => m <= 1.3,
    },
    B5: {
      id: "B5",
      what: "events/s through SSE parser + transcript ÷ events/s of a plain read",
      target: "≥ 0.3",
      values: [],
      ok: (m) => m >= 0.3,
    },
  };
  const raw: Record<string, number[]> = {};
  const record = (name: string, value: number) => {
    raw[name] ??= [];
    raw[name].push(value);
  };

  let curve: FleetResult | undefined;
  try {
    curve = await fleetCurve({
      agents: AGENTS,
      backends: BACKENDS,
      sim,
      work,
      parallel: PARALLEL,
      load,
      log: (line) => process.stderr.write(`fleet curve: ${line}\n`),
    });
    process.stdout.write(`\nfleet curve (--parallel ${PARALLEL}; ours vs the engine's control, ratio in brackets)\n\n`);
    process.stdout.write(`${curveTable(curve)}\n\n${targetTable(curve)}\n`);
    await mkdir(path.dirname(CHART), { recursive: true });
    const caption = `agent-iac bench, ${new Date().toISOString().slice(0, 10)}, ${describeLoad(load.verdict())}`;
    await writeFile(CHART, fleetChart(curve, caption));
    process.stdout.write(`\nchart: ${path.relative(projectRoot, CHART)}\n`);

    if (FIGURES) await measureFigures();
  } finally {
    await client.close();
    sim.close();
    await sandbox.cleanup();
    await rm(work, { recursive: true, force: true });
  }

  async function measureFigures() {
    const hundredDir = path.join(work, "agents-100");
    await writeGeneratedAgents(hundredDir, PAIRS, { smoke: true });
    const oneDir = path.join(work, "agents-1");
    await mkdir(oneDir);
    await cp(path.join(hundredDir, `${proceduralKey(0)}.yaml`), path.join(oneDir, `${proceduralKey(0)}.yaml`));
    const emptyDir = path.join(work, "agents-0");
    await mkdir(emptyDir);
    const { agents: definitions } = await loadAgents(hundredDir, { from: process.cwd() });
    const configBytes = definitions.reduce((sum, d) => sum + JSON.stringify(d.config).length, 0) / definitions.length;

    for (let run = 1; run <= RUNS; run++) {
      process.stderr.write(`run ${run}/${RUNS}\n`);
      const runStarted = performance.now();
      const project = async (name: string, agentsDir: string) => {
        const dir = path.join(work, `${name}-${run}`);
        await cp(path.join(projectRoot, "test", "fixtures", "agents-project"), dir, { recursive: true });
        const stack = await openStack({
          stackName: `${name}-${run}`,
          workDir: dir,
          env: { ...sandbox.env, AGENT_IAC_API_KEY: sim.apiKey },
        });
        await stack.setConfig("agents:baseUrl", { value: sim.url });
        await stack.setConfig("agents:dir", { value: agentsDir });
        return stack;
      };

      // B1: up of an empty program, of 100 agents, of 100 trivial resources; 100 direct creations.
      const empty = await project("empty", emptyDir);
      const [emptyUp] = await timed(() => empty.up({ parallel: PARALLEL }));
      const hundred = await project("hundred", hundredDir);
      const [hundredUp, upResult] = await timed(() => hundred.up({ parallel: PARALLEL }));
      const trivialDir = path.join(work, `trivial-${run}`);
      await cp(path.join(projectRoot, "scripts", "bench", "trivial-project"), trivialDir, { recursive: true });
      const trivial = await openStack({ stackName: `trivial-${run}`, workDir: trivialDir, env: sandbox.env });
      await trivial.setConfig("bench:count", { value: String(PAIRS) });
      const [trivialUp] = await timed(() => trivial.up({ parallel: PARALLEL }));
      const [direct] = await timed(() => directCreations(client, definitions));
      const overhead = hundredUp - emptyUp;
      record("up empty s", seconds(emptyUp));
      record("up 100 agents s", seconds(hundredUp));
      record("up 100 trivial s", seconds(trivialUp));
      record("100 direct creations s", seconds(direct));
      figures.B1a?.values.push(overhead / direct);
      figures.B1b?.values.push(overhead / (trivialUp - emptyUp));

      // B2: a no-op preview right after up: requests made, and time against a 1-agent stack's.
      const one = await project("one", oneDir);
      await one.up({ parallel: PARALLEL });
      const before = (await requestCounts(sim)).count;
      const [preview100] = await timed(() => hundred.preview({ expectNoChanges: true, parallel: PARALLEL }));
      figures.B2req?.values.push((await requestCounts(sim)).count - before);
      const [preview1] = await timed(() => one.preview({ expectNoChanges: true, parallel: PARALLEL }));
      record("no-op preview 100 s", seconds(preview100));
      record("no-op preview 1 s", seconds(preview1));
      figures.B2?.values.push(preview100 / preview1);
      const singleDir = path.join(work, `trivial-single-${run}`);
      await cp(path.join(projectRoot, "scripts", "bench", "trivial-project"), singleDir, { recursive: true });
      const single = await openStack({ stackName: `trivial-single-${run}`, workDir: singleDir, env: sandbox.env });
      await single.setConfig("bench:shape", { value: "single" });
      await single.up({ parallel: PARALLEL });
      const [trivialPreview100] = await timed(() => trivial.preview({ expectNoChanges: true, parallel: PARALLEL }));
      const [trivialPreview1] = await timed(() => single.preview({ expectNoChanges: true, parallel: PARALLEL }));
      figures.B2engine?.values.push(trivialPreview100 / trivialPreview1);

      // B3: state size per agent.
      const stateBytes = Buffer.byteLength(await stateFile(sandbox, `hundred-${run}`));
      record("state bytes per agent", stateBytes / (2 * PAIRS));
      figures.B3?.values.push(stateBytes / (2 * PAIRS) / (configBytes + 4096));

      // B4: smoke concurrency.
      const outputs = upResult.outputs.agents?.value;
      const quiet = { write: () => true, isTTY: false };
      const smoke = (agents: string[], concurrency: number) =>
        runSmoke({
          definitions,
          held: outputs,
          selection: { agents },
          connection: { baseUrl: sim.url, apiKey: sim.apiKey },
          concurrency,
          out: quiet,
        });
      const singles: number[] = [];
      for (let i = 0; i < 3; i++) singles.push((await timed(() => smoke([conversationalKey(i)], 1)))[0]);
      const sixteen = Array.from({ length: 16 }, (_, i) => conversationalKey(i));
      const [parallel16, result16] = await timed(() => smoke(sixteen, 8));
      if (result16.exitCode !== 0) throw new Error(`B4 smoke run failed with exit code ${result16.exitCode}`);
      record("single scenario s", seconds(median(singles)));
      record("16 scenarios @8 s", seconds(parallel16));
      figures.B4?.values.push(parallel16 / (2 * median(singles)));

      // B5: stream throughput.
      const [parsed, plain] = await streamThroughput();
      record("SSE events/s (parser + transcript)", parsed);
      record("SSE events/s (plain read)", plain);
      figures.B5?.values.push(parsed / plain);
      figureLoads.push(await load.window(runStarted));
    }
  }

  const machine = `${os.cpus().length} × ${os.cpus()[0]?.model ?? "cpu"}, ${Math.round(os.totalmem() / 2 ** 30)} GiB, Node ${process.version}, ${os.platform()} ${os.release()}`;
  const rows = Object.values(figures).map((f) => {
    const m = median(f.values);
    const spread = `${Math.min(...f.values).toFixed(2)}–${Math.max(...f.values).toFixed(2)}`;
    const verdict = f.ok
      ? targetVerdict(
          f.ok(m),
          figureLoads.some((l) => !l.quiet),
        )
      : "—";
    return { id: f.id, what: f.what, median: Number(m.toFixed(3)), spread, target: f.target, verdict };
  });
  if (FIGURES) {
    process.stdout.write(
      `\nagent-iac benchmark — ${RUNS} runs, simulator latency ${LATENCY_MS} ms, --parallel ${PARALLEL}\nmachine: ${machine}\n\n`,
    );
    process.stdout.write("| figure | what | median | spread | target | |\n|---|---|---|---|---|---|\n");
    for (const r of rows)
      process.stdout.write(`| ${r.id} | ${r.what} | ${r.median} | ${r.spread} | ${r.target} | ${r.verdict} |\n`);
    process.stdout.write(`\nmachine during the runs: ${figureLoads.map(describeLoad).join(", ")}\n`);
    process.stdout.write("\nraw measurements (median of runs):\n");
    for (const [name, values] of Object.entries(raw)) process.stdout.write(`  ${name}: ${median(values).toFixed(3)}\n`);
  }
  const decisions = await decisionBench();
  process.stdout.write(`\n${decisionTables(decisions)}`);
  const caller = await measureCaller();
  const totalS = seconds(performance.now() - benchStarted);
  process.stdout.write(`\nbenchmark took ${totalS.toFixed(0)} s\n`);
  const verdict = await load.stop();
  process.stdout.write(`machine during the benchmark: ${describeLoad(verdict)}\n`);
  const warning = busyWarning(verdict, "this benchmark");
  if (warning) process.stdout.write(`\n${warning}\n`);
  const loadRecord = { before: load.before, cores: load.cores, limits: LIMITS, ...verdict };
  await writeFile(
    path.join(projectRoot, "bench-results.json"),
    `${JSON.stringify({ date: new Date().toISOString(), machine, load: loadRecord, curve, runs: RUNS, figures: FIGURES ? rows : [], figureLoads, raw, decisions, caller, seconds: totalS }, null, 2)}\n`,
  );
}

/** `--decisions`: only the decision rules; their results replace `decisions` in bench-results.json. */
async function decisionsOnly() {
  const decisions = await decisionBench();
  process.stdout.write(decisionTables(decisions));
  await replaceResults("decisions", decisions);
}

/** Replaces one part of bench-results.json (and its date), keeping the others. */
async function replaceResults(part: string, value: unknown) {
  const file = path.join(projectRoot, "bench-results.json");
  const previous = await readFile(file, "utf8").then(
    (text) => JSON.parse(text) as Record<string, unknown>,
    () => ({}),
  );
  const updated = { ...previous, [part]: value, [`${part}_date`]: new Date().toISOString() };
  await writeFile(file, `${JSON.stringify(updated, null, 2)}\n`);
  process.stdout.write(`\nwritten to ${path.relative(process.cwd(), file) || file} (${part})\n`);
}

/** `--variants`: try's design against the fixed one of equal power; its rows replace `variants` in bench-results.json. */
async function variantsOnly() {
  const variants = variantsRows();
  process.stdout.write(variantsTable(variants));
  await replaceResults("variants", variants);
}

/** The caller's cost per turn over the service's own response time, printed with its bound's verdict. */
async function measureCaller(): Promise<CallerBenchResult> {
  const result = await callerBench({ ...CALLER, log: (line) => process.stderr.write(`caller: ${line}\n`) });
  process.stdout.write(`\n${callerTable(result)}`);
  return result;
}

/** `--caller`: only the caller's figure; it replaces `caller` in bench-results.json. */
async function callerOnly() {
  const caller = await measureCaller();
  const file = path.join(projectRoot, "bench-results.json");
  const previous = await readFile(file, "utf8").then(
    (text) => JSON.parse(text) as Record<string, unknown>,
    () => ({}),
  );
  await writeFile(file, `${JSON.stringify({ ...previous, caller, caller_date: new Date().toISOString() }, null, 2)}\n`);
  process.stdout.write(`\nwritten to ${path.relative(process.cwd(), file) || file} (caller)\n`);
}

/** The same 100 creations the provider makes, straight through the client at the same concurrency. */
async function directCreations(
  client: ReturnType<typeof createClient>,
  definitions: Awaited<ReturnType<typeof loadAgents>>["agents"],
) {
  const ids = new Map<string, string>();
  const pool = async <T>(items: T[], work: (item: T) => Promise<void>) => {
    let next = 0;
    await Promise.all(
      Array.from({ length: PARALLEL }, async () => {
        while (next < items.length) await work(items[next++] as T);
      }),
    );
  };
  await pool(
    definitions.filter((d) => d.kind === "procedural"),
    async (d) => {
      const created = await client.proceduralAgents.create({
        name: d.name,
        description: d.description,
        config: d.config as never,
      });
      ids.set(d.key, created.id);
    },
  );
  await pool(
    definitions.filter((d) => d.kind === "conversational"),
    async (d) => {
      await client.conversationalAgents.create({
        name: d.name,
        description: d.description,
        config: d.config as never,
        postprocess_agents: d.postprocessAgents.map((key) => ids.get(key) as string),
      });
    },
  );
}

/** Events per second: the client's SSE parser + transcript, and a plain read of the same bytes. */
async function streamThroughput(): Promise<[number, number]> {
  const frames: string[] = [];
  for (let i = 0; i < SSE_EVENTS - 1; i++) {
    const generation = `gen_${Math.floor(i / 20)}`;
    const payload = { type: "agent.message.delta", generation_id: generation, text_delta: `word${i} ` };
    frames.push(
      `id: ev_${i}\ndata: ${JSON.stringify({ id: `ev_${i}`, created_at: "2026-01-01T00:00:00Z", payload })}\n\n`,
    );
  }
  frames.push(
    `id: ev_end\ndata: ${JSON.stringify({ id: "ev_end", created_at: "2026-01-01T00:00:00Z", payload: { type: "conversation.ended" } })}\n\n`,
  );
  const body = Buffer.from(frames.join(""));
  const server = createServer((_req, res) => {
    res.writeHead(200, { "content-type": "text/event-stream" });
    res.end(body);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as { port: number };
  const baseUrl = `http://127.0.0.1:${port}`;
  try {
    const client = createClient({ baseUrl, apiKey: "bench-local-key" });
    const [parsedMs] = await timed(async () => {
      const transcript = new TranscriptBuilder();
      let count = 0;
      for await (const envelope of client.conversations.events("conv_bench")) {
        transcript.add(envelope);
        count++;
      }
      if (count !== SSE_EVENTS) throw new Error(`parsed ${count} of ${SSE_EVENTS} events`);
    });
    await client.close();
    const [plainMs] = await timed(async () => {
      const response = await request(`${baseUrl}/conversations/conv_bench/events`);
      const bytes = await response.body.arrayBuffer();
      if (bytes.byteLength !== body.length) throw new Error("short read");
    });
    return [SSE_EVENTS / seconds(parsedMs), SSE_EVENTS / seconds(plainMs)];
  } finally {
    server.close();
  }
}

if (flags.profile)
  await profileFleet({
    agents: Number(flags.agents ?? "1000"),
    log: (line) => process.stderr.write(`profile: ${line}\n`),
  });
else await (flags.decisions ? decisionsOnly() : flags.variants ? variantsOnly() : flags.caller ? callerOnly() : main());
