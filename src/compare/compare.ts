// Old versus new for one scenario, from the calls placed on each side: the verdicts, each
// expectation's flip, a transcript diff (agent turns, user turns, tool calls with arguments), the
// duration and per-turn latency deltas and the procedures' differences. Pure: no I/O.
import { diffArrays } from "diff";
import {
  type CallResult,
  type ComparisonOutcome,
  callerTime,
  evaluated,
  expectationId,
  type ReportAssertion,
  type ScenarioComparison,
  type Verdict,
} from "../results/index.ts";
import { cutShort } from "../smoke/index.ts";
import type { SequentialEvidence } from "./sequential.ts";
import type { Evidence } from "./significance.ts";

/** At most this many lines of transcript diff per scenario (the rest is counted). */
const MAX_DIFF_LINES = 200;

/** A side's verdict over its iterations: passed only when every iteration passed. */
function sideVerdict(calls: readonly CallResult[]): Verdict {
  if (calls.every((c) => c.outcome.kind === "not_run")) return "not_run";
  if (calls.some((c) => !evaluated(c.outcome.kind))) return "error";
  return calls.every((c) => c.outcome.kind === "passed") ? "passed" : "failed";
}

/** Whether an expectation held on a side (in every iteration that evaluated it); null when none did. */
function held(calls: readonly CallResult[], id: string): boolean | null {
  const seen = calls.flatMap((c) => c.assertions.filter((a) => expectationId(a) === id));
  return seen.length === 0 ? null : seen.every((a) => a.passed);
}

/** Each expectation either side checked, once, by identity: as the new side words it, else as the old one did. */
function expectationsOf(
  oldCalls: readonly CallResult[],
  newCalls: readonly CallResult[],
): Map<string, ReportAssertion> {
  const byId = new Map<string, ReportAssertion>();
  for (const assertion of [...newCalls, ...oldCalls].flatMap((c) => c.assertions)) {
    const id = expectationId(assertion);
    if (!byId.has(id)) byId.set(id, assertion);
  }
  return byId;
}

export function expectationOutcome(old: boolean | null, now: boolean | null): ComparisonOutcome {
  if (old === true && now !== true) return "regression";
  if (now === false) return "still_failing";
  if (old === false && now === true) return "fixed";
  return "unchanged";
}

/** A flaky scenario met its threshold (`min_pass`): it counts as passing. */
const passing = (verdict: Verdict) => verdict === "passed" || verdict === "flaky";

export function scenarioOutcome(old: Verdict, now: Verdict): ComparisonOutcome {
  if (passing(now)) return passing(old) ? "unchanged" : "fixed";
  return passing(old) ? "regression" : "still_failing";
}

/**
 * The outcome with evidence: the sequential comparison's decision where it ran; with a fixed test
 * ("exact"), a regression is a significantly lower pass rate on the new version, whatever the
 * verdicts, and a verdict that flipped without that is "not enough evidence". Single calls
 * ("flip") keep the verdicts' flip.
 */
function evidencedOutcome(
  old: Verdict,
  now: Verdict,
  evidence: Evidence | undefined,
  sequential: SequentialEvidence | undefined,
  stopped = false,
): ComparisonOutcome {
  // A side the run's stop cut short is no side: neither a failure nor a regression, but interrupted.
  if (stopped && [old, now].some((v) => v === "error" || v === "not_run")) return "interrupted";
  if (sequential) return sequential.outcome;
  const flip = scenarioOutcome(old, now);
  if (evidence?.method !== "exact") return flip;
  if (evidence.significant) return "regression";
  return flip === "regression" ? "not_enough_evidence" : flip;
}

/**
 * The comparison of one scenario's calls on the old and the new version. `verdicts` are the sides'
 * scenario verdicts under the scenario's threshold (smoke's gates); without them every call must pass.
 */
export function compareScenario(
  oldCalls: readonly CallResult[],
  newCalls: readonly CallResult[],
  verdicts: { old?: Verdict; new?: Verdict } = {},
  evidence?: Evidence,
  sequential?: SequentialEvidence,
): ScenarioComparison {
  const oldVerdict = verdicts.old ?? sideVerdict(oldCalls);
  const newVerdict = verdicts.new ?? sideVerdict(newCalls);
  const firstOld = oldCalls[0];
  const firstNew = newCalls[0];
  return {
    old_version_id: firstOld?.version_id ?? "",
    new_version_id: firstNew?.version_id ?? "",
    old_verdict: oldVerdict,
    new_verdict: newVerdict,
    outcome: evidencedOutcome(oldVerdict, newVerdict, evidence, sequential, cutShort(oldCalls) || cutShort(newCalls)),
    expectations: [...expectationsOf(oldCalls, newCalls)].map(([id, { kind, key, description }]) => {
      const old = held(oldCalls, id);
      const now = held(newCalls, id);
      return { kind, key, description, old, new: now, outcome: expectationOutcome(old, now) };
    }),
    transcript_diff: transcriptDiff(timedLines(firstOld), timedLines(firstNew)),
    duration_delta_ms: durationDelta(oldCalls, newCalls),
    response_latency_delta_ms: latencyDeltas(firstOld, firstNew),
    procedure_differences: procedureDifferences(
      { procedures: firstOld?.procedures ?? [], conversationId: firstOld?.conversation_id ?? null },
      { procedures: firstNew?.procedures ?? [], conversationId: firstNew?.conversation_id ?? null },
    ),
    ...pairsOf(oldCalls, newCalls),
    ...(sequential ? { sequential: sequential.test } : {}),
    ...(evidence && !sequential ? { evidence } : {}),
  };
}

