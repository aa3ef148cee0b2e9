// The org rules for agents: one implementation, two callers (the Pulumi policy pack in ./pack.ts,
// and `agent-iac validate --policy` on the agent files). A rule sees an agent's request body (what
// is sent) and, for the link rule, the procedural agents it links; it returns findings with the
// field's path, the offending value as shown (never a secret: hosts, not whole URLs; masked matches)
// and how to fix it. Pure: zod and plain data only, so `validate` stays fast and offline.
import { z } from "zod";
import { forbiddenMatches, forbiddenSettings } from "./patterns.ts";

export type AgentKind = "conversational" | "procedural";
export type PathSegment = string | number;

/** An agent as a rule sees it. */
export type PolicyAgent = {
  /** The agent's key: its file name, and its resource's name. */
  key: string;
  kind: AgentKind;
  /** The agent's `config`, exactly as sent. */
  config: unknown;
  /** Conversational agents: the procedural agents it links, by key and (where known) name. */
  linked?: { key: string; name?: string | undefined }[];
};

export type Finding = {
  rule: string;
  path: PathSegment[];
  /** The offending value as shown in the message. */
  value: string;
  problem: string;
  fix: string;
  /** For a match inside a text field: where it starts (validate turns it into a line). */
  offset?: number;
};

export type Rule = {
  /** Stable kebab-case name: what the policy config file keys. */
  name: string;
  description: string;
  kinds: readonly AgentKind[];
  /** "links" rules need every agent of the stack (in the pack: a stack policy). */
  scope: "agent" | "links";
  /** The rule's settings (besides enforcementLevel), with their defaults. */
  settings: z.ZodObject;
  check(agent: PolicyAgent, settings: never): Finding[];
};

/** An allow-list: at most MAX_LISTED patterns of at most 256 characters (a config is not a database). */
const MAX_LISTED = 1000;
const patternList = z.array(z.string().min(1).max(256)).max(MAX_LISTED);

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function at(value: unknown, path: readonly PathSegment[]): unknown {
  let current = value;
  for (const segment of path) {
    if (Array.isArray(current) && typeof segment === "number") current = current[segment];
    else if (isRecord(current) && typeof segment === "string") current = current[segment];
    else return undefined;
  }
  return current;
}

/**
 * `openai/*` → a whole-string match with `*` as any run of characters. Linear in the value's length
 * per `*`-free part (no regular expression: a glob of many `*` cannot backtrack).
 */
function globMatches(pattern: string, value: string, ignoreCase = false): boolean {
  const fold = (text: string) => (ignoreCase ? text.toLowerCase() : text);
  const parts = fold(pattern).split("*");
  const text = fold(value);
  const first = parts[0] ?? "";
  if (parts.length === 1) return text === first;
  const last = parts.at(-1) ?? "";
  if (text.length < first.length + last.length || !text.startsWith(first) || !text.endsWith(last)) return false;
  const end = text.length - last.length;
  let at = first.length;
  for (const part of parts.slice(1, -1)) {
    if (part === "") continue;
    const found = text.indexOf(part, at);
    if (found < 0 || found + part.length > end) return false;
    at = found + part.length;
  }
  return true;
}

/** A value for a message: JSON-quoted and clipped. */
function shown(value: unknown): string {
  const text = typeof value === "string" ? value : JSON.stringify(value);
  const clipped = text.length > 80 ? `${text.slice(0, 79)}…` : text;
  return typeof value === "string" ? JSON.stringify(clipped) : clipped;
}

/** A list for a message: the first ten, then how many more. */
const listed = (items: readonly string[]) =>
  items.length > 10 ? `${items.slice(0, 10).join(", ")} and ${items.length - 10} more` : items.join(", ");
const configHint = (rule: string, key: string) => `add it to ${rule}.${key} in the stack's policy config`;

/** A value an allow-list rule checks: where it is in the config, as matched, and as shown. */
type Listed = { path: PathSegment[]; value: string; shownAs?: string };

/** A rule that accepts only values matching its config's `allowed` patterns (everything when unset). */
function allowListRule(spec: {
  name: string;
  description: string;
  kinds: readonly AgentKind[];
  /** What a value is, in "is not an approved …". */
  noun: string;
  /** How to fix it, before ", or add it to … allowed". */
  fix: string;
  ignoreCase?: boolean;
  values(config: unknown): Listed[];
}): Rule {
  return {
    name: spec.name,
    description: spec.description,
    kinds: spec.kinds,
    scope: "agent",
    settings: z.object({ allowed: patternList.optional() }),
    check(agent, settings: { allowed?: string[] }) {
      const allowed = settings.allowed;
      if (!allowed) return [];
      return spec
        .values(agent.config)
        .filter(({ value }) => !allowed.some((pattern) => globMatches(pattern, value, spec.ignoreCase)))
        .map(({ path, value, shownAs }) => ({
          rule: spec.name,
          path: ["config", ...path],
          value: shownAs ?? shown(value),
          problem: `is not an approved ${spec.noun} (allowed: ${listed(allowed)})`,
          fix: `${spec.fix}, or ${configHint(spec.name, "allowed")}`,
        }));
    },
  };
}

