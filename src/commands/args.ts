// The flag handling every command shares: `--help` prints the usage (exit 0), a bad flag prints
// the reason and the usage (exit 2). Returns the parsed flags, or the exit code to stop with.
import { type ParseArgsOptionsConfig, parseArgs } from "node:util";

const helpOption = { help: { type: "boolean", short: "h", default: false } } as const;

export function parseCommand<const O extends ParseArgsOptionsConfig>(
  command: string,
  help: string,
  argv: string[],
  options: O,
  maxPositionals = 0,
) {
  try {
    const parsed = parseArgs({ args: argv, options: { ...options, ...helpOption }, allowPositionals: true });
    if ((parsed.values as { help?: boolean }).help) {
      process.stdout.write(help);
      return { exitCode: 0 } as const;
    }
    const extra = parsed.positionals[maxPositionals];
    if (extra !== undefined) return usageError(command, help, `unexpected argument ${JSON.stringify(extra)}`);
    return parsed;
  } catch (error) {
    return usageError(command, help, (error as Error).message);
  }
}

/** Prints a usage error and the usage; the exit code is 2. */
export function usageError(command: string, help: string, reason: string) {
  process.stderr.write(`agent-iac ${command}: ${reason}\n\n${help}`);
  return { exitCode: 2 } as const;
}
