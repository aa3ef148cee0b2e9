// A finished call on a terminal: the line smoke prints live as each call ends (and a replay for each
// recorded call), with each unmet expectation and its nearest transcript lines under it (JUnit's
// failure text too). Text from the service and from files is data: escaped.
import { terminalText } from "../escape/index.ts";
import { answeredBy, type CallResult, evaluated, unevaluatedText } from "../results/index.ts";

/** Each unmet expectation with the nearest transcript lines, or why the call could not complete. */
export function failureText(call: CallResult): string {
  if (!evaluated(call.outcome.kind)) return terminalText(unevaluatedText(call));
  const lines: string[] = [];
  for (const assertion of call.assertions.filter((a) => !a.passed)) {
    lines.push(terminalText(`✗ ${assertion.description}${assertion.detail ? `: ${assertion.detail}` : ""}`));
    for (const line of assertion.context) lines.push(`    | ${terminalText(line)}`);
  }
  if (call.assertions.length === 0) lines.push("✗ nothing was checked: the scenario evaluated no assertion");
  return lines.join("\n");
}

/** A finished call: `✓ agent/scenario#1 (version, conversation) 3 checks, 1.2 s`, a failure with its unmet expectations under it. */
export function callLines(call: CallResult): string {
  // The version id may come from a file (`--compare OLD`) and the conversation id from the service: data, escaped.
  const name = terminalText(`${call.agent}/${call.scenario}#${call.iteration}`);
  const model = call.caller_model;
  const persona =
    model?.answered && model.answered !== model.asked
      ? `; the caller's model answered as ${model.answered}, not ${model.asked}`
      : "";
  const where = terminalText(`${call.version_id}${call.conversation_id ? `, ${call.conversation_id}` : ""}${persona}`);
  const time = `${(call.timings.duration_ms / 1000).toFixed(1)} s`;
  const byName = call.procedures.some((p) => (p as { matchedBy?: unknown } | null)?.matchedBy === "name")
    ? " (procedures matched by name: this is not the stack's current version)"
    : "";
  const { kind } = call.outcome;
  if (kind === "passed")
    return `✓ ${name} (${where}) ${call.assertions.length} checks, ${time}${judgedText(call)}${byName}\n`;
  if (kind === "not_run") return `○ ${name} (${where}) ${terminalText(unevaluatedText(call))}\n`;
  const fault = call.fault ? ` (fault: ${call.fault})` : "";
  if (kind === "inconclusive") return `? ${name} (${where}) ${terminalText(unevaluatedText(call))}${fault}\n`;
  if (kind === "error" || kind === "interrupted")
    return `! ${name} (${where}) ${terminalText(unevaluatedText(call))}${fault}\n`;
  const failed = call.assertions.filter((a) => !a.passed).length;
  const head = `${failed > 0 ? `${failed} of ${call.assertions.length} expectations unmet` : "nothing was checked"}${fault}`;
  const body = failureText(call)
    .split("\n")
    .map((line) => `    ${line}`);
  return `${[`✗ ${name} (${where}) ${head}, ${time}`, ...body].join("\n")}\n`;
}

/** `; judged: pass 2/3 (uncertain) "rubric"` — the judged expectations of a passed call. */
function judgedText(call: CallResult): string {
  const judged = call.assertions.flatMap((a) => (a.judgement ? [a.judgement] : []));
  if (judged.length === 0) return "";
  const each = judged.map(
    (j) =>
      `${j.verdict} ${j.agreement}${j.uncertain ? " (uncertain)" : ""} ${JSON.stringify(j.rubric)}${answeredBy(j)}`,
  );
  return `; judged: ${each.join(", ")}`;
}