const allowedModels = allowListRule({
  name: "agent-allowed-models",
  description:
    "Agents use only approved models (config `allowed`: patterns such as `openai/*`; all allowed when unset).",
  kinds: ["conversational", "procedural"],
  noun: "model",
  fix: "use a model matching one of the allowed patterns",
  values(config) {
    const model = at(config, ["runtime", "model"]);
    return typeof model === "string" ? [{ path: ["runtime", "model"], value: model }] : [];
  },
});

const allowedTools = allowListRule({
  name: "agent-allowed-tools",
  description:
    "Agents call only approved tools (config `allowed`: `<ns>/<name>` patterns such as `syscall/*`; all allowed when unset).",
  kinds: ["conversational", "procedural"],
  noun: "tool",
  fix: "remove the tool",
  values(config) {
    const tools = at(config, ["tool", "tools"]);
    return (Array.isArray(tools) ? tools : []).flatMap((tool, i): Listed[] =>
      isRecord(tool) && typeof tool.ns === "string" && typeof tool.name === "string"
        ? [{ path: ["tool", "tools", i], value: `${tool.ns}/${tool.name}` }]
        : [],
    );
  },
});

const allowedLanguages = allowListRule({
  name: "agent-allowed-languages",
  description:
    "Conversational agents speak only approved languages: default and supported (config `allowed`, case-insensitive; all allowed when unset).",
  kinds: ["conversational"],
  noun: "language",
  fix: "use an allowed language",
  ignoreCase: true,
  values(config) {
    const language = at(config, ["language"]);
    if (!isRecord(language)) return [];
    const supported = Array.isArray(language.supported_languages) ? language.supported_languages : [];
    return [
      ...(typeof language.default_language === "string"
        ? [{ path: ["language", "default_language"], value: language.default_language }]
        : []),
      ...supported.flatMap((item, i): Listed[] =>
        typeof item === "string" ? [{ path: ["language", "supported_languages", i], value: item }] : [],
      ),
    ];
  },
});

const voicemail: Rule = {
  name: "agent-voicemail",
  description:
    "Conversational agents set voicemail as the line of business requires (config `required`: true or false; not checked when unset).",
  kinds: ["conversational"],
  scope: "agent",
  settings: z.object({ required: z.boolean().optional() }),
  check(agent, settings: { required?: boolean }) {
    if (settings.required === undefined) return [];
    const value = at(agent.config, ["channel", "is_voicemail_enabled"]);
    if (value === settings.required) return [];
    const want = settings.required ? "on" : "off";
    return [
      {
        rule: this.name,
        path: ["config", "channel", "is_voicemail_enabled"],
        value: value === undefined ? "(not set)" : shown(value),
        problem: `voicemail must be ${want} for this stack${value === undefined ? " and set explicitly (the service's default is not documented)" : ""}`,
        fix: `set config.channel.is_voicemail_enabled: ${settings.required}`,
      },
    ];
  },
};

const promptLength: Rule = {
  name: "agent-prompt-length",
  description: "Prompt texts stay within length bounds in characters (config `min`, `max`; not checked when unset).",
  kinds: ["conversational", "procedural"],
  scope: "agent",
  settings: z.object({ min: z.int().min(0).optional(), max: z.int().min(1).optional() }),
  check(agent, settings: { min?: number; max?: number }) {
    const text = at(agent.config, ["runtime", "prompt", "text"]);
    if (typeof text !== "string") return [];
    const length = [...text].length;
    const { min, max } = settings;
    const outside =
      min !== undefined && length < min
        ? `shorter than ${min}`
        : max !== undefined && length > max
          ? `longer than ${max}`
          : "";
    if (!outside) return [];
    return [
      {
        rule: this.name,
        path: ["config", "runtime", "prompt", "text"],
        value: `(${length} characters)`,
        problem: `the prompt is ${outside} characters`,
        fix: `bring the prompt within ${min ?? 0}–${max ?? "∞"} characters, or change ${this.name}'s bounds`,
      },
    ];
  },
};

