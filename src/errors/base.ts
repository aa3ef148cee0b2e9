// The root of the error model (see index.ts): the codes, the fields a message may name, AgentIacError.
import type { ApiErrorCode } from "./service.ts";

/** 130: stopped by SIGINT/SIGTERM (the shell convention, 128 + 2). */
export type ExitCode = 1 | 2 | 3 | 130;

/** The stable codes. Each category class below has one. */
export const ERROR_CODES = [
  /** A value or a file the caller gave cannot be used (a duration, a versions file, a selection, a recording). */
  "AGENT_IAC_INVALID_INPUT",
  /** The settings are missing or contradict each other (stack config, environment, toolchain, policy config). */
  "AGENT_IAC_CONFIG",
  /** Agent or scenario files with problems, each at its file:line: a failed check (`InvalidFilesError.details`). */
  "AGENT_IAC_INVALID_FILES",
  /** The stack does not exist on the backend (`StackNotFoundError.stackName`). */
  "AGENT_IAC_STACK_NOT_FOUND",
  /** The stack is locked by another update, or by one stopped before it could unlock it. */
  "AGENT_IAC_STACK_LOCKED",
  /** The Pulumi CLI, its backend or the toolchain build failed. */
  "AGENT_IAC_BACKEND",
  /** A file could not be written (a recording, the job summary). */
  "AGENT_IAC_IO",
  /** The service failed the command: a stream that ended early, no replay of a conversation, a simulator that cannot listen. */
  "AGENT_IAC_SERVICE",
  /** A model's answer could not be used (refused, cut at its limit, withheld, not of the shape asked; a judge's not a vote). */
  "AGENT_IAC_MODEL_ANSWER",
  /** Stopped by SIGINT or SIGTERM. */
  "AGENT_IAC_INTERRUPTED",
  /** The command line cannot be used (an unknown flag or subcommand, flags that exclude each other): CliError. */
  "AGENT_IAC_USAGE",
] as const;

/** Every stable code: the project's and the service client's (service.ts). */
export type ErrorCode = (typeof ERROR_CODES)[number] | ApiErrorCode;

/** The inputs of a request that a domain error can name. The command layer words each as its flag. */
export const INPUT_FIELDS = [
  "since",
  "from",
  "to",
  "baseline",
  "oldVersions",
  "jsonReport",
  "agent",
  "scenario",
  "versionId",
  "allowUnpinned",
  "live",
  "replay",
  "maxCallMinutes",
  "shard",
  "fromRecording",
  "eventsUrl",
  "calleeNo",
] as const;

export type InputField = (typeof INPUT_FIELDS)[number];

/** How a caller words a field: the CLI as its flag (`--version-id`), a library as it likes. */
export type Naming = (field: InputField) => string;
/** A text that names fields, rendered with the caller's naming. */
export type Wording = (name: Naming) => string;
export type Text = string | Wording;

/** The domain's own naming: the field as the request spells it (`versionId`). */
export const plainNaming: Naming = (field) => field;

export type AgentIacErrorOptions = {
  /** What to do about it, shown after the message (e.g. a command to run). */
  hint?: Text | undefined;
  cause?: unknown;
  /** The input the message is about, and the value given for it. */
  field?: InputField | undefined;
  value?: string | undefined;
};

const render = (text: Text, name: Naming): string => (typeof text === "string" ? text : text(name));

export abstract class AgentIacError extends Error {
  abstract readonly code: ErrorCode;
  /** The hint worded with the plain naming (see `describe` for another). */
  readonly hint: string | undefined;
  readonly field: InputField | undefined;
  readonly value: string | undefined;
  readonly #message: Text;
  readonly #hint: Text | undefined;

  constructor(message: Text, options: AgentIacErrorOptions = {}) {
    super(render(message, plainNaming), options.cause === undefined ? undefined : { cause: options.cause });
    this.#message = message;
    this.#hint = options.hint;
    this.hint = options.hint === undefined ? undefined : render(options.hint, plainNaming);
    this.field = options.field;
    this.value = options.value;
  }

  /** The message and hint with every field they name worded by `name`. */
  describe(name: Naming): { message: string; hint: string | undefined } {
    return {
      message: render(this.#message, name),
      hint: this.#hint === undefined ? undefined : render(this.#hint, name),
    };
  }
}
