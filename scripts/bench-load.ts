// Was the machine quiet while the benchmark measured? The load average before the run, and, during
// it, a sample every second of the 1-minute load average and of the CPU share of the processes that
// are not the benchmark's own tree (/proc/stat against /proc/<pid>/stat; Linux only, "not measured"
// elsewhere). `judgeLoad` is the pure rule; `LoadMonitor` takes the samples.
//
// Busy: the 1-minute load average before the run above 0.75 × cores (1.5 on 2 cores), or other
// processes using more than 10 % of the machine's CPU over a measured window. During the run the
// load average counts the benchmark's own processes too, so it is recorded but judged only through
// the other processes' CPU share, which leaves them out.
import { readdir, readFile } from "node:fs/promises";
import os from "node:os";
import { performance } from "node:perf_hooks";

export type LoadSample = {
  /** ms (performance.now()) when taken. */
  at: number;
  /** 1-minute load average. */
  load1: number;
  /** Share (0–1) of the machine's CPU used by other processes since the previous sample; null when not measured. */
  othersCpu: number | null;
  /** The interval the share covers, in ms (the mean is weighted by it; 1 when absent). */
  ms?: number;
};

export type LoadVerdict = {
  quiet: boolean;
  /** Highest 1-minute load average sampled in the window (the one before the run for the run's verdict). */
  load1: number;
  /** Mean share of the machine's CPU used by other processes over the window (weighted by each
   * sample's interval); null when not measured. */
  othersCpu: number | null;
  samples: number;
  /** Why the window counts as busy (empty when quiet). */
  reasons: string[];
};

export const LIMITS = { loadPerCore: 0.75, othersCpu: 0.1 };

const round = (value: number, digits: number) => Number(value.toFixed(digits));

/**
 * Judges a window from its samples. `loadBefore` is the 1-minute load average before the benchmark
 * started (judged against 0.75 × cores); the samples' other-processes CPU share is judged by its mean.
 */
export function judgeLoad(samples: LoadSample[], cores: number, loadBefore?: number): LoadVerdict {
  const reasons: string[] = [];
  const loadLimit = LIMITS.loadPerCore * cores;
  if (loadBefore !== undefined && loadBefore > loadLimit)
    reasons.push(`load average ${loadBefore.toFixed(2)} before the run, above ${loadLimit} (${cores} cores)`);
  const measured = samples.flatMap((s) => (s.othersCpu === null ? [] : [[s.othersCpu, s.ms ?? 1] as const]));
  const weight = measured.reduce((sum, [, ms]) => sum + ms, 0);
  const othersCpu = weight > 0 ? measured.reduce((sum, [share, ms]) => sum + share * ms, 0) / weight : null;
  if (othersCpu !== null && othersCpu > LIMITS.othersCpu)
    reasons.push(
      `other processes used ${(othersCpu * 100).toFixed(0)} % of the CPU, above ${LIMITS.othersCpu * 100} %`,
    );
  const load1 = Math.max(loadBefore ?? 0, ...samples.map((s) => s.load1));
  return {
    quiet: reasons.length === 0,
    load1: round(load1, 2),
    othersCpu: othersCpu === null ? null : round(othersCpu, 3),
    samples: samples.length,
    reasons,
  };
}

/** "quiet (load 0.4, others 2 % CPU)" or "busy (load 2.9, others 45 % CPU)". */
export function describeLoad(verdict: LoadVerdict): string {
  const others =
    verdict.othersCpu === null ? "others' CPU not measured" : `others ${(verdict.othersCpu * 100).toFixed(0)} % CPU`;
  return `${verdict.quiet ? "quiet" : "busy"} (load ${verdict.load1.toFixed(1)}, ${others})`;
}

/** A loud warning for a busy run, or undefined for a quiet one. */
export function busyWarning(verdict: LoadVerdict, what: string): string | undefined {
  if (verdict.quiet) return undefined;
  const bar = "!".repeat(78);
  return `${bar}\n!! WARNING: the machine was BUSY during ${what}: ${verdict.reasons.join("; ")}.\n!! Its seconds and ratios are not a quiet-machine measurement; do not publish them as one.\n${bar}`;
}

type CpuTimes = { total: number; busy: number; tree: number };

