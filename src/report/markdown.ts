// The short Markdown summary of a run's report for a CI job page (GitHub's job summary): the verdict
// mark (it follows the exit code), the counts in scenarios with calls second, each failed scenario
// with why it failed and its unmet expectations (with the nearest transcript lines), the flaky
// ones, and the regressions. Text from agent files and the service is escaped (src/escape) so it
// cannot turn into markup, and lists are bounded.
import type { z } from "zod";
import { markdownText } from "../escape/index.ts";
import {
  type CallOutcomeKind,
  type CallResult,
  countScenarios,
  evaluated,
  failingInconclusive,
  failsRun,
  faultsText,
  headline,
  needsText,
  type Report,
  reportSchema,
  type ScenarioSummary,
  scenarioCounts,
  stoppedScenario,
  tolerated,
  unevaluatedText,
  verdictReason,
} from "../results/index.ts";
import { comparisonEvidence, decidedText, passKText, sequentialText } from "./repeats.ts";

const MAX_SCENARIOS = 25;
const MAX_ITEMS = 5;
const MAX_CONTEXT = 3;

const name = (s: { agent: string; scenario: string }) => `**${markdownText(s.agent)}** / ${markdownText(s.scenario)}`;
const version = (id: string) => `\`${id.replace(/[`\s]/g, "")}\``;

function callsOf(report: Report, s: ScenarioSummary): CallResult[] {
  return report.results.filter(
    (r) => r.agent === s.agent && r.scenario === s.scenario && r.side !== "old" && r.version_id === s.version_id,
  );
}

/** Each unmet expectation once (the nearest transcript lines of its first miss), with how many iterations missed it. */
function unmet(calls: readonly CallResult[], mark = "✗"): string[] {
  const misses = new Map<string, { n: number; context: string[] }>();
  const count = (line: string, context: readonly string[] = []) => {
    const known = misses.get(line);
    if (known) known.n++;
    else misses.set(line, { n: 1, context: context.slice(0, MAX_CONTEXT).map((l) => `    > ${markdownText(l)}`) });
  };
  for (const call of calls) {
    const { kind } = call.outcome;
    if (!evaluated(kind)) count(`${UNEVALUATED[kind] ?? "⚠ call error"}: ${markdownText(unevaluatedText(call))}`);
    for (const a of call.assertions.filter((a) => !a.passed)) {
      count(`${mark} ${markdownText(a.description)}${a.detail ? `: ${markdownText(a.detail)}` : ""}`, a.context);
    }
    if (call.assertions.length === 0 && kind === "failed") count(`${mark} nothing was checked`);
  }
  const list = [...misses].map(([line, { n, context }]) =>
    [calls.length > 1 ? `${line} (${n} of ${calls.length} iterations)` : line, ...context].join("\n"),
  );
  return list.length > MAX_ITEMS ? [...list.slice(0, MAX_ITEMS), `… and ${list.length - MAX_ITEMS} more`] : list;
}

const CALL_WORDS: Partial<Record<CallOutcomeKind, string>> = {
  failed: "failed",
  error: "could not complete",
  interrupted: "interrupted",
  inconclusive: "inconclusive",
};

/** `calls: #1 failed (fault: agent), #3 could not complete (fault: service)`: each call that did not pass, whose fault it was. */
function faultsOfCalls(calls: readonly CallResult[]): string[] {
  const each = calls.flatMap((c) => {
    const words = CALL_WORDS[c.outcome.kind];
    return words ? [`#${c.iteration} ${words} (fault: ${c.fault ?? "not named"})`] : [];
  });
  if (each.length === 0) return [];
  const shown = each.length > MAX_ITEMS ? [...each.slice(0, MAX_ITEMS), `… and ${each.length - MAX_ITEMS} more`] : each;
  return [`calls: ${shown.join(", ")}`];
}

const UNEVALUATED: Partial<Record<CallOutcomeKind, string>> = {
  error: "⚠ call error",
  interrupted: "⚠ interrupted",
  not_run: "○ not run",
};

/** `; pass^3 0.61; decided after 6 of 10, 4 calls not needed` (plain words: no markup). */
const repeatsText = (x: ScenarioSummary) =>
  [passKText(x), decidedText(x), sequentialText(x)]
    .filter(Boolean)
    .map((t) => `; ${markdownText(t)}`)
    .join("");

function bounded<T>(items: readonly T[], line: (item: T) => string[]): string[] {
  const out = items.slice(0, MAX_SCENARIOS).flatMap(line);
  if (items.length > MAX_SCENARIOS) out.push(`- … and ${items.length - MAX_SCENARIOS} more (see the HTML report)`);
  return out;
}

const RUN_TITLES: Record<string, string> = {
  smoke: "smoke",
  compare: "smoke --compare",
  behave: "plan --behave",
  merged: "smoke (merged shards)",
  replay: "smoke --replay",
};