/** The pairs placed interleaved, in iteration order: which call of each went first (none when the sides were not paired). */
function pairsOf(
  oldCalls: readonly CallResult[],
  newCalls: readonly CallResult[],
): Pick<ScenarioComparison, "pairs"> | Record<string, never> {
  const olds = new Set(oldCalls.map((c) => c.iteration));
  const pairs = newCalls
    .filter((c) => c.pair_order && olds.has(c.iteration))
    .sort((a, b) => a.iteration - b.iteration)
    .map((c) => c.pair_order as NonNullable<CallResult["pair_order"]>);
  return pairs.length > 0 ? { pairs } : {};
}

/** A transcript line apart from when it was said (a caller's line carries its time). */
type TimedLine = { text: string; atMs?: number };

/** A call's transcript lines, each caller line's `(at N s)` apart from its text. */
function timedLines(call: Pick<CallResult, "transcript" | "entries"> | undefined): TimedLine[] {
  return (call?.transcript ?? []).map((line, i) => {
    const entry = call?.entries[i];
    if (entry?.kind !== "user" || entry.by !== "caller" || entry.at_ms === null) return { text: line };
    const at = ` ${callerTime(entry.at_ms)}`;
    return line.endsWith(at) ? { text: line.slice(0, -at.length), atMs: entry.at_ms } : { text: line };
  });
}

/**
 * "  same", "- only old", "+ only new", line by line (the first iteration of each side), compared
 * on the text alone: a caller line said at another moment is the same line, its times beside it.
 */
export function transcriptDiff(old: readonly TimedLine[], now: readonly TimedLine[]): string[] {
  const lines: string[] = [];
  const show = (mark: string, line: TimedLine | undefined, otherMs?: number) => {
    const at = line?.atMs === undefined ? "" : ` ${callerTime(line.atMs, otherMs)}`;
    lines.push(`${mark}${line?.text ?? ""}${at}`);
  };
  let [o, n] = [0, 0];
  for (const change of diffArrays([...old], [...now], { comparator: (a, b) => a.text === b.text })) {
    for (let i = 0; i < change.count; i++) {
      if (change.removed) show("- ", old[o++]);
      else if (change.added) show("+ ", now[n++]);
      else {
        const [before, after] = [old[o++], now[n++]];
        show("  ", before?.atMs === undefined ? after : before, after?.atMs);
      }
    }
  }
  if (lines.length <= MAX_DIFF_LINES) return lines;
  return [...lines.slice(0, MAX_DIFF_LINES), `… ${lines.length - MAX_DIFF_LINES} more line(s)`];
}

function mean(values: number[]): number | null {
  return values.length === 0 ? null : values.reduce((a, b) => a + b, 0) / values.length;
}

/** New minus old mean call duration (ms), over the iterations that completed. */
function durationDelta(old: readonly CallResult[], now: readonly CallResult[]): number | null {
  const completed = (calls: readonly CallResult[]) =>
    calls.filter((c) => evaluated(c.outcome.kind)).map((c) => c.timings.duration_ms);
  const a = mean(completed(old));
  const b = mean(completed(now));
  return a === null || b === null ? null : Math.round(b - a);
}

/** Per turn, new minus old response latency (ms), for the turns both first iterations measured. */
function latencyDeltas(old: CallResult | undefined, now: CallResult | undefined): number[] {
  const a = old?.latency.response_ms ?? [];
  const b = now?.latency.response_ms ?? [];
  return b.slice(0, Math.min(a.length, b.length)).map((value, i) => Math.round(value - (a[i] as number)));
}

type ProcedureView = { key?: unknown; name?: unknown; status?: unknown; output?: unknown; error?: unknown };

type ProcedureSide = { procedures: readonly unknown[]; conversationId: string | null };

/** A value as short JSON, with the side's own conversation id masked (outputs often name it). */
function shown(value: unknown, conversationId: string | null): string {
  const json = value === undefined ? "(none)" : JSON.stringify(value);
  const text = conversationId ? json.replaceAll(conversationId, "(conversation)") : json;
  return text.length > 200 ? `${text.slice(0, 199)}…` : text;
}

/** Each expected procedure whose status, output or error differs between the sides, in words. */
export function procedureDifferences(oldSide: ProcedureSide, newSide: ProcedureSide): string[] {
  const byKey = (list: readonly unknown[]) =>
    new Map(
      list
        .filter((p): p is ProcedureView => typeof p === "object" && p !== null)
        .map((p) => [String(p.key ?? p.name ?? "?"), p]),
    );
  const a = byKey(oldSide.procedures);
  const b = byKey(newSide.procedures);
  const out: string[] = [];
  for (const key of [...new Set([...a.keys(), ...b.keys()])]) {
    const before = a.get(key);
    const after = b.get(key);
    if (before?.status !== after?.status) {
      out.push(`${key}: status ${before?.status ?? "(none)"} → ${after?.status ?? "(none)"}`);
    }
    for (const field of ["output", "error"] as const) {
      const was = shown(before?.[field], oldSide.conversationId);
      const is = shown(after?.[field], newSide.conversationId);
      if (was !== is) out.push(`${key}: ${field} ${was} → ${is}`);
    }
  }
  return out;
}
