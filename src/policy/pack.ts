// The Pulumi policy pack (CrossGuard): the rules of ./rules.ts as policies matched by the agent
// resources' type tokens. Served by policy/index.js (PulumiPolicy.yaml), which `pulumi preview
// --policy-pack policy` runs. Agent rules are resource policies (they run on each agent's inputs
// before anything is created); the link rule is a stack policy (it needs every agent).
import {
  PolicyPack,
  type PolicyResource,
  type ResourceValidationPolicy,
  type StackValidationPolicy,
} from "@pulumi/policy";
import { AGENT_TYPE_PREFIX } from "../provider/index.ts";
import { configSchema, DEFAULT_LEVEL, ruleSettings } from "./config.ts";
import { type AgentKind, type PolicyAgent, RULES, type Rule, violationMessage } from "./rules.ts";

export const PACK_NAME = "agent-iac";

const TYPES: Record<AgentKind, string> = {
  conversational: `${AGENT_TYPE_PREFIX}ConversationalAgent`,
  procedural: `${AGENT_TYPE_PREFIX}ProceduralAgent`,
};

function kindOf(type: string): AgentKind | undefined {
  return type === TYPES.conversational ? "conversational" : type === TYPES.procedural ? "procedural" : undefined;
}

/** Procedural agents' names by URN, seen by the resource policies (a stack policy sees outputs only). */
const names = new Map<string, string>();

function remember(urn: string, kind: AgentKind, props: Record<string, unknown>) {
  if (kind !== "procedural") return;
  try {
    if (typeof props.name === "string") names.set(urn, props.name);
  } catch {
    // An unknown name (known after apply): only the key can match it.
  }
}

/** What a rule's policy says of itself: its name, description, default level and config schema. */
function policyOf(rule: Rule) {
  return {
    name: rule.name,
    description: rule.description,
    enforcementLevel: DEFAULT_LEVEL,
    configSchema: configSchema(rule),
  };
}

function resourcePolicy(rule: Rule): ResourceValidationPolicy {
  return {
    ...policyOf(rule),
    validateResource: (args, reportViolation) => {
      const kind = kindOf(args.type);
      if (!kind) return;
      remember(args.urn, kind, args.props);
      if (!rule.kinds.includes(kind)) return;
      const agent: PolicyAgent = { key: args.name, kind, config: args.props.config };
      for (const finding of rule.check(agent, ruleSettings(rule, args.getConfig()) as never)) {
        reportViolation(violationMessage(args.name, finding));
      }
    },
  };
}

function stackPolicy(rule: Rule): StackValidationPolicy {
  return {
    ...policyOf(rule),
    validateStack: (args, reportViolation) => {
      const settings = ruleSettings(rule, args.getConfig());
      for (const resource of args.resources) {
        const kind = kindOf(resource.type);
        if (!kind || !rule.kinds.includes(kind)) continue;
        const agent: PolicyAgent = { key: resource.name, kind, config: undefined, linked: linkedOf(resource) };
        for (const finding of rule.check(agent, settings as never)) {
          reportViolation(violationMessage(resource.name, finding), resource.urn);
        }
      }
    },
  };
}

/** The procedural agents whose ids flow into `postprocess_agents` (known even before they exist). */
function linkedOf(resource: PolicyResource) {
  const sources = resource.propertyDependencies.postprocess_agents ?? [];
  return sources
    .filter((source) => source.type === TYPES.procedural)
    .map((source) => ({ key: source.name, name: names.get(source.urn) }));
}

/** Serves the pack: call once, from the pack's entry (policy/index.js). */
export function servePolicyPack(): PolicyPack {
  return new PolicyPack(PACK_NAME, {
    description: "agent-iac org rules for conversational and procedural agents",
    policies: RULES.map((rule) => (rule.scope === "links" ? stackPolicy(rule) : resourcePolicy(rule))),
  });
}