/** Why a listed scenario has its verdict: `3 of 3 iterations passed, latency response p95 1,240 ms over 1,000 ms`. */
const why = (x: ScenarioSummary, stopped = false) =>
  [`${x.passes} of ${x.iterations} iterations passed`, ...verdictReason(x, stopped)]
    .map((t) => markdownText(t))
    .join(", ");

export type ReportInput = z.input<typeof reportSchema>;

/** The job summary of one run's report, in Markdown. */
export function jobSummary(input: ReportInput): string {
  const report = reportSchema.parse(input);
  const s = countScenarios(report);
  const mark = headline(report);
  const seconds = Math.round(s.duration_ms / 100) / 10;
  const old = s.calls_old;
  const unfinished = [
    ...(s.calls_interrupted > 0 ? [`${s.calls_interrupted} interrupted`] : []),
    ...(s.calls_not_run > 0 ? [`${s.calls_not_run} not run`] : []),
  ];
  const out = [
    `### ${mark.mark} agent-iac ${RUN_TITLES[report.kind] ?? report.kind}${report.stack ? ` on ${markdownText(report.stack)}` : ""}: ${scenarioCounts(report)}`,
    "",
    "| scenarios | passed | flaky | failed | errors | regressions | calls: passed / failed / errors | duration | call minutes |",
    "|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    `| ${s.scenarios} | ${s.passed} | ${s.flaky} | ${s.failed} | ${s.errors} | ${s.regressions} | ${s.calls_passed} / ${s.calls_failed} / ${s.calls_errors}${unfinished.map((t) => ` · ${t}`).join("")}${old > 0 ? ` (+${old} old)` : ""} | ${seconds} s | ${Math.round(s.call_minutes * 100) / 100} |`,
  ];
  const faults = faultsText(report);
  if (faults) out.push("", `Whose fault: ${markdownText(faults)}`);
  const failed = report.scenarios.filter(
    (x) => failsRun(report, x) || x.verdict === "error" || failingInconclusive(report, x),
  );
  if (failed.length > 0) {
    out.push("", "**Failed scenarios**", "");
    out.push(
      ...bounded(failed, (x) => [
        `- ${stoppedScenario(report, x) ? "■ interrupted" : x.verdict === "error" ? "⚠ error" : x.verdict === "inconclusive" ? "? inconclusive" : "✗ failed"}: ${name(x)} at ${version(x.version_id)}, ${why(x, stoppedScenario(report, x))}${repeatsText(x)}`,
        ...[...faultsOfCalls(callsOf(report, x)), ...unmet(callsOf(report, x))].map((line) => `  - ${line}`),
      ]),
    );
  }
  // Scenarios whose calls were planned and never placed (those with no call here are another shard's).
  const notPlaced = report.scenarios.filter((x) => x.verdict === "not_run" && x.iterations > 0);
  if (notPlaced.length > 0) {
    out.push("", "**Not run** (planned, never placed: neither passed nor failed)", "");
    out.push(
      ...bounded(notPlaced, (x) => [
        `- ○ not run: ${name(x)} at ${version(x.version_id)}`,
        ...unmet(callsOf(report, x)).map((line) => `  - ${line}`),
      ]),
    );
  }
  const flaky = report.scenarios.filter((x) => x.verdict === "flaky");
  if (flaky.length > 0) {
    out.push("", "**Flaky scenarios** (passed enough iterations, not all)", "");
    out.push(
      ...bounded(flaky, (x) => [
        `- ≈ ${name(x)}: ${x.passes} of ${x.iterations} passed (${needsText(x)})${repeatsText(x)}`,
        ...[...faultsOfCalls(callsOf(report, x)), ...unmet(callsOf(report, x), "≈")].map((line) => `  - ${line}`),
      ]),
    );
  }
  const letThrough = report.scenarios.filter((x) => tolerated(report, x));
  if (letThrough.length > 0) {
    out.push("", "**Still failing** (failed on the old version too; `--fail-on regression` lets them pass)", "");
    out.push(...bounded(letThrough, (x) => [`- ~ ${name(x)}: ${why(x)}`]));
  }
  const regressions = report.scenarios.filter((x) => x.comparison?.outcome === "regression");
  if (regressions.length > 0) {
    out.push("", "**Regressions** (a significantly lower pass rate, or a single call's flip)", "");
    out.push(
      ...bounded(regressions, (x) => {
        const c = x.comparison as NonNullable<ScenarioSummary["comparison"]>;
        const flips = c.expectations.filter((e) => e.outcome === "regression");
        return [
          `- ↓ ${name(x)}: ${c.old_verdict} at ${version(c.old_version_id)} → ${c.new_verdict} at ${version(c.new_version_id)}`,
          ...comparisonEvidence(c).map((line) => `  - ${markdownText(line)}`),
          ...flips.slice(0, MAX_ITEMS).map((e) => `  - ✓ → ✗ ${markdownText(e.description)}`),
        ];
      }),
    );
  }
  out.push("");
  return out.join("\n");
}
