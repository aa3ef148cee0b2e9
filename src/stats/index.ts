// The decisions a run makes from counts and measurements, as pure functions with their error rates
// documented: early decision of fixed repeats, the sequential pass-rate test, pass^k, and the
// significance of old-versus-new differences. No I/O; smoke and compare call these.

export {
  cohenKappa,
  DEFAULT_MAX_VOTES,
  flipRate,
  type Kappa,
  kappaInterval,
  nextVotes,
  passPosterior,
  type RatedPair,
  settledVerdict,
} from "./agreement.ts";
export {
  fixedDecision,
  logChoose,
  passHatK,
  passHatKs,
  round4,
  wilsonInterval,
} from "./binomial.ts";
export { fisherLower, hodgesLehmann, holm, mannWhitneyGreater, rateDifference } from "./compare.ts";
export {
  clopperPearsonLower,
  type DriftRule,
  driftDecision,
  driftedBound,
  driftSequentialRule,
  exceedanceRate,
  latencyDrift,
  latencySlack,
  referenceLevel,
  worstFalseDrifted,
} from "./drift.ts";
export {
  bettingWealth,
  fewestPairs,
  type PairedRule,
  type PairOutcome,
  pairedDecision,
  pairedWealth,
  regressedBet,
  signWealth,
  slowerWealth,
} from "./paired.ts";
export { seededRandom, shuffled } from "./random.ts";
export {
  boundaries,
  defaultMargin,
  fewestCalls,
  fixedDesign,
  logLikelihoodRatio,
  type SequentialRule,
  sequentialDecision,
} from "./sequential.ts";
