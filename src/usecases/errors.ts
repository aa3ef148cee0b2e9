// The use cases' typed errors. Each has a stable `code`; the command layer alone turns a code into
// an exit code and its wording (flag names), so nothing here knows of either.
import type { Diagnostic } from "../definitions/index.ts";
import { CliError } from "../errors/index.ts";

export class UseCaseError extends Error {
  override name = "UseCaseError";
  readonly code: string;
  readonly hint: string | undefined;
  constructor(code: string, message: string, options: { hint?: string | undefined; cause?: unknown } = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.code = code;
    this.hint = options.hint;
  }
}

/** The safe way to create a stack, said wherever a stack is missing. */
export function createStackHint(stack: string): string {
  return (
    `create it with your own secrets provider, never the local-only default passphrase:\n` +
    `  PULUMI_CONFIG_PASSPHRASE='<a passphrase of your own>' pulumi stack init ${stack}\n` +
    `  (or: pulumi stack init ${stack} --secrets-provider <awskms://…|gcpkms://…|azurekeyvault://…|hashivault://…>)`
  );
}

/** The stack is not on this backend (never created by a read). */
export class StackMissing extends UseCaseError {
  override name = "StackMissing";
  readonly stackName: string;
  constructor(stack: string, cause?: unknown) {
    super("AGENT_IAC_STACK_NOT_FOUND", `there is no stack "${stack}" on this backend`, {
      hint: createStackHint(stack),
      cause,
    });
    this.stackName = stack;
  }
}

/** Agent or scenario files with problems, each at its file:line: a failed check, the same for every command. */
export class AgentFilesInvalid extends UseCaseError {
  override name = "AgentFilesInvalid";
  readonly diagnostics: readonly Diagnostic[];
  constructor(diagnostics: readonly Diagnostic[], what = "the agent files", consequence = "") {
    super("AGENT_IAC_INVALID_FILES", `${diagnostics.length} error(s) in ${what}${consequence}`);
    this.diagnostics = diagnostics;
  }
}

/** The Pulumi CLI (backend, toolchain) failed; the message holds its own lines. */
export class BackendFailure extends UseCaseError {
  override name = "BackendFailure";
  constructor(message: string, cause?: unknown) {
    super("AGENT_IAC_BACKEND", message, { cause });
  }
}

/** A setting, a file or the service's state stops the run before anything is done. */
export class ConfigurationError extends UseCaseError {
  override name = "ConfigurationError";
  constructor(message: string, options: { hint?: string | undefined; cause?: unknown } = {}) {
    super("AGENT_IAC_CONFIG", message, options);
  }
}

/** The planned calls' worst case is over the budget the request set; nothing was placed. */
export class OverBudget extends UseCaseError {
  override name = "OverBudget";
  readonly worstCaseMinutes: number;
  readonly judgeRequests: number;
  readonly maxMinutes: number;
  constructor(cost: { worstCaseMinutes: number; judgeRequests: number }, maxMinutes: number) {
    const judge = cost.judgeRequests > 0 ? ` and ${cost.judgeRequests} judge request(s)` : "";
    super(
      "AGENT_IAC_OVER_BUDGET",
      `the run's worst case is ${cost.worstCaseMinutes} call minutes${judge}, over the budget of ${maxMinutes}: no call was placed`,
    );
    this.worstCaseMinutes = cost.worstCaseMinutes;
    this.judgeRequests = cost.judgeRequests;
    this.maxMinutes = maxMinutes;
  }
}

/** The process was interrupted (SIGINT/SIGTERM) while a Pulumi run or the calls were under way. */
export function isInterruption(error: unknown): boolean {
  return (
    (error instanceof UseCaseError && error.code === "AGENT_IAC_INTERRUPTED") ||
    (error instanceof CliError && error.exitCode === 130)
  );
}
