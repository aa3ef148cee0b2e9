// The fleet curve: agent-iac and the engine's own control (scripts/bench/trivial-project: dynamic
// resources of the same two-level shape carrying the same request bodies, whose create waits the
// simulator's 50 ms) at N agents, measured side by side in one run on each backend: `up` from
// empty, a no-op preview, a one-agent change (preview and up), state bytes per agent and the peak
// memory of the program and provider processes. Every target is a ratio of the two sides.
import { cp, mkdir, writeFile } from "node:fs/promises";
import path from "node:path";
import { performance } from "node:perf_hooks";
import { loadAgents } from "../src/definitions/index.ts";
import { openStack, projectRoot, type Stack } from "../src/workspace/index.ts";
import { type Backend, pulumiSandbox } from "../test/helpers/pulumi.ts";
import { changeOneAgent, conversationalKey, proceduralKey, writeFleet } from "./bench-agents.ts";
import { describeLoad, type LoadMonitor, type LoadVerdict, targetVerdict } from "./bench-load.ts";
import { withPeakMemory } from "./bench-memory.ts";

export type Measures = {
  upS: number;
  noopPreviewS: number;
  changePreviewS: number;
  changeUpS: number;
  stateBytesPerAgent: number;
  peakProgramBytes: number;
  peakProviderBytes: number;
};
export type CurvePoint = {
  backend: Backend;
  agents: number;
  ours: Measures;
  control: Measures;
  /** The machine while the point was measured (absent in results recorded before load was tracked). */
  load?: LoadVerdict;
  /** The same, step by step ("up ours", "up control", …). */
  stepLoads?: Record<string, LoadVerdict>;
};
export type Target = {
  id: string;
  backend: Backend;
  what: string;
  value: number;
  target: string;
  met: boolean;
  /** Measured while the machine was busy: the figure stands, but it checks nothing. */
  busy: boolean;
};
export type FleetResult = {
  points: CurvePoint[];
  /** Per backend: `up` of the program with no agents, and a no-op preview of a 1-agent stack. */
  references: Record<string, { upEmptyS: number; noopPreviewOneS: number }>;
  targets: Target[];
};

export type FleetOptions = {
  agents: number[];
  backends: Backend[];
  sim: { url: string; apiKey: string };
  work: string;
  parallel: number;
  /** Samples the machine's load; each point and step records the load it ran under. */
  load: LoadMonitor;
  log(line: string): void;
};

async function timed<T>(work: () => Promise<T>): Promise<[number, T]> {
  const started = performance.now();
  const result = await work();
  return [(performance.now() - started) / 1000, result];
}

/** Bytes of the stack's deployment as exported (the checkpoint the engine rewrites after every step). */
async function stateBytes(stack: Stack): Promise<number> {
  return Buffer.byteLength(JSON.stringify((await stack.exportStack()).deployment));
}

/** The request bodies of a generated fleet, in pairs, for the control (links are the control's own). */
export async function writeBodies(agentsDir: string, file: string): Promise<void> {
  const { agents, errors } = await loadAgents(agentsDir, { from: process.cwd() });
  if (errors.length > 0) throw new Error(`generated agents do not load: ${errors.length} error(s)`);
  const byKey = new Map(agents.map((a) => [a.key, { name: a.name, description: a.description, config: a.config }]));
  const bodies: { procedural: unknown[]; conversational: unknown[] } = { procedural: [], conversational: [] };
  for (let i = 0; byKey.has(proceduralKey(i)); i++) {
    bodies.procedural.push(byKey.get(proceduralKey(i)));
    if (byKey.has(conversationalKey(i))) bodies.conversational.push(byKey.get(conversationalKey(i)));
  }
  await writeFile(file, JSON.stringify(bodies));
}

