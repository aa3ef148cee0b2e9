// Org rules for agents (issue: guardrails as a Pulumi policy pack): the rules, their configuration
// (the file `--policy-pack-config` takes), and the pack that serves them to the Pulumi CLI. The
// same rule code runs in the pack (./pack.ts, loaded only by policy/index.js) and offline in
// `agent-iac validate --policy` (evaluateAgents).
import type { AgentDefinition } from "../definitions/index.ts";
import { type EnforcementLevel, type RuleSetup, ruleSetups } from "./config.ts";
import type { Finding, PolicyAgent } from "./rules.ts";

export {
  configSchema,
  PolicyConfigError,
  type RuleSetup,
  ruleSetups,
} from "./config.ts";
export { forbiddenMatches, mask, type PersonalKind, personalData } from "./patterns.ts";
export {
  fieldPath,
  type PolicyAgent,
  RULES,
  violationMessage,
} from "./rules.ts";

export type AgentViolation = { agent: string; level: Exclude<EnforcementLevel, "disabled">; finding: Finding };

/** Every violation of the enabled rules among these agents (the whole set, so links resolve). */
export function evaluateAgents(agents: readonly PolicyAgent[], setups: RuleSetup[] = ruleSetups({})): AgentViolation[] {
  const violations: AgentViolation[] = [];
  for (const { rule, level, settings } of setups) {
    if (level === "disabled") continue;
    for (const agent of agents) {
      if (!rule.kinds.includes(agent.kind)) continue;
      for (const finding of rule.check(agent, settings as never)) violations.push({ agent: agent.key, level, finding });
    }
  }
  return violations;
}

/** The agents of a directory as the rules see them: links by key, with the linked agents' names. */
export function definitionAgents(definitions: readonly AgentDefinition[]): PolicyAgent[] {
  const byKey = new Map(definitions.map((d) => [d.key, d]));
  return definitions.map((d) => ({
    key: d.key,
    kind: d.kind,
    config: d.config,
    ...(d.kind === "conversational"
      ? { linked: d.postprocessAgents.map((key) => ({ key, name: byKey.get(key)?.name })) }
      : {}),
  }));
}
