// Peak memory of the processes Pulumi starts for an operation: the program (the Node language
// host's `cmd/run`) and the dynamic provider host (`cmd/dynamic-provider`). Polls /proc for this
// process's descendants and keeps each role's highest VmHWM (the kernel's own peak resident set).
import { readdir, readFile } from "node:fs/promises";

export type Role = "program" | "provider";
export type PeakMemory = Record<Role, number>;

function roleOf(commandLine: string): Role | undefined {
  if (commandLine.includes("cmd/dynamic-provider")) return "provider";
  if (commandLine.includes("cmd/run")) return "program";
  return undefined;
}

async function sample(peaks: PeakMemory): Promise<void> {
  const parents = new Map<number, number>();
  for (const entry of await readdir("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    const stat = await readFile(`/proc/${entry}/stat`, "utf8").catch(() => "");
    // pid (comm) state ppid …; comm may hold spaces and parentheses.
    const ppid = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]);
    if (ppid) parents.set(Number(entry), ppid);
  }
  const isDescendant = (pid: number) => {
    for (let p = parents.get(pid); p; p = parents.get(p)) if (p === process.pid) return true;
    return false;
  };
  for (const pid of parents.keys()) {
    if (!isDescendant(pid)) continue;
    const commandLine = (await readFile(`/proc/${pid}/cmdline`, "utf8").catch(() => "")).replaceAll("\0", " ");
    const role = roleOf(commandLine);
    if (!role) continue;
    const status = await readFile(`/proc/${pid}/status`, "utf8").catch(() => "");
    const kib = Number(/VmHWM:\s+(\d+)/.exec(status)?.[1] ?? 0);
    peaks[role] = Math.max(peaks[role], kib * 1024);
  }
}

/** Runs `work` while sampling every 100 ms; returns its result and the peaks in bytes (0 off Linux). */
export async function withPeakMemory<T>(work: () => Promise<T>): Promise<[T, PeakMemory]> {
  const peaks: PeakMemory = { program: 0, provider: 0 };
  if (process.platform !== "linux") return [await work(), peaks];
  let running = true;
  const sampler = (async () => {
    while (running) {
      await sample(peaks);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  })();
  try {
    return [await work(), peaks];
  } finally {
    running = false;
    await sampler;
  }
}
