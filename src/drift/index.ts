// src/drift: is a pinned version still as good as the day a person approved it? The blessed
// baseline (baseline.ts: its strict schema, made from smoke reports) and the drift verdicts
// (decide.ts: the calls it places, each scenario decided against the baseline's counts with an
// anytime-valid test, and what moved besides the agent). No I/O: the use cases read and write.
export {
  type Baseline,
  baselineJson,
  baselinePath,
  blessBaseline,
  parseBaseline,
} from "./baseline.ts";
export {
  DRIFT_DEFAULTS,
  driftReport,
  driftScenario,
  movedSince,
  requireBlessedVersions,
  scenarioHashes,
} from "./decide.ts";
