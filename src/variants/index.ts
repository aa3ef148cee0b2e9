// Config variants of one agent tried side by side on the version the stack holds (agent-iac try):
// what may be tried (tryable.ts), the rounds of interleaved calls (rounds.ts), the verdicts against
// the base with Holm across variants (decide.ts), the ranking and how sure it is (ranking.ts), the
// report value (report.ts), and promoting a variant into the agent file (promote.ts).
export { strictestAlpha } from "./decide.ts";
export { promoteDiff, promoteText, promotionRefusal } from "./promote.ts";
export { tryReport } from "./report.ts";
export { playRounds, roundsOf, type TryPlan, type Variant, worstCase } from "./rounds.ts";
export { agentUntryable, deployedDifferences, untryable, variantOverride } from "./tryable.ts";