const forbiddenPatterns: Rule = {
  name: "agent-prompt-forbidden-patterns",
  description:
    "Prompts hold no phone numbers, e-mail addresses or card-like numbers (on by default; config `patterns` adds named regular expressions, `replaceDefaults: true` drops the built-in ones).",
  kinds: ["conversational", "procedural"],
  scope: "agent",
  settings: forbiddenSettings,
  check(agent, settings: z.infer<typeof forbiddenSettings>) {
    const text = at(agent.config, ["runtime", "prompt", "text"]);
    if (typeof text !== "string") return [];
    return forbiddenMatches(text, settings).map((match) => ({
      rule: this.name,
      path: ["config", "runtime", "prompt", "text"],
      value: match.masked,
      problem: match.problem ?? `the prompt contains ${match.what}`,
      fix: match.problem
        ? "rewrite the pattern in the policy config without nested repetition (or drop it)"
        : "take it out of the prompt: pass such values per conversation as a variable (config.runtime.variables) or keep them in the service's own settings",
      offset: match.offset,
    }));
  },
};

const postUrlHosts: Rule = {
  name: "procedure-post-url-hosts",
  description:
    "Procedural agents post results only over https to listed hosts (config `hosts`: names, `*.example.com` allowed; not checked when unset; `httpsOnly` default true).",
  kinds: ["procedural"],
  scope: "agent",
  settings: z.object({ hosts: patternList.optional(), httpsOnly: z.boolean().default(true) }),
  check(agent, settings: { hosts?: string[]; httpsOnly: boolean }) {
    const url = at(agent.config, ["output", "post_url"]);
    const hosts = settings.hosts;
    if (!hosts || typeof url !== "string") return [];
    const path = ["config", "output", "post_url"];
    let parsed: URL;
    try {
      parsed = new URL(url);
    } catch {
      return [{ rule: this.name, path, value: "(not a URL)", problem: "is not a URL", fix: "give an https URL" }];
    }
    // Only scheme and host are shown: a path or query may carry a token.
    const value = shown(`${parsed.protocol}//${parsed.host}`);
    const findings: Finding[] = [];
    if (settings.httpsOnly && parsed.protocol !== "https:") {
      findings.push({
        rule: this.name,
        path,
        value,
        problem: "results must be posted over https",
        fix: "use an https:// URL",
      });
    }
    if (!hosts.some((pattern) => globMatches(pattern, parsed.hostname, true))) {
      findings.push({
        rule: this.name,
        path,
        value,
        problem: `posts to a host that is not listed (hosts: ${listed(hosts)})`,
        fix: `post to one of the listed hosts, or ${configHint(this.name, "hosts")}`,
      });
    }
    return findings;
  },
};

const chatChannel = allowListRule({
  name: "agent-chat-channel",
  description:
    "Procedural agents post to approved chat channels only (config `allowed`: values; not checked when unset).",
  kinds: ["procedural"],
  noun: "chat channel",
  fix: "post to an allowed channel",
  values(config) {
    const channel = at(config, ["output", "chat_channel"]);
    if (channel === undefined || channel === null) return [];
    const value = typeof channel === "string" ? channel : JSON.stringify(channel);
    return [{ path: ["output", "chat_channel"], value, shownAs: shown(channel) }];
  },
});

const requiredProcedures: Rule = {
  name: "agent-required-procedures",
  description:
    "Conversational agents link the required procedural agents (config `required`: keys or names; `agents`: key patterns it applies to, default all).",
  kinds: ["conversational"],
  scope: "links",
  settings: z.object({ required: patternList.optional(), agents: patternList.optional() }),
  check(agent, settings: { required?: string[]; agents?: string[] }) {
    const { required, agents } = settings;
    if (!required || !agent.linked) return [];
    if (agents && !agents.some((pattern) => globMatches(pattern, agent.key))) return [];
    const linked = agent.linked;
    const missing = required.filter((want) => !linked.some((link) => link.key === want || link.name === want));
    if (missing.length === 0) return [];
    const have = linked.map((link) => link.key);
    return [
      {
        rule: this.name,
        path: ["postprocess_agents"],
        value: shown(have.length > 0 ? have.join(", ") : "(none)"),
        problem: `does not link the required procedural agent(s) ${listed(missing)}`,
        fix: `add ${listed(missing)} to postprocess_agents`,
      },
    ];
  },
};

/** Every rule, in the order they report. */
export const RULES: readonly Rule[] = [
  allowedModels,
  allowedTools,
  allowedLanguages,
  voicemail,
  promptLength,
  forbiddenPatterns,
  postUrlHosts,
  chatChannel,
  requiredProcedures,
];

/** A finding as both callers say it: the agent, the field, the value, the problem and the fix. */
export function violationMessage(agentKey: string, finding: Finding): string {
  return `agent ${JSON.stringify(agentKey)}: ${fieldPath(finding.path)} ${finding.value}: ${finding.problem}. Fix: ${finding.fix}.`;
}

/** The dotted field path of a finding (`config.runtime.model`, `config.tool.tools[1]`). */
export function fieldPath(path: readonly PathSegment[]): string {
  return path.map((s, i) => (typeof s === "number" ? `[${s}]` : i === 0 ? s : `.${s}`)).join("");
}
