// The policy configuration: the same JSON file `pulumi preview --policy-pack-config FILE` takes,
// read the way Pulumi reads it. Each key is a rule's name (or "all"); its value is an enforcement
// level, or an object with an optional `enforcementLevel` and the rule's settings.
import { z } from "zod";
import { ConfigError } from "../errors/index.ts";
import { RULES, type Rule } from "./rules.ts";

export type EnforcementLevel = "advisory" | "mandatory" | "disabled";
/** Every rule's level when neither its own entry nor "all" sets one. */
export const DEFAULT_LEVEL: EnforcementLevel = "advisory";

const level = z.enum(["advisory", "mandatory", "remediate", "disabled"]);

export type RuleSetup = { rule: Rule; level: EnforcementLevel; settings: Record<string, unknown> };

/** A policy config problem: the rule's key and what is wrong with it. */
export class PolicyConfigError extends ConfigError {
  override name = "PolicyConfigError";
}

/** "remediate" has nothing to remediate here: like Pulumi for a violation it cannot fix, it counts as mandatory. */
function effective(value: z.infer<typeof level>): EnforcementLevel {
  return value === "remediate" ? "mandatory" : value;
}

/** A rule's settings with their defaults applied (what both the pack and validate evaluate with). */
export function ruleSettings(rule: Rule, raw: unknown): Record<string, unknown> {
  const { enforcementLevel: _level, ...rest } = (typeof raw === "object" && raw !== null ? raw : {}) as Record<
    string,
    unknown
  >;
  const parsed = rule.settings.strict().safeParse(rest);
  if (!parsed.success)
    throw new PolicyConfigError(`${rule.name}: ${z.prettifyError(parsed.error).replace(/\n/g, " ")}`);
  return parsed.data as Record<string, unknown>;
}

/** Every rule with its level and settings under a parsed policy config (`{}`: the defaults). */
export function ruleSetups(config: unknown): RuleSetup[] {
  if (typeof config !== "object" || config === null || Array.isArray(config)) {
    throw new PolicyConfigError("the policy config must be a JSON object keyed by rule name");
  }
  const entries = config as Record<string, unknown>;
  const known = new Set(RULES.map((rule) => rule.name));
  for (const key of Object.keys(entries)) {
    if (key !== "all" && !known.has(key)) {
      throw new PolicyConfigError(
        `unknown rule ${JSON.stringify(key.length > 80 ? `${key.slice(0, 79)}…` : key)} (the rules: ${[...known].join(", ")})`,
      );
    }
  }
  for (const [key, value] of Object.entries(entries)) {
    // What `pulumi preview --policy-pack-config` refuses, refused here too.
    if (typeof value !== "string" && (typeof value !== "object" || value === null || Array.isArray(value))) {
      throw new PolicyConfigError(
        `${key}: ${JSON.stringify(value)?.slice(0, 80)} is not a valid value: give an enforcement level (advisory, mandatory or disabled) or an object`,
      );
    }
    if (key === "all" && typeof value === "object") {
      const other = Object.keys(value).filter((k) => k !== "enforcementLevel");
      if (other.length > 0) {
        throw new PolicyConfigError(
          `all: only enforcementLevel can be set for all rules, not ${other.map((k) => JSON.stringify(k.slice(0, 80))).join(", ")}`,
        );
      }
    }
  }
  const levelOf = (key: string, value: unknown): EnforcementLevel | undefined => {
    if (value === undefined) return undefined;
    if (typeof value === "object" && !Object.hasOwn(value as object, "enforcementLevel")) return undefined;
    const raw = typeof value === "string" ? value : (value as { enforcementLevel: unknown }).enforcementLevel;
    const parsed = level.safeParse(raw);
    if (!parsed.success)
      throw new PolicyConfigError(`${key}: enforcementLevel must be advisory, mandatory or disabled`);
    return effective(parsed.data);
  };
  const all = levelOf("all", entries.all);
  return RULES.map((rule) => {
    const entry = entries[rule.name];
    return {
      rule,
      level: levelOf(rule.name, entry) ?? all ?? DEFAULT_LEVEL,
      settings: ruleSettings(rule, typeof entry === "object" ? entry : {}),
    };
  });
}

/** A rule's settings as the JSON Schema a policy's `configSchema` takes (Pulumi validates the config file with it). */
export function configSchema(rule: Rule): { properties: Record<string, never>; required?: string[] } {
  const schema = z.toJSONSchema(rule.settings, { io: "input" }) as {
    properties?: Record<string, never>;
    required?: string[];
  };
  return { properties: schema.properties ?? {}, ...(schema.required?.length ? { required: schema.required } : {}) };
}
