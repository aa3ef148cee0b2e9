// Policy violations in a plan: the preview's policy events (agent-iac's policy pack, or any pack the
// stack names), each listed under the agent it concerns.
import type * as pulumi from "@pulumi/pulumi";
import { AGENT_TYPE_PREFIX, agentKeyOf } from "../provider/index.ts";
import type { PolicyViolation } from "../results/index.ts";

/** Collects policy events by resource name (the agent key); others under "". */
export function policyRecorder() {
  const byAgent = new Map<string, PolicyViolation[]>();
  const onEvent = (event: pulumi.automation.EngineEvent) => {
    const policy = event.policyEvent;
    if (!policy) return;
    const urn = policy.resourceUrn ?? "";
    const type = urn.split("::").at(-2)?.split("$").at(-1) ?? "";
    const key = type.startsWith(AGENT_TYPE_PREFIX) ? agentKeyOf(urn) : "";
    const violation: PolicyViolation = {
      rule: policy.policyName,
      level: policy.enforcementLevel === "mandatory" ? "mandatory" : "advisory",
      pack: policy.policyPackName,
      message: violationText(policy.message),
      urn,
    };
    const list = byAgent.get(key) ?? [];
    if (!list.some((v) => v.rule === violation.rule && v.message === violation.message)) list.push(violation);
    byAgent.set(key, list);
  };
  return {
    onEvent,
    violations: (key: string) => byAgent.get(key) ?? [],
    mandatory: () => [...byAgent.values()].flat().filter((v) => v.level === "mandatory").length,
    other: () => byAgent.get("") ?? [],
  };
}

/**
 * The violation without its rule's description: @pulumi/policy sends "description\nmessage", and the
 * plan names the rule beside it. A message alone (no description line) is kept whole.
 */
function violationText(message: string): string {
  const text = message.trim();
  const newline = text.indexOf("\n");
  return newline === -1 ? text : text.slice(newline + 1).trim();
}
