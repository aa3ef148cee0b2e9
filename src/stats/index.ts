// The decisions a run makes from counts and measurements, as pure functions with their error rates
// documented: early decision of fixed repeats, the sequential pass-rate test, pass^k, and the
// significance of old-versus-new differences. No I/O; smoke and compare call these.
export {
  type FixedDecision,
  fixedDecision,
  logChoose,
  passHatK,
  passHatKs,
  round4,
  wilsonInterval,
} from "./binomial.ts";
export { fisherLower, hodgesLehmann, holm, mannWhitneyGreater, normalUpper, rateDifference } from "./compare.ts";
export {
  type Boundaries,
  boundaries,
  defaultMargin,
  fewestCalls,
  fixedDesign,
  logLikelihoodRatio,
  type SequentialDecision,
  type SequentialRule,
  sequentialDecision,
} from "./sequential.ts";
