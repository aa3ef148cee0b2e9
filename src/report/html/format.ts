// Words, icons and numbers shared by the report's parts. A verdict is always shown as an icon and
// a word, never by colour alone.

import { type Html, html } from "../../escape/index.ts";
import type { CallOutcomeKind, ComparisonOutcome, Verdict } from "../../results/index.ts";

type Badge = { icon: string; label: string; tone: "good" | "bad" | "warn" | "neutral" };

const verdicts: Record<Verdict, Badge> = {
  passed: { icon: "✓", label: "passed", tone: "good" },
  failed: { icon: "✗", label: "failed", tone: "bad" },
  flaky: { icon: "≈", label: "flaky", tone: "warn" },
  error: { icon: "⚠", label: "error", tone: "bad" },
  not_run: { icon: "○", label: "not run", tone: "neutral" },
  inconclusive: { icon: "?", label: "inconclusive", tone: "bad" },
};

const outcomes: Record<ComparisonOutcome, Badge> = {
  regression: { icon: "↓", label: "regression", tone: "bad" },
  fixed: { icon: "↑", label: "fixed", tone: "good" },
  still_failing: { icon: "✗", label: "still failing", tone: "warn" },
  unchanged: { icon: "=", label: "unchanged", tone: "neutral" },
  not_enough_evidence: { icon: "≟", label: "not enough evidence", tone: "warn" },
  no_worse: { icon: "=", label: "no worse", tone: "good" },
  inconclusive: { icon: "?", label: "inconclusive", tone: "bad" },
  interrupted: { icon: "■", label: "interrupted", tone: "bad" },
};

const callOutcomes: Record<CallOutcomeKind, Badge> = {
  passed: verdicts.passed,
  failed: verdicts.failed,
  error: verdicts.error,
  not_run: verdicts.not_run,
  interrupted: { icon: "■", label: "interrupted", tone: "bad" },
  inconclusive: verdicts.inconclusive,
};

/** A verdict's tone (a card's bar, a badge's colour); unknown verdicts are neutral. */
export function verdictTone(verdict: string): Badge["tone"] {
  return verdicts[verdict as Verdict]?.tone ?? "neutral";
}

/**
 * The run's mark (outcome.ts `headline`: ❌ ⚠️ ✅, emoji for Markdown) drawn with the page's own
 * glyphs, which every font the report may be read with has (an emoji font is not everywhere).
 */
const HEADLINE_MARKS: Record<string, Pick<Badge, "icon" | "tone">> = {
  "❌": { icon: "✗", tone: "bad" },
  "⚠️": { icon: "⚠", tone: "warn" },
  "✅": { icon: "✓", tone: "good" },
};

export function headlineMark(mark: string): Html {
  const known = HEADLINE_MARKS[mark] ?? { icon: mark, tone: "neutral" };
  return html`<span class="mark ${known.tone}" aria-hidden="true">${known.icon}</span>`;
}

function badge(b: Badge, kind: string, value: string): Html {
  return html`<span class="badge ${b.tone}" data-${kind}="${value}"><span aria-hidden="true">${b.icon}</span> ${b.label}</span>`;
}

/** Unknown values (a newer report's verdict) are shown as they are, in neutral. */
export function verdictBadge(verdict: string): Html {
  const known = verdicts[verdict as Verdict];
  return badge(known ?? { icon: "?", label: verdict, tone: "neutral" }, "verdict", verdict);
}

/** A call's outcome: passed, failed, error, not run, interrupted. */
export function callBadge(kind: CallOutcomeKind): Html {
  const known = callOutcomes[kind];
  return badge(known ?? { icon: "?", label: kind, tone: "neutral" }, "call-outcome", kind);
}

export function outcomeBadge(outcome: string): Html {
  const known = outcomes[outcome as ComparisonOutcome];
  return badge(known ?? { icon: "?", label: outcome, tone: "neutral" }, "outcome", outcome);
}

export function passMark(passed: boolean | null): Html {
  if (passed === null) return html`<span class="mark neutral">– not checked</span>`;
  return passed
    ? html`<span class="mark good"><span aria-hidden="true">✓</span> met</span>`
    : html`<span class="mark bad"><span aria-hidden="true">✗</span> unmet</span>`;
}

/** 850 ms, 3.20 s, 2 min 5 s. */
export function duration(ms: number | null | undefined): string {
  if (ms === null || ms === undefined || !Number.isFinite(ms)) return "–";
  if (ms < 1000) return `${Math.round(ms)} ms`;
  if (ms < 60_000) return `${(ms / 1000).toFixed(2)} s`;
  const minutes = Math.floor(ms / 60_000);
  return `${minutes} min ${Math.round((ms - minutes * 60_000) / 1000)} s`;
}

export function signedMs(ms: number): string {
  return `${ms > 0 ? "+" : ms < 0 ? "−" : "±"}${duration(Math.abs(ms))}`;
}

/** At most this many characters of one value are written, so one huge tool result cannot bloat the file. */
const MAX_VALUE_CHARS = 20_000;

export function clip(text: string, max = MAX_VALUE_CHARS): string {
  return text.length <= max ? text : `${text.slice(0, max)}… (${text.length - max} more characters)`;
}

/** A value from the service as readable JSON (strings as they are). */
export function pretty(value: unknown): string {
  if (value === undefined) return "";
  if (typeof value === "string") return clip(value);
  try {
    return clip(JSON.stringify(value, null, 2) ?? String(value));
  } catch {
    return clip(String(value));
  }
}
