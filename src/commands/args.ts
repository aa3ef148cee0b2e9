// The flag parser every command shares. A command declares each flag once, with its help line;
// the usage text is generated from the same declaration. `--help` prints it (exit 0); a bad flag or
// argument is a CliError (exit 2) whose hint is the usage.
import { type ParseArgsOptionDescriptor, parseArgs } from "node:util";
import { didYouMean } from "../definitions/index.ts";
import { CliError } from "../errors/index.ts";

export type Flag = ParseArgsOptionDescriptor & {
  help: string;
  /** The value's name in the usage (`--stack NAME`); string flags only. */
  arg?: string;
};

export type CommandSpec<F extends Record<string, Flag>> = {
  /** As typed after `agent-iac`, e.g. "smoke" or "conversations list". */
  name: string;
  /** What follows the name in the usage line, e.g. "<conversation-id> [options]". */
  synopsis?: string;
  about: string;
  flags: F;
  /** Text after the options (connection, exit codes). */
  footer?: string;
  /** How many positional arguments the command takes (default none). */
  positionals?: { min?: number; max: number; what: string };
};

const HELP_FLAG = { help: { type: "boolean", short: "h", help: "this help" } } as const satisfies Record<string, Flag>;

/** The `--stack` flag of every command that works on a stack. */
export const STACK_FLAG = {
  type: "string",
  default: "dev",
  arg: "NAME",
  help: "the stack whose settings and outputs are used (default: dev)",
} as const satisfies Flag;

export function usageText(spec: CommandSpec<Record<string, Flag>>): string {
  const flags = Object.entries<Flag>({ ...spec.flags, ...HELP_FLAG }).map(([name, flag]) => {
    const short = flag.short ? `-${flag.short}, ` : "";
    const left = `${short}--${name}${flag.type === "string" ? ` ${flag.arg ?? "VALUE"}` : ""}`;
    return { left, help: `${flag.help}${flag.multiple ? " (repeatable)" : ""}` };
  });
  const width = Math.max(...flags.map((f) => f.left.length));
  const options = flags.map((f) => `  ${f.left.padEnd(width)}  ${f.help}`).join("\n");
  const footer = spec.footer ? `\n${spec.footer.trimEnd()}\n` : "";
  return `usage: agent-iac ${spec.name} ${spec.synopsis ?? "[options]"}\n\n${spec.about.trimEnd()}\n\noptions:\n${options}\n${footer}`;
}

/** Parsed flags and positionals, or undefined when the usage was printed for --help. */
export function parseCommand<const F extends Record<string, Flag>>(spec: CommandSpec<F>, argv: string[]) {
  const options = Object.fromEntries(
    Object.entries<Flag>({ ...spec.flags, ...HELP_FLAG }).map(([name, { help: _, arg: __, ...option }]) => [
      name,
      option,
    ]),
  ) as F & typeof HELP_FLAG;
  let parsed: ReturnType<typeof parseArgs<{ options: F & typeof HELP_FLAG; allowPositionals: true }>>;
  try {
    parsed = parseArgs({ args: argv, options, allowPositionals: true, strict: true });
  } catch (error) {
    throw new CliError(parseErrorMessage(error, Object.keys(options)), 2, { hint: usageText(spec) });
  }
  if ((parsed.values as { help?: boolean }).help) {
    process.stdout.write(usageText(spec));
    return undefined;
  }
  const { min = 0, max, what } = spec.positionals ?? { max: 0, what: "" };
  const count = parsed.positionals.length;
  if (count > max) {
    throw new CliError(`unexpected argument ${JSON.stringify(parsed.positionals[max])}`, 2, { hint: usageText(spec) });
  }
  if (count < min) throw new CliError(`${what} is needed`, 2, { hint: usageText(spec) });
  return parsed;
}

/** Node's parser error in our words; an unknown flag gets the nearest known one. */
function parseErrorMessage(error: unknown, flags: string[]): string {
  const { code, message } = error as NodeJS.ErrnoException;
  if (code !== "ERR_PARSE_ARGS_UNKNOWN_OPTION") return message;
  const typed = /'(-[^']*)'/.exec(message)?.[1] ?? "";
  const name = typed.replace(/^--?/, "").split("=")[0] ?? "";
  const near = didYouMean(name, flags);
  return `unknown option ${typed || "(unreadable)"}${near ? `: did you mean --${near}?` : ""}`;
}

/** The command name nearest to a mistyped one, as a sentence ("" when none is near). */
export function suggestion(word: string, names: readonly string[]): string {
  const near = didYouMean(word, names);
  return near ? `: did you mean "${near}"?` : "";
}

/** A positive whole number from a flag, or a usage error naming the flag. */
export function positiveInteger(flag: string, value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1) throw new CliError(`--${flag} must be a positive whole number, not "${value}"`, 2);
  return n;
}
