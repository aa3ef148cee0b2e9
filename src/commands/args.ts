// The flag parser every command shares. A command declares each flag once, with its help line;
// the usage text is generated from the same declaration. `--help` prints it (exit 0); a bad flag or
// argument is a CliError (exit 2) whose hint is the usage.
import { type ParseArgsOptionDescriptor, parseArgs } from "node:util";
import { CliError, didYouMean } from "../errors/index.ts";

/** A string flag's value turned into what the request needs; `expected` ends "--flag must be …". */
export type Conversion<T> = { expected: string; convert(text: string): T | undefined };

export type Flag = ParseArgsOptionDescriptor & {
  help: string;
  /** The value's name in the usage (`--stack NAME`); string flags only. */
  arg?: string;
  /** Converts the value where the flag is declared (a usage error names the flag and what it must be). */
  value?: Conversion<unknown>;
};

/** The converted values of the flags that declare a conversion (a default is converted too). */
export type Converted<F extends Record<string, Flag>> = {
  [K in keyof F as F[K] extends { value: Conversion<unknown> } ? K : never]: F[K] extends {
    value: Conversion<infer T>;
  }
    ? F[K] extends { default: string }
      ? T
      : T | undefined
    : never;
};

/** A whole number ≥ `min` (and ≤ `max`). */
export const wholeNumber = (min: number, max = Number.MAX_SAFE_INTEGER): Conversion<number> => ({
  expected:
    min === 1 && max === Number.MAX_SAFE_INTEGER ? "a positive whole number" : `a whole number from ${min} to ${max}`,
  convert: (text) => {
    const n = Number(text);
    return text.trim() !== "" && Number.isInteger(n) && n >= min && n <= max ? n : undefined;
  },
});

/** A number above 0 (and at most `max`), described as `expected`. */
export const positiveNumber = (expected: string, max = Number.POSITIVE_INFINITY): Conversion<number> => ({
  expected,
  convert: (text) => {
    const n = Number(text);
    return text.trim() !== "" && Number.isFinite(n) && n > 0 && n <= max ? n : undefined;
  },
});

/** One of a fixed set of words. */
export const oneOf = <const W extends string>(words: readonly W[]): Conversion<W> => ({
  expected: words.length === 2 ? `${words[0]} or ${words[1]}` : `one of ${words.join(", ")}`,
  convert: (text) => ((words as readonly string[]).includes(text) ? (text as W) : undefined),
});

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

/** `--concurrency N` of the commands that place calls: calls at a time (`what` adds what else it sets). */
export const concurrencyFlag = (what = "") =>
  ({
    type: "string",
    default: "4",
    arg: "N",
    value: wholeNumber(1),
    help: `calls at a time${what} (default: 4)`,
  }) as const satisfies Flag;

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
export function parseCommand<const F extends Record<string, Flag>>(
  spec: CommandSpec<F>,
  argv: string[],
  out: { write(text: string): unknown },
) {
  const options = Object.fromEntries(
    // Only what node:util's parseArgs knows of each flag.
    Object.entries<Flag>({ ...spec.flags, ...HELP_FLAG }).map(([name, { type, short, multiple, default: given }]) => [
      name,
      {
        type,
        ...(short ? { short } : {}),
        ...(multiple ? { multiple } : {}),
        ...(given === undefined ? {} : { default: given }),
      },
    ]),
  ) as F & typeof HELP_FLAG;
  let parsed: ReturnType<typeof parseArgs<{ options: F & typeof HELP_FLAG; allowPositionals: true }>>;
  try {
    parsed = parseArgs({ args: argv, options, allowPositionals: true, strict: true });
  } catch (error) {
    throw new CliError(parseErrorMessage(error, Object.keys(options)), { hint: usageText(spec) });
  }
  if ((parsed.values as { help?: boolean }).help) {
    out.write(usageText(spec));
    return undefined;
  }
  const { min = 0, max, what } = spec.positionals ?? { max: 0, what: "" };
  const count = parsed.positionals.length;
  if (count > max) {
    throw new CliError(`unexpected argument ${JSON.stringify(parsed.positionals[max])}`, { hint: usageText(spec) });
  }
  if (count < min) throw new CliError(`${what} is needed`, { hint: usageText(spec) });
  return { ...parsed, typed: convertFlags(spec.flags, parsed.values as Record<string, unknown>) };
}

function convertFlags<F extends Record<string, Flag>>(flags: F, values: Record<string, unknown>): Converted<F> {
  const typed: Record<string, unknown> = {};
  for (const [name, flag] of Object.entries<Flag>(flags)) {
    const text = values[name];
    if (!flag.value || typeof text !== "string") continue;
    const converted = flag.value.convert(text);
    if (converted === undefined) throw new CliError(`--${name} must be ${flag.value.expected}, not "${text}"`);
    typed[name] = converted;
  }
  return typed as Converted<F>;
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
