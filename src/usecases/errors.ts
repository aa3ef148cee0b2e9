// The use cases' errors, in the one error model (src/errors): each has a stable code that the
// command layer alone turns into an exit code and its wording (flag names).
import { type Diagnostic, formatDiagnostic } from "../definitions/index.ts";
import { InvalidFilesError, InvalidInputError } from "../errors/index.ts";

/** Agent or scenario files with problems, each at its file:line: a failed check, the same for every command. */
export function invalidFiles(
  diagnostics: readonly Diagnostic[],
  what = "the agent files",
  consequence = "",
): InvalidFilesError {
  return new InvalidFilesError(
    `${diagnostics.length} error(s) in ${what}${consequence}`,
    diagnostics.map(formatDiagnostic).join("\n"),
  );
}

/** The planned calls' worst case is over the budget the request set; nothing was placed. */
export function overBudget(cost: { worstCaseMinutes: number; judgeRequests: number }, maxMinutes: number) {
  const judge = cost.judgeRequests > 0 ? ` and ${cost.judgeRequests} judge request(s)` : "";
  return new InvalidInputError(
    (name) =>
      `the run's worst case is ${cost.worstCaseMinutes} call minutes${judge}, over ${name("maxCallMinutes")} ${maxMinutes}: no call was placed`,
    {
      field: "maxCallMinutes",
      value: String(maxMinutes),
      hint: (name) =>
        `select fewer scenarios (${name("agent")}, ${name("scenario")}), shard the run (${name("shard")} I/N), or lower iterations/timeout`,
    },
  );
}
