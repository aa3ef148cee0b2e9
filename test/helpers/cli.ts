// Runs `agent-iac <args>` as a child process on this Node, the way a user does, without throwing
// on a non-zero exit: tests assert the exit code and both streams.
import { execFile } from "node:child_process";
import path from "node:path";
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