export async function fleetCurve(options: FleetOptions): Promise<FleetResult> {
  const points: CurvePoint[] = [];
  const references: FleetResult["references"] = {};
  const cleanups: (() => Promise<void>)[] = [];
  // Set up every backend first, then measure N by N across the backends: a run cut short still
  // has the smaller fleets on all of them.
  const backends = [];
  try {
    for (const backend of options.backends) {
      const sandbox = await pulumiSandbox({ backend });
      cleanups.push(() => sandbox.cleanup());
      const env = { ...sandbox.env, AGENT_IAC_API_KEY: options.sim.apiKey };
      const ours = async (name: string, agentsDir: string) => {
        const dir = path.join(options.work, `${backend}-${name}`);
        await cp(path.join(projectRoot, "test", "fixtures", "agents-project"), dir, { recursive: true });
        const stack = await openStack({ stackName: name, workDir: dir, env });
        await stack.setConfig("agents:baseUrl", { value: options.sim.url });
        await stack.setConfig("agents:dir", { value: agentsDir });
        return stack;
      };
      const control = async (name: string, bodiesFile: string) => {
        const dir = path.join(options.work, `${backend}-${name}`);
        await cp(path.join(projectRoot, "scripts", "bench", "trivial-project"), dir, { recursive: true });
        const stack = await openStack({ stackName: name, workDir: dir, env: sandbox.env });
        await stack.setConfig("bench:bodies", { value: bodiesFile });
        return stack;
      };
      const run = { parallel: options.parallel };

      // References for B1b and B2: the program with no agents, and a stack of one agent, timed
      // just before the 100-agent point they are compared with (the load on a shared machine drifts).
      const measureReferences = async () => {
        const emptyDir = path.join(options.work, `${backend}-agents-0`);
        await mkdir(emptyDir, { recursive: true });
        const empty = await ours("empty", emptyDir);
        const oneDir = path.join(options.work, `${backend}-agents-1`);
        await writeFleet(oneDir, 1);
        const one = await ours("one", oneDir);
        await one.up(run);
        const [upEmptyS] = await timed(() => empty.up(run));
        const [noopPreviewOneS] = await timed(() => one.preview({ ...run, expectNoChanges: true }));
        references[backend] = { upEmptyS, noopPreviewOneS };
        options.log(`${backend}: reference ${JSON.stringify(references[backend])}`);
      };
      backends.push({ backend, ours, control, run, references: measureReferences });
    }
    const referenceAt = options.agents.includes(100) ? 100 : options.agents[0];
    for (const agents of options.agents) {
      for (const { backend, ours, control, run, references: measureReferences } of backends) {
        if (agents === referenceAt) await measureReferences();
        options.log(`${backend}: ${agents} agents`);
        const agentsDir = path.join(options.work, `${backend}-agents-${agents}`);
        await writeFleet(agentsDir, agents);
        const bodiesFile = path.join(options.work, `${backend}-bodies-${agents}.json`);
        await writeBodies(agentsDir, bodiesFile);
        const sides = {
          ours: { stack: await ours(`ours-${agents}`, agentsDir), change: () => changeOneAgent(agentsDir, 1) },
          control: {
            stack: await control(`control-${agents}`, bodiesFile),
            change: async () => {
              const changedDir = path.join(options.work, `${backend}-agents-${agents}-changed`);
              await writeFleet(changedDir, agents);
              await changeOneAgent(changedDir, 1);
              await writeBodies(changedDir, bodiesFile);
            },
          },
        };
        const measured: Partial<Record<"ours" | "control", Measures>> = {};
        // The two sides alternate step by step, so a burst of load on this shared machine hits both.
        const m = { ours: {} as Partial<Measures>, control: {} as Partial<Measures> };
        const peaks = { ours: { program: 0, provider: 0 }, control: { program: 0, provider: 0 } };
        const pointStarted = performance.now();
        const stepLoads: Record<string, LoadVerdict> = {};
        const step = async (side: "ours" | "control", work: (stack: Stack) => Promise<unknown>, name: string) => {
          const started = performance.now();
          const [[seconds], peak] = await withPeakMemory(() => timed(() => work(sides[side].stack)));
          stepLoads[`${name} ${side}`] = await options.load.window(started);
          peaks[side].program = Math.max(peaks[side].program, peak.program);
          peaks[side].provider = Math.max(peaks[side].provider, peak.provider);
          return seconds;
        };
        for (const side of ["ours", "control"] as const) m[side].upS = await step(side, (s) => s.up(run), "up");
        for (const side of ["ours", "control"] as const)
          m[side].noopPreviewS = await step(side, (s) => s.preview({ ...run, expectNoChanges: true }), "no-op preview");
        for (const side of ["ours", "control"] as const) {
          await sides[side].change();
          m[side].changePreviewS = await step(side, (s) => s.preview(run), "change preview");
          m[side].changeUpS = await step(
            side,
            async (s) => {
              const up = await s.up(run);
              if ((up.summary.resourceChanges?.replace ?? 0) !== 1)
                throw new Error(`${side}: the one-agent change replaced ${JSON.stringify(up.summary.resourceChanges)}`);
            },
            "change up",
          );
          m[side].stateBytesPerAgent = (await stateBytes(sides[side].stack)) / agents;
          measured[side] = {
            ...(m[side] as Measures),
            peakProgramBytes: peaks[side].program,
            peakProviderBytes: peaks[side].provider,
          };
        }
        const load = await options.load.window(pointStarted);
        const point = { backend, agents, ours: measured.ours as Measures, control: measured.control as Measures, load };
        points.push({ ...point, stepLoads });
        if (!load.quiet) options.log(`${backend}, ${agents} agents: the machine was BUSY — ${load.reasons.join("; ")}`);
        // Each point as soon as it is measured: a long run that fails later keeps what it measured.
        options.log(`measured ${JSON.stringify(point)}`);
      }
    }
  } finally {
    for (const cleanup of cleanups) await cleanup();
  }
  return { points, references, targets: targets(points, references) };
}

