// The use cases' typed errors in the command layer's words: each code's exit code, and the flag a
// field stands for. Commands share it through src/cli.ts, the one place errors are printed.
import { formatDiagnostic } from "../definitions/index.ts";
import { CliError, type ExitCode } from "../errors/index.ts";
import { RecordingError } from "../smoke/index.ts";
import { AgentFilesInvalid, OverBudget, UseCaseError } from "../usecases/index.ts";
import { Interrupted } from "./lifecycle.ts";

const EXIT_CODES: Record<string, ExitCode> = {
  // Invalid agent or scenario files are a failed check, the same from every command.
  AGENT_IAC_INVALID_FILES: 1,
  AGENT_IAC_CONFIG: 2,
  AGENT_IAC_STACK_NOT_FOUND: 2,
  AGENT_IAC_OVER_BUDGET: 2,
  AGENT_IAC_BACKEND: 3,
  AGENT_IAC_DEPLOY_FAILED: 3,
  AGENT_IAC_INTERRUPTED: 130,
};

/** A use case's error as the CLI says it; undefined for anything else. */
export function useCaseError(error: unknown): CliError | undefined {
  if (error instanceof RecordingError) return new CliError(error.message, 3, { cause: error });
  if (!(error instanceof UseCaseError)) return undefined;
  const exitCode = EXIT_CODES[error.code] ?? 3;
  // An interrupted run ends with its one line, unlabelled (src/cli.ts).
  if (exitCode === 130) return new Interrupted(error.message, 130, error.hint ? { hint: error.hint } : {});
  if (error instanceof AgentFilesInvalid) {
    // Every problem at its file:line, then the count.
    const details = error.diagnostics.map(formatDiagnostic).join("\n");
    return new CliError(error.message, exitCode, { cause: error, details });
  }
  if (error instanceof OverBudget) {
    const judge = error.judgeRequests > 0 ? ` and ${error.judgeRequests} judge request(s)` : "";
    return new CliError(
      `the run's worst case is ${error.worstCaseMinutes} call minutes${judge}, over --max-call-minutes ${error.maxMinutes}: no call was placed`,
      exitCode,
      {
        cause: error,
        hint: "select fewer scenarios (--agent, --scenario), shard the run (--shard I/N), or lower iterations/timeout",
      },
    );
  }
  return new CliError(error.message, exitCode, { cause: error, ...(error.hint ? { hint: error.hint } : {}) });
}
