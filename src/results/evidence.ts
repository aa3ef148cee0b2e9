// Whether a report read from disk is evidence a merge may count (issue 41): it evaluated at least
// one scenario, and each call's verdict follows from its recorded expectations (a call edited to
// "passed" over a failed expectation, or "failed" with none, is not what a run writes).
import type { Report } from "./schema.ts";

/** Why the report is not evidence, or undefined when it is. */
export function notEvidence(report: Report): string | undefined {
  if (report.scenarios.length === 0) return "it has no scenario: nothing in it was checked";
  for (const call of report.results) {
    const name = `${call.agent}/${call.scenario}#${call.iteration}`;
    const failed = call.assertions.filter((a) => !a.passed).length;
    // An interrupted call's status is "error" (the status has no such word): only passed and failed must agree.
    const verdictOf = (kind: string) => (kind === "passed" || kind === "failed" ? kind : "other");
    if (verdictOf(call.status) !== verdictOf(call.outcome.kind)) {
      return `${name} says status "${call.status}" but outcome "${call.outcome.kind}"`;
    }
    // As a run decides (src/smoke/call.ts): passed when it has expectations and every one held.
    if (call.outcome.kind === "passed" && (failed > 0 || call.assertions.length === 0)) {
      return `${name} is "passed" although ${failed > 0 ? `${failed} of its expectations failed` : "it records no expectation"}`;
    }
    if (call.outcome.kind === "failed" && failed === 0 && call.assertions.length > 0) {
      return `${name} is "failed" although every expectation it records passed`;
    }
  }
  return undefined;
}
