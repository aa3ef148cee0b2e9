// The `variants` part of a report of kind "try" (agent-iac try: config variants of one agent played
// beside its unchanged config, the base, on the version the stack holds). Written strictly, read
// tolerantly, like the rest of the report. Each call of the run is in `results`, with its `side`
// (base or the variant's name), `round` and `position` in its round.
import { z } from "zod";

const count = z.int().min(0);
const rate = z.looseObject({ value: z.number(), low: z.number(), high: z.number() }).nullable();

/** What one side (the base or a variant) showed over its calls. */
const sideFiguresSchema = z.looseObject({
  calls: count,
  /** Calls that ended on their own (passed or failed): the pass rate's denominator. */
  evaluated: count,
  passes: count,
  /** Pass rate with its Wilson 95 % interval. */
  pass_rate: rate,
  /** Each judged rubric: its passes over the calls it was judged on. */
  rubrics: z.array(z.looseObject({ rubric: z.string(), passes: count, calls: count })).default([]),
  /** Mean response latency over the side's turns (ms), null with none measured. */
  latency_ms: z.number().nullable().default(null),
});

const VARIANT_VERDICTS = ["better", "worse", "no_worse", "inconclusive", "undecided"] as const;

const variantSchema = sideFiguresSchema.extend({
  name: z.string(),
  /** Where it was written: a file, or `variants.<name>` of the agent file. */
  source: z.string(),
  /** The top-level config sections it sent as override_config (whole). */
  sections: z.array(z.string()),
  /** The config sections it sent, as sent (for --promote and a reader). */
  override: z.record(z.string(), z.unknown()).default({}),
  /** Against the base: better, worse, no_worse (within the margin, earned), inconclusive at the cap; undecided when stopped. */
  verdict: z.enum(VARIANT_VERDICTS).or(z.string()),
  pairs: count,
  decided_after: count.nullable().default(null),
  /** Holm's share of α its verdict was reached at. */
  level: z.number().nullable().default(null),
  /** The largest wealth each test reached (a verdict at 1 / level). */
  wealth: z.looseObject({ worse: z.number(), better: z.number(), no_worse: z.number() }),
});

export const variantsSchema = z.looseObject({
  agent: z.string(),
  version_id: z.string(),
  scenarios: z.array(z.string()),
  alpha: z.number(),
  margin: z.number(),
  max_pairs: z.int().min(1),
  rounds: count,
  base: sideFiguresSchema,
  variants: z.array(variantSchema),
  ranking: z.looseObject({
    /** Every side (base included), highest pass rate first. */
    order: z.array(z.string()),
    /** The side ranked first with evidence over every other, or null. */
    first: z.string().nullable(),
    /** Sides the evidence does not tell apart from the top one, with the pairs they share. */
    not_told_apart: z.array(z.looseObject({ a: z.string(), b: z.string(), pairs: count })).default([]),
    text: z.string(),
  }),
  /** `--fail-on worse`: a worse variant fails the run (exit 1). */
  fail_on: z.string().nullable().default(null),
});

export type VariantsReport = z.output<typeof variantsSchema>;
export type VariantFigures = z.output<typeof sideFiguresSchema>;

/** A try's exit code (not interrupted): 3 a variant had no pair to judge, 1 a worse one under --fail-on worse, else 0. */
export function tryExitCode(part: VariantsReport | undefined): number {
  if (!part) return 3;
  if (part.variants.some((v) => v.pairs === 0)) return 3;
  if (part.fail_on === "worse" && part.variants.some((v) => v.verdict === "worse")) return 1;
  return 0;
}
