// The command layer's one mapping of the error model (src/errors): each code to its exit code, and
// each input field to the flag that sets it. The README's rule: 0 ok, 1 a failed check (including
// invalid agent files), 2 usage or configuration error, 3 service or backend failure, 130 interrupted.
import {
  type AgentIacError,
  CliError,
  type DomainErrorCode,
  type ExitCode,
  type InputField,
  InvalidFilesError,
  type Naming,
} from "../errors/index.ts";

/** The exit code of each domain error code. */
export const EXIT_CODES: Readonly<Record<DomainErrorCode, ExitCode>> = {
  AGENT_IAC_INVALID_INPUT: 2,
  AGENT_IAC_CONFIG: 2,
  // Invalid agent or scenario files are a failed check, the same from every command.
  AGENT_IAC_INVALID_FILES: 1,
  AGENT_IAC_STACK_NOT_FOUND: 2,
  AGENT_IAC_STACK_LOCKED: 3,
  AGENT_IAC_BACKEND: 3,
  AGENT_IAC_IO: 3,
  AGENT_IAC_JUDGE_ANSWER: 3,
  AGENT_IAC_INTERRUPTED: 130,
};

/** The flag of each input field, as the commands declare it. */
export const FLAGS: Readonly<Record<InputField, string>> = {
  since: "--since",
  from: "--from",
  to: "--to",
  baseline: "--baseline",
  oldVersions: "--compare",
  jsonReport: "--json",
  agent: "--agent",
  scenario: "--scenario",
  versionId: "--version-id",
  allowUnpinned: "--allow-unpinned",
  live: "--live",
  replay: "--replay",
  maxCallMinutes: "--max-call-minutes",
  shard: "--shard",
};

/** The CLI's naming: a field is said as its flag. */
export const flagNaming: Naming = (field) => FLAGS[field];

/** The exit code of an error the model knows: a CliError's own, else its code's. */
export function exitCodeOf(error: AgentIacError): ExitCode {
  if (error instanceof CliError) return error.exitCode;
  const { code } = error;
  // Only a CliError carries AGENT_IAC_COMMAND; another class claiming it is a bug (exit 3).
  return code === "AGENT_IAC_COMMAND" ? 3 : EXIT_CODES[code];
}

/**
 * An error of the model in the CLI's words: its exit code, its message and hint with fields as
 * flags, and the lines said before it (each invalid file's file:line).
 */
export function cliOutcome(error: AgentIacError): {
  exitCode: ExitCode;
  message: string;
  hint: string | undefined;
  details?: string;
} {
  const details = error instanceof InvalidFilesError ? { details: error.details } : {};
  return { exitCode: exitCodeOf(error), ...error.describe(flagNaming), ...details };
}
