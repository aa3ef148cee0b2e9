// One data file, one simulator (issue 24): a simulator with `--data FILE` holds `FILE.lock`, a small
// JSON file with its pid and address, created exclusively. A second simulator on the same file is
// refused naming the holder; a lock left by a process that no longer runs is taken over.
// `readSimulatorLock` and `probeSimulator` let other code (`npm start`) find a running simulator.
import { randomBytes } from "node:crypto";
import { open, readFile, rename, rm, stat, writeFile } from "node:fs/promises";
import { request } from "undici";

export type SimulatorLock = {
  pid: number;
  /** The simulator's address; null while it is starting. */
  url: string | null;
  data_file: string;
  started_at: string;
};

export class SimulatorLockedError extends Error {
  readonly code = "ELOCKED";
  readonly holder: SimulatorLock | undefined;
  constructor(dataFile: string, holder: SimulatorLock | undefined) {
    const who = holder
      ? `process ${holder.pid}${holder.url ? ` at ${holder.url}` : " (starting)"}`
      : "another process (its lock is being written)";
    super(
      `--data ${dataFile}: another simulator already serves this file: ${who}; stop it, use it, or give another --data file`,
    );
    this.holder = holder;
  }
}

export const lockFileOf = (dataFile: string) => `${dataFile}.lock`;

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
}

async function readLockFile(dataFile: string): Promise<{ lock?: SimulatorLock; token?: string } | undefined> {
  let text: string;
  try {
    text = await readFile(lockFileOf(dataFile), "utf8");
  } catch {
    return undefined;
  }
  try {
    const value = JSON.parse(text) as SimulatorLock & { token?: string };
    if (!Number.isInteger(value?.pid)) return {};
    const { token, ...lock } = value;
    return { lock, ...(token ? { token } : {}) };
  } catch {
    return {};
  }
}

/** The simulator that holds `dataFile`, when its process still runs; undefined otherwise. */
export async function readSimulatorLock(dataFile: string): Promise<SimulatorLock | undefined> {
  const found = await readLockFile(dataFile);
  return found?.lock && alive(found.lock.pid) ? found.lock : undefined;
}

/** `GET {url}/_simulator/health` (no key needed): what a simulator says about itself, or undefined. */
export async function probeSimulator(
  url: string,
  timeoutMs = 2000,
): Promise<{ ok: boolean; simulator: string; profile: string; service_id: string } | undefined> {
  try {
    const response = await request(`${url.replace(/\/$/, "")}/_simulator/health`, {
      signal: AbortSignal.timeout(timeoutMs),
    });
    const body = (await response.body.json()) as { simulator?: unknown };
    return body?.simulator === "agent-iac" ? (body as never) : undefined;
  } catch {
    return undefined;
  }
}

export type LockHandle = { setUrl(url: string): Promise<void>; release(): Promise<void> };

/** Takes the lock of `dataFile`, or throws SimulatorLockedError naming the live holder. */
export async function acquireLock(dataFile: string): Promise<LockHandle> {
  const file = lockFileOf(dataFile);
  const token = randomBytes(12).toString("hex");
  const lock: SimulatorLock = {
    pid: process.pid,
    url: null,
    data_file: dataFile,
    started_at: new Date().toISOString(),
  };
  const write = async (flag: "wx" | "w") => {
    const handle = await open(file, flag, 0o600);
    try {
      await handle.writeFile(JSON.stringify({ ...lock, token }));
    } finally {
      await handle.close();
    }
  };
  for (let attempt = 0; ; attempt++) {
    try {
      await write("wx");
      break;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "EEXIST" || attempt > 0) throw lockError(dataFile, error);
      const found = await readLockFile(dataFile);
      const fresh = Date.now() - ((await stat(file).catch(() => undefined))?.mtimeMs ?? 0) < 5000;
      if (found?.lock && alive(found.lock.pid)) throw new SimulatorLockedError(dataFile, found.lock);
      if (!found?.lock && fresh) throw new SimulatorLockedError(dataFile, undefined);
      await rm(file, { force: true }); // stale: its process is gone
    }
  }
  const ours = async () => (await readLockFile(dataFile))?.token === token;
  return {
    async setUrl(url) {
      lock.url = url;
      if (!(await ours())) return;
      // Replaced by a rename, so a reader never sees a half-written lock.
      const temp = `${file}.${process.pid}.tmp`;
      await writeFile(temp, JSON.stringify({ ...lock, token }), { mode: 0o600 });
      await rename(temp, file);
    },
    async release() {
      if (await ours()) await rm(file, { force: true });
    },
  };
}

function lockError(dataFile: string, error: unknown): Error {
  if (error instanceof SimulatorLockedError) return error;
  const code = (error as NodeJS.ErrnoException).code;
  if (code === "EEXIST") return new SimulatorLockedError(dataFile, undefined);
  return Object.assign(new Error(`--data ${dataFile}: cannot create ${lockFileOf(dataFile)}: ${code ?? error}`), {
    code: "EDATAFILE",
  });
}
