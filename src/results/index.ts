// src/results: the run's results as data, below every folder that produces or renders them. The
// report value of every kind (schema.ts: smoke, compare, behave, merged, replay, and its parts:
// traffic.ts for watch and audit, variants.ts for try, drift.ts for drift; plan.ts: the plan), the
// outcome rules every surface counts and marks by (outcome.ts: the counts, the verdict mark, the one
// rule from results to exit code), the words every surface says them in (words.ts), and a report
// file read back (read.ts). The producers (smoke,
// compare, plan, watch, drift, variants) build these values; src/report renders and writes them.

export type { Drift, DriftScenario, Moved } from "./drift.ts";
export { notEvidence } from "./evidence.ts";
export * from "./outcome.ts";
export * from "./plan.ts";
export { readReport, unreadableFile } from "./read.ts";
export * from "./schema.ts";
export * from "./traffic.ts";
export * from "./variants.ts";
export * from "./words.ts";
