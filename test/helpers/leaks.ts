// Processes a test run left behind (issue 30): `npm test` must leave no simulator or other process
// running, least of all one listening on a port. The run's global setup marks its environment
// (AGENT_IAC_TEST_RUN=<id>); every process started from it inherits the mark (tests that give a
// child an environment of its own pass the mark on), so what still carries it after the run is
// ours, whoever its parent is now. Linux /proc only; elsewhere nothing is found.
import { readdir, readFile, readlink } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { setTimeout as sleep } from "node:timers/promises";

export const RUN_MARK = "AGENT_IAC_TEST_RUN";

/** Where the run's one packed tarball goes (helpers/packed.ts); the run's teardown removes it. */
export function packDirectory(mark = process.env[RUN_MARK] ?? String(process.pid)): string {
  return path.join(os.tmpdir(), `agent-iac-pack-${mark}`);
}

/** `cwd`: where it runs (a test project's copy names the test that left it). */
export type MarkedProcess = { pid: number; command: string; cwd: string; listening: string[] };

/** Listening TCP sockets by inode: "127.0.0.1:8787". */
async function listeningSockets(): Promise<Map<string, string>> {
  const sockets = new Map<string, string>();
  for (const [file, v6] of [
    ["/proc/net/tcp", false],
    ["/proc/net/tcp6", true],
  ] as const) {
    const text = await readFile(file, "utf8").catch(() => "");
    for (const line of text.split("\n").slice(1)) {
      const fields = line.trim().split(/\s+/);
      if (fields[3] !== "0A") continue; // LISTEN
      const [address = "", port = "0"] = (fields[1] ?? "").split(":");
      const host = v6
        ? `[${address}]`
        : (address.match(/../g) ?? [])
            .reverse()
            .map((h) => Number.parseInt(h, 16))
            .join(".");
      sockets.set(fields[9] ?? "", `${host}:${Number.parseInt(port, 16)}`);
    }
  }
  return sockets;
}

/**
 * Every live process but `except` whose environment carries `mark` (in `variable`, the run's by
 * default), with what it listens on.
 */
export async function markedProcesses(
  mark: string,
  except: number[] = [process.pid],
  variable = RUN_MARK,
): Promise<MarkedProcess[]> {
  const needle = `${variable}=${mark}`;
  const sockets = await listeningSockets();
  const found: MarkedProcess[] = [];
  for (const name of await readdir("/proc").catch(() => [] as string[])) {
    const pid = Number(name);
    if (!Number.isInteger(pid) || except.includes(pid)) continue;
    const environ = await readFile(`/proc/${pid}/environ`, "utf8").catch(() => "");
    if (!environ.split("\0").includes(needle)) continue;
    const state = await readFile(`/proc/${pid}/stat`, "utf8").catch(() => "");
    if (/\) Z /.test(state)) continue; // a zombie holds nothing; its parent has yet to reap it
    const command = (await readFile(`/proc/${pid}/cmdline`, "utf8").catch(() => "")).split("\0").join(" ").trim();
    const cwd = await readlink(`/proc/${pid}/cwd`).catch(() => "");
    const listening: string[] = [];
    for (const fd of await readdir(`/proc/${pid}/fd`).catch(() => [] as string[])) {
      const target = await readlink(`/proc/${pid}/fd/${fd}`).catch(() => "");
      const inode = /^socket:\[(\d+)\]$/.exec(target)?.[1];
      const address = inode ? sockets.get(inode) : undefined;
      if (address) listening.push(address);
    }
    found.push({ pid, command, cwd, listening });
  }
  return found;
}

/** The marked processes still alive after up to `waitMs` (what is exiting gets that long to finish). */
export async function leftBehind(mark: string, variable = RUN_MARK, waitMs = 10_000): Promise<MarkedProcess[]> {
  let left = await markedProcesses(mark, [process.pid], variable);
  for (let waited = 0; left.length > 0 && waited < waitMs; waited += 250) {
    await sleep(250);
    left = await markedProcesses(mark, [process.pid], variable);
  }
  return left;
}

export function describeLeaks(leaks: MarkedProcess[]): string {
  return leaks
    .map(
      (p) =>
        `  pid ${p.pid}${p.listening.length ? ` listening on ${p.listening.join(", ")}` : ""}: ${p.command.slice(0, 200)}${p.cwd ? ` (in ${p.cwd})` : ""}`,
    )
    .join("\n");
}
