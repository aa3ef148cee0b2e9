// Figures of one version's traffic, each with its counts so a reader sees how much evidence there
// is. The interface leaves status words, failure reasons, sentiments and ratings open, so they are
// read tolerantly: a conversation failed when it has a failure_reason or a status that says so;
// it is unfinished while it has neither a completed_at nor a failure.
import type { Conversation, Feedback, Procedure } from "../contract/index.ts";

const present = (value: unknown) => value !== null && value !== undefined && value !== "";

function conversationFailed(c: Conversation): boolean {
  return present(c.failure_reason) || /fail|error/i.test(c.status);
}

function conversationFinished(c: Conversation): boolean {
  return present(c.completed_at) || conversationFailed(c);
}

/** duration_sec as a number (it is typed "nullable" only), else null. */
function durationOf(c: Conversation): number | null {
  const value = typeof c.duration_sec === "string" ? Number(c.duration_sec) : c.duration_sec;
  return typeof value === "number" && Number.isFinite(value) && value >= 0 ? value : null;
}

/** A sentiment's label: a string, or an object's `label` (the shapes seen). */
function sentimentLabel(value: unknown): string | null {
  if (typeof value === "string" && value) return value;
  if (value && typeof value === "object" && typeof (value as { label?: unknown }).label === "string") {
    return (value as { label: string }).label;
  }
  return null;
}

function procedureFailed(p: Procedure): boolean {
  return present(p.error) || /fail|error/i.test(p.status);
}

/** Not failed and not in a word that means done: still running. */
function procedurePending(p: Procedure): boolean {
  return !procedureFailed(p) && /pend|queue|run|progress|accept|work|wait|start/i.test(p.status);
}

/** Counts gathered for one version in one window. */
export class Tally {
  calls = 0;
  finished = 0;
  failed = 0;
  durations: number[] = [];
  sentiments = 0;
  negativeSentiments = 0;
  feedbacks = 0;
  negativeFeedbacks = 0;
  procedures = 0;
  procedureErrors = 0;
  proceduresPending = 0;

  addConversation(c: Conversation): void {
    this.calls++;
    if (conversationFinished(c)) this.finished++;
    if (conversationFailed(c)) this.failed++;
    const duration = durationOf(c);
    if (duration !== null) this.durations.push(duration);
    const sentiment = sentimentLabel(c.sentiment);
    if (sentiment !== null) {
      this.sentiments++;
      if (/neg/i.test(sentiment)) this.negativeSentiments++;
    }
  }

  addFeedback(f: Feedback, negativeRatings: ReadonlySet<string>): void {
    this.feedbacks++;
    if (negativeRatings.has(f.rating.toLowerCase())) this.negativeFeedbacks++;
  }

  addProcedure(p: Procedure): void {
    this.procedures++;
    if (procedureFailed(p)) this.procedureErrors++;
    else if (procedurePending(p)) this.proceduresPending++;
  }
}

/** A share with what it was computed from; `value` null when there is nothing to divide by. */
export type Share = { count: number; of: number; value: number | null };

export type Figures = {
  calls: number;
  finished: number;
  unfinished: number;
  failure_rate: Share;
  duration_sec: { median: number | null; p95: number | null; measured: number };
  negative_feedback: Share;
  negative_sentiment: Share;
  procedure_errors: Share & { pending: number };
};

const share = (count: number, of: number): Share => ({ count, of, value: of > 0 ? count / of : null });

/** The nearest-rank percentile (p in 0–100) of unsorted numbers; null for none. */
export function percentile(values: readonly number[], p: number): number | null {
  if (values.length === 0) return null;
  const sorted = [...values].sort((a, b) => a - b);
  const rank = Math.max(1, Math.ceil((p / 100) * sorted.length));
  return sorted[rank - 1] ?? null;
}

export function figures(t: Tally): Figures {
  return {
    calls: t.calls,
    finished: t.finished,
    unfinished: t.calls - t.finished,
    failure_rate: share(t.failed, t.finished),
    duration_sec: {
      median: percentile(t.durations, 50),
      p95: percentile(t.durations, 95),
      measured: t.durations.length,
    },
    negative_feedback: share(t.negativeFeedbacks, t.feedbacks),
    negative_sentiment: share(t.negativeSentiments, t.sentiments),
    procedure_errors: { ...share(t.procedureErrors, t.procedures - t.proceduresPending), pending: t.proceduresPending },
  };
}