const ratio = (point: CurvePoint, key: keyof Measures) => point.ours[key] / point.control[key];
const isBusy = (point: CurvePoint) => point.load !== undefined && !point.load.quiet;

/** The targets, each a ratio to the control measured in the same run. */
export function targets(points: CurvePoint[], references: FleetResult["references"]): Target[] {
  const list: Target[] = [];
  for (const [backend, reference] of Object.entries(references)) {
    const at = (n: number) => points.find((p) => p.backend === backend && p.agents === n);
    const largest = points.filter((p) => p.backend === backend).at(-1);
    if (largest) {
      const n = largest.agents.toLocaleString("en-US");
      const add = (id: string, what: string, value: number, limit: number) =>
        list.push({
          id,
          backend: backend as Backend,
          what,
          value,
          target: `≤ ${limit}`,
          met: value <= limit,
          busy: isBusy(largest),
        });
      add("up", `\`up\` from empty at ${n} agents ÷ control`, ratio(largest, "upS"), 1.3);
      add("change preview", `one-agent change, preview, at ${n} ÷ control's`, ratio(largest, "changePreviewS"), 1.3);
      add("change up", `one-agent change, \`up\`, at ${n} ÷ control's`, ratio(largest, "changeUpS"), 1.3);
      add("state", `state bytes per agent at ${n} ÷ control's`, ratio(largest, "stateBytesPerAgent"), 1.5);
    }
    const hundred = at(100);
    if (hundred) {
      const b1b = (hundred.ours.upS - reference.upEmptyS) / (hundred.control.upS - reference.upEmptyS);
      list.push({
        id: "B1b",
        backend: backend as Backend,
        what: "`up` overhead of 100 agents (− empty program) ÷ the control's",
        value: b1b,
        target: "≤ 1.2",
        met: b1b <= 1.2,
        busy: isBusy(hundred),
      });
      const b2 = hundred.ours.noopPreviewS / reference.noopPreviewOneS;
      list.push({
        id: "B2",
        backend: backend as Backend,
        what: "no-op preview of 100 agents ÷ of 1 agent",
        value: b2,
        target: "≤ 1.5",
        met: b2 <= 1.5,
        busy: isBusy(hundred),
      });
    }
  }
  return list;
}

const mb = (bytes: number) => `${Math.round(bytes / 2 ** 20)} MB`;
const s = (seconds: number) => `${seconds.toFixed(1)} s`;

/** How the machine was while a point was measured: "quiet (…)", "busy (load x.y, …)" or not measured. */
export const machine = (p: CurvePoint) =>
  p.load ? describeLoad(p.load) : "not measured (recorded before load was tracked)";

/** The curve as a Markdown table: each measure of ours, the control's, and their ratio. */
export function curveTable(result: FleetResult): string {
  const lines = [
    "| backend | agents | `up` from empty | no-op preview | one-agent change: preview / `up` | state per agent | peak RSS program / provider | machine |",
    "|---|---|---|---|---|---|---|---|",
  ];
  for (const p of result.points) {
    const r = (key: keyof Measures) => `${ratio(p, key).toFixed(2)}×`;
    const kb = (m: Measures) => `${(m.stateBytesPerAgent / 1024).toFixed(2)} KB`;
    lines.push(
      `| ${p.backend} | ${p.agents.toLocaleString("en-US")} | ${s(p.ours.upS)} vs ${s(p.control.upS)} (${r("upS")}) | ${s(p.ours.noopPreviewS)} vs ${s(p.control.noopPreviewS)} (${r("noopPreviewS")}) | ${s(p.ours.changePreviewS)} / ${s(p.ours.changeUpS)} vs ${s(p.control.changePreviewS)} / ${s(p.control.changeUpS)} (${r("changePreviewS")} / ${r("changeUpS")}) | ${kb(p.ours)} vs ${kb(p.control)} (${r("stateBytesPerAgent")}) | ${mb(p.ours.peakProgramBytes)} / ${mb(p.ours.peakProviderBytes)} vs ${mb(p.control.peakProgramBytes)} / ${mb(p.control.peakProviderBytes)} | ${machine(p)} |`,
    );
  }
  return lines.join("\n");
}

export function targetTable(result: FleetResult): string {
  const lines = ["| target | backend | what | ratio | target | |", "|---|---|---|---|---|---|"];
  for (const t of result.targets)
    lines.push(
      `| ${t.id} | ${t.backend} | ${t.what} | ${t.value.toFixed(2)} | ${t.target} | ${targetVerdict(t.met, t.busy)} |`,
    );
  return lines.join("\n");
}
