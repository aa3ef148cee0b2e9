// Runs `agent-iac <args>` as a child process on this Node, the way a user does, without throwing
// on a non-zero exit: tests assert the exit code and both streams.
import { execFile } from "node:child_process";
import path from "node:path";
import type { CommandIO } from "../../src/commands/index.ts";
import { projectRoot } from "../../src/workspace/index.ts";

export type CliResult = { code: number; stdout: string; stderr: string };

export const CLI = path.join(projectRoot, "src", "cli.ts");

/** `env` is the child's whole environment (default: this process's); colours are always off. */
export function runCli(args: string[], options: { cwd?: string; env?: NodeJS.ProcessEnv } = {}): Promise<CliResult> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [CLI, ...args],
      { cwd: options.cwd ?? projectRoot, env: { ...(options.env ?? process.env), NO_COLOR: "1" }, maxBuffer: 16 << 20 },
      (error, stdout, stderr) => {
        const code = error ? (typeof error.code === "number" ? error.code : -1) : 0;
        resolve({ code, stdout, stderr });
      },
    );
  });
}

/** What a test may do at a run's moments: each write (to either stream), and the moment a process would exit. */
export type RunHooks = {
  /** Told of every write, stdout's and stderr's, with the run's CommandIO (e.g. to signal it then). */
  onWrite?: (text: string, io: CommandIO) => void;
  /** A signal with nothing listening: the moment the process would say `note` and exit 130 (the run here goes on). */
  onIdleSignal?: (signal: NodeJS.Signals, note: string) => void;
};

/**
 * Runs `agent-iac <args>` in this process through the command layer's `runCli`, with the output
 * captured: what a spawned CLI says, in milliseconds. For flags, messages and exit codes; the
 * process boundary (signals, EPIPE, the exit status itself) stays with `runCli`. `env` is the whole
 * environment of the run (default: this process's) and `cwd` its directory (default: this
 * process's): the run's CommandIO carries both, and nothing below the command edge reads the
 * process's. The process's environment and directory are never changed, so runs can go side by side
 * (test/edge/in-process.test.ts, test/e2e/start/run-environment.test.ts): the files a command names
 * are resolved against the run's project, and the Pulumi CLI (with the language host and dynamic
 * provider it starts) gets the run's environment, a variable only this process has unset
 * (ProjectContext's childEnv).
 */
export async function runInProcess(
  args: string[],
  options: { cwd?: string; env?: NodeJS.ProcessEnv } & RunHooks = {},
): Promise<CliResult> {
  const { CommandIO, runCli } = await import("../../src/commands/index.ts");
  let stdout = "";
  let stderr = "";
  let idle: NodeJS.Signals | undefined;
  const env = options.env ? { ...options.env, NO_COLOR: "1" } : process.env;
  const cwd = options.cwd ?? process.cwd();
  const io: CommandIO = new CommandIO(
    {
      stdout: {
        write: (text: string) => {
          stdout += text;
          options.onWrite?.(text, io);
        },
      },
      stderr: {
        write: (text: string) => {
          stderr += text;
          options.onWrite?.(text, io);
        },
      },
      env,
      cwd,
    },
    (signal, note) => {
      idle ??= signal;
      options.onIdleSignal?.(signal, note);
    },
  );
  const code = await runCli(args, io);
  return { code: idle ? 130 : code, stdout, stderr };
}
