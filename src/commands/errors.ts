// The command layer's one mapping of the error model (src/errors, and the service client's ApiError
// family): each code to its exit code, each input field to the flag that sets it, and the service's
// errors explained for the connection the run used. The README's rule: 0 ok, 1 a failed check
// (including invalid agent files), 2 usage or configuration error, 3 service or backend failure,
// 130 interrupted. A command's own result (a report) gives its exit code itself.
import {
  AgentIacError,
  ApiError,
  AuthenticationError,
  ConnectionError,
  type ErrorCode,
  type ExitCode,
  type InputField,
  InvalidFilesError,
  MODEL_USE_NAMES,
  type ModelOrigin,
  type Naming,
  redact,
} from "../errors/index.ts";
import { terminalText } from "../render/index.ts";
import { type Connection, secretsInEnvironment } from "../settings/index.ts";

/** The exit code of each error code. */
export const EXIT_CODES: Readonly<Record<ErrorCode, ExitCode>> = {
  AGENT_IAC_INVALID_INPUT: 2,
  AGENT_IAC_CONFIG: 2,
  // Invalid agent or scenario files are a failed check, the same from every command.
  AGENT_IAC_INVALID_FILES: 1,
  AGENT_IAC_STACK_NOT_FOUND: 2,
  AGENT_IAC_STACK_LOCKED: 3,
  AGENT_IAC_BACKEND: 3,
  AGENT_IAC_IO: 3,
  AGENT_IAC_SERVICE: 3,
  AGENT_IAC_MODEL_ANSWER: 3,
  AGENT_IAC_INTERRUPTED: 130,
  AGENT_IAC_USAGE: 2,
  // The service's answers: a refused key or request, an unknown id is configuration the caller
  // must change (2); anything else is the service failing (3).
  AGENT_IAC_API_AUTHENTICATION: 2,
  AGENT_IAC_API_INVALID_REQUEST: 2,
  AGENT_IAC_API_NOT_FOUND: 2,
  AGENT_IAC_API: 3,
  AGENT_IAC_API_RATE_LIMIT: 3,
  AGENT_IAC_API_SERVER: 3,
  AGENT_IAC_API_INVALID_RESPONSE: 3,
  AGENT_IAC_API_CONNECTION: 3,
  AGENT_IAC_API_TIMEOUT: 3,
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
  fromRecording: "--from-recording",
  eventsUrl: "--events-url",
  calleeNo: "--callee-no",
};

/** The CLI's naming: a field is said as its flag. */
export const flagNaming: Naming = (field) => FLAGS[field];

/** An error the mapping knows: the project's, the service client's included (one root). */
export type KnownError = AgentIacError;

export function isKnownError(error: unknown): error is KnownError {
  return error instanceof AgentIacError;
}

/** The exit code of an error the mapping knows: its code's. */
export function exitCodeOf(error: KnownError): ExitCode {
  return EXIT_CODES[error.code];
}

export type CliOutcome = {
  exitCode: ExitCode;
  message: string;
  hint: string | undefined;
  details?: string;
};

/**
 * An error in the CLI's words: its exit code, its message and hint with fields as flags, the lines
 * said before it (each invalid file's file:line), and a service error explained for `connection`
 * (the one the run talked to, if any).
 */
export function cliOutcome(error: KnownError, env: NodeJS.ProcessEnv, connection?: Connection): CliOutcome {
  if (error instanceof ApiError && error.origin)
    return { exitCode: exitCodeOf(error), ...modelError(error, error.origin, env) };
  if (error instanceof ApiError) return { exitCode: exitCodeOf(error), ...serviceError(error, env, connection) };
  const details = error instanceof InvalidFilesError ? { details: error.details } : {};
  return { exitCode: exitCodeOf(error), ...error.describe(flagNaming), ...details };
}

/** A connection failure or a refused key with what to do about it; else the service's words, one line. */
function serviceError(
  error: ApiError,
  env: NodeJS.ProcessEnv,
  connection: Connection | undefined,
): Pick<CliOutcome, "message" | "hint"> {
  // One line: the service's reason may hold line breaks of its own.
  const said = terminalText(redact(error.message, secretsInEnvironment(env)));
  if (connection && error instanceof ConnectionError && !error.requestSent && connection.loopback) {
    return {
      message: `nothing answers at ${connection.baseUrl} (${error.networkCode ?? "connection failed"})`,
      hint: "start the local simulator in another terminal with `npm run service` (or run `npm start`, which starts its own)",
    };
  }
  if (connection && error instanceof AuthenticationError) {
    return {
      message: `the service refused the API key from ${connection.keySource ?? "nowhere"}: ${said}`,
      hint: "check the stack's secret agents:apiKey or AGENT_IAC_API_KEY",
    };
  }
  return { message: said, hint: undefined };
}

/** A model endpoint's failure in its own terms: which model, its address, and for a refused key the setting that holds it. */
function modelError(
  error: ApiError,
  origin: ModelOrigin,
  env: NodeJS.ProcessEnv,
): Pick<CliOutcome, "message" | "hint"> {
  const said = terminalText(redact(error.message, secretsInEnvironment(env)));
  const which = `${MODEL_USE_NAMES[origin.use]} (${terminalText(origin.model)} at ${terminalText(origin.baseUrl)})`;
  if (error instanceof AuthenticationError) {
    return {
      message: `${which} refused its API key: ${said}`,
      hint: `check ${origin.keySetting}: the key of this model, not the service's agents:apiKey`,
    };
  }
  return { message: `${which}: ${said}`, hint: undefined };
}
