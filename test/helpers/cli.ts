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
 * environment of the run and `cwd` its directory: the run's CommandIO carries both, which is all the
 * use cases read (test/usecases runs them side by side). Both are still swapped here and restored
 * afterwards (this file's tests run one at a time in their own worker process) for what still reads
 * the process: the Pulumi CLI's child processes (the dynamic provider reads AGENT_IAC_API_KEY and
 * the rest of the run's environment from its own, which the Automation API builds from process.env
 * plus the PULUMI_* and PATH entries of pulumiEnvironment), and the file paths commands take as
 * positionals or flags other than --record/--replay/--compare/--from-recording/--data and the report
 * files (e.g. `report merge` inputs, `judge label` reports and --labels), read from the process's cwd.
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
  const saved = { env: process.env, cwd: process.cwd() };
  process.env = env;
  process.chdir(cwd);
  try {
    const code = await runCli(args, io);
    return { code: idle ? 130 : code, stdout, stderr };
  } finally {
    process.env = saved.env;
    process.chdir(saved.cwd);
  }
}
