// The short Markdown summary of a report for a CI job page (GitHub's job summary): the counts,
// each failed scenario with its unmet expectations, the flaky ones, and the regressions. Text from
// agent files and the service is escaped so it cannot turn into markup, and lists are bounded.
import { appendFile } from "node:fs/promises";
import type { z } from "zod";
import { CliError } from "../errors/index.ts";
import { decidedText, evidenceText, passKText, sequentialText } from "./repeats.ts";
import { type CallResult, type Report, reportSchema, type ScenarioSummary } from "./schema.ts";

const MAX_SCENARIOS = 25;
const MAX_ITEMS = 5;
const MAX_TEXT = 300;

/** Plain text for Markdown inside a line: one line, bounded, HTML and inline Markdown syntax escaped. */
export function markdownText(text: string): string {
  const line = text.replace(/\s+/g, " ").trim();
  const clipped = line.length > MAX_TEXT ? `${line.slice(0, MAX_TEXT)}…` : line;
  return clipped
    .replace(/&/g, "&amp;")
    .replace(/</g, "&lt;")
    .replace(/>/g, "&gt;")
    .replace(/[\\`*_[\]|~]/g, (c) => `\\${c}`);
}

const name = (s: { agent: string; scenario: string }) => `**${markdownText(s.agent)}** / ${markdownText(s.scenario)}`;
const version = (id: string) => `\`${id.replace(/[`\s]/g, "")}\``;

function callsOf(report: Report, s: ScenarioSummary): CallResult[] {
  return report.results.filter(
    (r) => r.agent === s.agent && r.scenario === s.scenario && r.side !== "old" && r.version_id === s.version_id,
  );
}

/** Each unmet expectation once, with how many iterations missed it; call errors the same way. */
function unmet(calls: readonly CallResult[]): string[] {
  const misses = new Map<string, number>();
  const count = (line: string) => misses.set(line, (misses.get(line) ?? 0) + 1);
  for (const call of calls) {
    if (call.error) count(`⚠ call error: ${markdownText(call.error)}`);
    for (const a of call.assertions.filter((a) => !a.passed)) {
      count(`✗ ${markdownText(a.description)}${a.detail ? `: ${markdownText(a.detail)}` : ""}`);
    }
    if (call.assertions.length === 0 && !call.error && call.status !== "passed") count("✗ nothing was checked");
  }
  const list = [...misses].map(([line, n]) =>
    calls.length > 1 ? `${line} (${n} of ${calls.length} iterations)` : line,
  );
  return list.length > MAX_ITEMS ? [...list.slice(0, MAX_ITEMS), `… and ${list.length - MAX_ITEMS} more`] : list;
}

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

const titles: Record<string, string> = {
  smoke: "smoke",
  compare: "smoke --compare",
  behave: "plan --behave",
  merged: "smoke (merged shards)",
};

export type ReportInput = z.input<typeof reportSchema>;

/** The job summary of one report, in Markdown. */
export function jobSummary(input: ReportInput): string {
  const report = reportSchema.parse(input);
  const s = report.summary;
  const bad = s.failed + s.errors + s.regressions > 0;
  const seconds = Math.round(s.duration_ms / 100) / 10;
  const out = [
    `### ${bad ? "❌" : s.flaky > 0 ? "⚠️" : "✅"} agent-iac ${titles[report.kind] ?? report.kind}${report.stack ? ` on ${markdownText(report.stack)}` : ""}`,
    "",
    "| passed | failed | flaky | errors | regressions | scenarios | calls | duration | call minutes |",
    "|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    `| ${s.passed} | ${s.failed} | ${s.flaky} | ${s.errors} | ${s.regressions} | ${s.scenarios} | ${s.calls} | ${seconds} s | ${Math.round(s.call_minutes * 100) / 100} |`,
  ];
  const failed = report.scenarios.filter(
    (x) => x.verdict === "failed" || x.verdict === "error" || x.verdict === "inconclusive",
  );
  if (failed.length > 0) {
    out.push("", "**Failed scenarios**", "");
    out.push(
      ...bounded(failed, (x) => [
        `- ${x.verdict === "error" ? "⚠ error" : x.verdict === "inconclusive" ? "? inconclusive" : "✗ failed"}: ${name(x)} at ${version(x.version_id)}, ${x.passes} of ${x.iterations} iterations passed${repeatsText(x)}`,
        ...unmet(callsOf(report, x)).map((line) => `  - ${line}`),
      ]),
    );
  }
  const flaky = report.scenarios.filter((x) => x.verdict === "flaky");
  if (flaky.length > 0) {
    out.push("", "**Flaky scenarios** (passed enough iterations, not all)", "");
    out.push(
      ...bounded(flaky, (x) => [
        `- ≈ ${name(x)}: ${x.passes} of ${x.iterations} passed (needs ${x.min_pass})${repeatsText(x)}`,
        ...unmet(callsOf(report, x)).map((line) => `  - ${line}`),
      ]),
    );
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
          ...(c.evidence ? evidenceText(c.evidence).map((line) => `  - ${markdownText(line)}`) : []),
          ...flips.slice(0, MAX_ITEMS).map((e) => `  - ✓ → ✗ ${markdownText(e.description)}`),
        ];
      }),
    );
  }
  out.push("");
  return out.join("\n");
}

/**
 * Appends the job summary to the file GitHub Actions names in GITHUB_STEP_SUMMARY; does nothing
 * when it is not set. Returns the file written, if any.
 */
export async function appendJobSummary(
  report: ReportInput,
  env: NodeJS.ProcessEnv = process.env,
): Promise<string | undefined> {
  const file = env.GITHUB_STEP_SUMMARY;
  if (!file) return undefined;
  try {
    await appendFile(file, `${jobSummary(report)}\n`);
  } catch (error) {
    const reason = error instanceof Error && "code" in error ? String(error.code) : String(error);
    throw new CliError(`cannot append the job summary to GITHUB_STEP_SUMMARY (${file}): ${reason}`, 3, {
      cause: error,
    });
  }
  return file;
}
