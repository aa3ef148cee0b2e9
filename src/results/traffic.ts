// The `traffic` part of a report of kind "watch" or "audit" (live traffic per version, read from
// the service's lists after a release). Same rules as the rest of the report: written strictly,
// read tolerantly (unknown fields kept, optional ones defaulted).
import { z } from "zod";

const count = z.int().min(0);

/** A share with what it was computed from; `value` null when `of` is 0. */
const shareSchema = z.looseObject({ count, of: count, value: z.number().nullable() });

const figuresSchema = z.looseObject({
  calls: count,
  finished: count,
  unfinished: count.default(0),
  failure_rate: shareSchema,
  duration_sec: z.looseObject({
    median: z.number().nullable().default(null),
    p95: z.number().nullable().default(null),
    measured: count.default(0),
  }),
  negative_feedback: shareSchema,
  negative_sentiment: shareSchema,
  procedure_errors: shareSchema.extend({ pending: count.default(0) }),
});

const windowSchema = z.looseObject({ from: z.string(), to: z.string() });

/** One list read: pages and items, and how often it resumed after the client's retries gave up. */
const readSchema = z.looseObject({ what: z.string(), pages: count, items: count, resumed: count.default(0) });

const agentTrafficSchema = z.looseObject({
  key: z.string(),
  version_id: z.string(),
  baseline_version_id: z.string().nullable().default(null),
  /** "versions file", "stack history" or "traffic". */
  baseline_source: z.string().nullable().default(null),
  status: z.string(),
  current: figuresSchema,
  previous: figuresSchema.nullable().default(null),
  breaches: z
    .array(
      z.looseObject({
        figure: z.string(),
        current: shareSchema,
        previous: shareSchema,
        increase: z.number(),
        allowed: z.number(),
      }),
    )
    .default([]),
  message: z.string(),
  rollback: z.string().nullable().default(null),
});

const versionTrafficSchema = z.looseObject({
  agent_id: z.string(),
  calls: count,
  live: count,
  test: count,
  /** "current", "old", "old_tests" (an older version only test calls reached: no live traffic) or "unknown". */
  category: z.string(),
  key: z.string().nullable().default(null),
  note: z.string(),
});

export const trafficSchema = z.looseObject({
  window: windowSchema,
  baseline_window: windowSchema.nullable().default(null),
  reads: z.array(readSchema).default([]),
  pages_read: count.default(0),
  items_read: count.default(0),
  test_calls_excluded: count.default(0),
  /** watch: one entry per conversational agent. */
  agents: z.array(agentTrafficSchema).default([]),
  /** audit: one entry per agent id that took calls. */
  versions: z.array(versionTrafficSchema).default([]),
  /** audit: current versions without calls in the window. */
  idle: z.array(z.looseObject({ key: z.string(), version_id: z.string() })).default([]),
  history: z.looseObject({ available: z.boolean(), source: z.string() }).nullable().default(null),
  /**
   * How each conversation's `agent_id` was attributed to a version: taken as it is when it is a
   * version id, mapped from a bare agent id to the one version of that agent the stack knows.
   * `rule`: "version id", "bare agent id", "both" or "none"; `text` says it in a sentence.
   */
  attribution: z
    .looseObject({
      rule: z.string(),
      by_version_id: count,
      by_bare_id: count,
      unmapped_bare_id: count.default(0),
      text: z.string(),
    })
    .nullable()
    .default(null),
});

export type TrafficReport = z.output<typeof trafficSchema>;
