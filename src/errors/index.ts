// One error model, like undici's: every error agent-iac throws on purpose is an AgentIacError with a
// stable string `code` (what a caller branches on: never the message or the class name), an
// optional `hint` (what to do about it) and, where a message names an input of the request (a
// duration, a file, an agent), the input as a field, worded by whoever shows the message: the
// command layer says `--since` (src/commands/errors.ts), a library caller may say `since`.
// The domain folders throw the category classes below and know no exit code and no flag; only
// the command layer throws CliError (a usage error) and maps each code to an exit code
// (src/commands/errors.ts, with the service client's ApiError codes too).
import { AgentIacError, type AgentIacErrorOptions } from "./base.ts";
import type { RetryNotice } from "./service.ts";

export {
  AgentIacError,
  type AgentIacErrorOptions,
  ERROR_CODES,
  type ErrorCode,
  type ExitCode,
  INPUT_FIELDS,
  type InputField,
  type Naming,
  plainNaming,
  type Wording,
} from "./base.ts";
export { MODEL_USE_NAMES, ModelAnswerError, type ModelOrigin, type ModelUse } from "./model.ts";
export {
  API_ERROR_CODES,
  ApiError,
  type ApiErrorCode,
  AuthenticationError,
  ConnectionError,
  type Credential,
  InvalidRequestError,
  InvalidResponseError,
  NotFoundError,
  RateLimitError,
  type RetryNotice,
  redact,
  ServerError,
  TimeoutError,
} from "./service.ts";
export { didYouMean } from "./suggest.ts";

/** A value or a file the caller gave cannot be used; `field` names the input where there is one. */
export class InvalidInputError extends AgentIacError {
  override name = "InvalidInputError";
  readonly code = "AGENT_IAC_INVALID_INPUT";
}

/** The settings are missing or contradict each other: the stack config, the environment, the toolchain. */
export class ConfigError extends AgentIacError {
  override name = "ConfigError";
  readonly code = "AGENT_IAC_CONFIG";
}

/** Agent or scenario files with problems: `details` holds each at its file:line, the message their count. */
export class InvalidFilesError extends AgentIacError {
  override name = "InvalidFilesError";
  readonly code = "AGENT_IAC_INVALID_FILES";
  /** One line per problem (`agents/a.yaml:3:1: config.x: …`), said before the message. */
  readonly details: string;
  constructor(message: string, details: string) {
    super(message);
    this.details = details;
  }
}

/** The stack does not exist on this backend (nothing was created). */
export class StackNotFoundError extends AgentIacError {
  override name = "StackNotFoundError";
  readonly code = "AGENT_IAC_STACK_NOT_FOUND";
  readonly stackName: string;
  constructor(stackName: string, options: Omit<AgentIacErrorOptions, "field" | "value"> = {}) {
    super(`there is no stack "${stackName}" on this backend`, options);
    this.stackName = stackName;
  }
}

/** The stack is locked: another update runs, or one was stopped before it could unlock the stack. */
export class StackLockedError extends AgentIacError {
  override name = "StackLockedError";
  readonly code = "AGENT_IAC_STACK_LOCKED";
  readonly stackName: string;
  constructor(stackName: string, message: string, options: Omit<AgentIacErrorOptions, "field" | "value"> = {}) {
    super(message, options);
    this.stackName = stackName;
  }
}

/** The Pulumi CLI, its backend or the toolchain build failed. */
export class BackendError extends AgentIacError {
  override name = "BackendError";
  readonly code = "AGENT_IAC_BACKEND";
}

/** A file could not be written. */
export class IoError extends AgentIacError {
  override name = "IoError";
  readonly code = "AGENT_IAC_IO";
}

/** The service failed the command: a stream that ended early, no replay of a conversation, a simulator that cannot listen. */
export class ServiceError extends AgentIacError {
  override name = "ServiceError";
  readonly code = "AGENT_IAC_SERVICE";
}

/** Stopped by SIGINT or SIGTERM; `what` is the message after `interrupted (SIGNAL): `. */
export class InterruptedError extends AgentIacError {
  override name = "InterruptedError";
  readonly code = "AGENT_IAC_INTERRUPTED";
  readonly signal: NodeJS.Signals | undefined;
  readonly what: string;
  constructor(
    signal: NodeJS.Signals | undefined,
    what: string,
    options: Omit<AgentIacErrorOptions, "field" | "value"> = {},
  ) {
    super(`interrupted${signal ? ` (${signal})` : ""}: ${what}`, options);
    this.signal = signal;
    this.what = what;
  }
}

/**
 * A usage error of the command line (src/commands only): an unknown flag or subcommand, a value
 * the flag does not take, flags that exclude each other. Anything that is not an AgentIacError
 * (or the service client's ApiError) and reaches src/cli.ts is a bug.
 */
export class CliError extends AgentIacError {
  override name = "CliError";
  readonly code = "AGENT_IAC_USAGE";
  constructor(message: string, options: { hint?: string; cause?: unknown } = {}) {
    super(message, options);
  }
}

/** One line per retried request (the client's onRetry notice): status or network code, route, wait, attempt n of m. */
export function retryLine(notice: RetryNotice): string {
  const wait = notice.delayMs >= 1000 ? `${(notice.delayMs / 1000).toFixed(1)} s` : `${notice.delayMs} ms`;
  return `retrying ${notice.method} ${notice.path} after ${notice.reason} in ${wait} (attempt ${notice.attempt + 1} of ${notice.maxAttempts})`;
}