/** Jiffies: the machine's total and busy time (/proc/stat) and this process tree's (/proc/<pid>/stat). */
async function cpuTimes(): Promise<CpuTimes> {
  const stat = await readFile("/proc/stat", "utf8");
  // cpu user nice system idle iowait irq softirq steal (guest time is already in user).
  const fields = (stat.split("\n")[0] ?? "").trim().split(/\s+/).slice(1, 9).map(Number);
  const total = fields.reduce((a, b) => a + b, 0);
  const busy = total - (fields[3] ?? 0) - (fields[4] ?? 0);
  const procs = new Map<number, { ppid: number; jiffies: number }>();
  for (const entry of await readdir("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    const text = await readFile(`/proc/${entry}/stat`, "utf8").catch(() => "");
    if (!text) continue;
    // pid (comm) state ppid … utime(14) stime(15) cutime(16) cstime(17); comm may hold spaces.
    const rest = text.slice(text.lastIndexOf(")") + 2).split(" ");
    const field = (n: number) => Number(rest[n - 3] ?? 0);
    // A child's time moves into its parent's cutime/cstime when reaped: summing all four over the
    // live tree counts every descendant once, exited ones included.
    procs.set(Number(entry), { ppid: field(4), jiffies: field(14) + field(15) + field(16) + field(17) });
  }
  const inTree = (pid: number) => {
    for (let p: number | undefined = pid; p; p = procs.get(p)?.ppid) if (p === process.pid) return true;
    return false;
  };
  let tree = 0;
  for (const [pid, { jiffies }] of procs) if (inTree(pid)) tree += jiffies;
  return { total, busy, tree };
}

/** Samples every `intervalMs` until stopped; `window(since)` takes a fresh sample and returns those since then. */
export class LoadMonitor {
  readonly cores = os.availableParallelism();
  /** The load averages (1, 5, 15 minutes) when the monitor started: the machine before the run. */
  readonly before = os.loadavg().map((v) => round(v, 2));
  readonly measured = process.platform === "linux";
  private readonly samples: LoadSample[] = [];
  private previous: (CpuTimes & { at: number }) | undefined;
  private timer: NodeJS.Timeout | undefined;
  private pending: Promise<void> = Promise.resolve();

  start(intervalMs = 1000): this {
    this.timer = setInterval(() => void this.sample(), intervalMs);
    this.timer.unref();
    void this.sample();
    return this;
  }

  async stop(): Promise<LoadVerdict> {
    clearInterval(this.timer);
    await this.sample();
    return this.verdict();
  }

  /** The whole run: the load before it and the other processes' CPU over every sample. */
  verdict(): LoadVerdict {
    return judgeLoad(this.samples, this.cores, this.before[0]);
  }

  /** The samples since `since` (performance.now()), judged; one is taken now so a short window has one. */
  async window(since: number): Promise<LoadVerdict> {
    await this.sample();
    return judgeLoad(
      this.samples.filter((s) => s.at >= since),
      this.cores,
    );
  }

  private sample(): Promise<void> {
    // One at a time: each CPU share is the difference from the sample before.
    this.pending = this.pending.then(async () => {
      const load1 = os.loadavg()[0] ?? 0;
      const at = performance.now();
      let othersCpu: number | null = null;
      let ms: number | undefined;
      if (this.measured) {
        const now = await cpuTimes().catch(() => undefined);
        const prev = this.previous;
        if (now && prev && now.total > prev.total) {
          const others = now.busy - prev.busy - Math.max(0, now.tree - prev.tree);
          othersCpu = round(Math.min(1, Math.max(0, others / (now.total - prev.total))), 3);
          ms = Math.round(at - prev.at);
        }
        this.previous = now && { ...now, at };
      }
      const sample = { at, load1: round(load1, 2), othersCpu, ms };
      if (othersCpu !== null || !this.measured) this.samples.push(sample);
    });
    return this.pending;
  }
}

/** A target measured on a busy machine checks nothing: its verdict says so, whichever way it went. */
export function targetVerdict(met: boolean, busy: boolean): string {
  if (busy) return `${met ? "met" : "missed"} on a BUSY machine: not checked`;
  return met ? "met" : "MISSED";
}
