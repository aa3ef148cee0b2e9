// The agent file format (`agents/<key>.yaml`) as zod schemas, built from the service's own config
// schemas (src/contract/index.ts) so a file says exactly what is sent. The only additions are the
// file-level keys (kind, postprocess_agents, protect, smoke) and `prompt.file`, which the loader
// replaces by the file's text. The JSON Schema for editors is generated from the same objects.
import { z } from "zod";
import {
  conversationalAgentConfig,
  modelName,
  proceduralAgentConfig,
  TRANSPORTS,
  type Transport,
} from "../contract/index.ts";
import { DEFAULT_MAX_VOTES, defaultMargin, fewestCalls } from "../stats/index.ts";
import { regexProblem } from "./patterns.ts";

/** The cap of a sequential test without max_iterations. */
const DEFAULT_MAX_ITERATIONS = 50;

/**
 * How old versus new is decided for the scenario: `fixed` (its iterations on each side, a Fisher
 * test) or `sequential` (pairs until regressed, no worse or the cap; see src/stats/paired.ts).
 * The defaults of the sequential comparison: a drop of 0.1 in pass rate is "worse"; 40 pairs at
 * most (at α 0.05 "no worse" by a margin of 0.1 needs 32 pairs that all pass on both sides).
 */
export const COMPARE_DEFAULTS = { margin: 0.1, maxPairs: 40 } as const;

const compareRuleSchema = z
  .union([
    z.enum(["fixed", "sequential"]),
    z.strictObject({
      rule: z.enum(["fixed", "sequential"]).default("sequential"),
      max_pairs: z.int().min(2).max(500).optional(),
      margin: z.number().gt(0).lt(1).optional(),
    }),
  ])
  .transform((value) => (typeof value === "string" ? { rule: value } : value))
  .meta({
    description: `Old versus new (smoke --compare, start): fixed (default: the iterations on each side, Fisher's test) or sequential (pairs of calls until regressed, no worse or, at max_pairs, inconclusive); as {rule, max_pairs (default ${COMPARE_DEFAULTS.maxPairs}), margin (default ${COMPARE_DEFAULTS.margin}: the pass-rate drop still "no worse")}.`,
  });

/** An agent key: the file name and the Pulumi resource name. */
export const KEY_PATTERN = /^[a-z0-9]+(?:-[a-z0-9]+)*$/;
export const agentKey = z
  .string()
  .max(100, "must be at most 100 characters")
  .regex(KEY_PATTERN, "must be an agent key: lowercase letters, digits and single dashes (the agent's file name)");

/**
 * Characters that do not show (zero-width, soft hyphen, byte order mark, tags, variation selectors)
 * or that reorder the text around them (bidirectional controls): in an id, a model or a tool name
 * they make two values that look identical differ, or make one look like another.
 */
const INVISIBLE = /[\p{Cc}\p{Cf}\p{Default_Ignorable_Code_Point}\p{Bidi_Control}]/u;

function invisibleProblem(value: string): string | undefined {
  const match = INVISIBLE.exec(value);
  if (!match) return undefined;
  const code = (match[0].codePointAt(0) ?? 0).toString(16).toUpperCase().padStart(4, "0");
  return `contains an invisible or text-direction character (U+${code}) at position ${match.index + 1}: type the value again without it`;
}

/**
 * An agent's name is shown to people (lists, plans, the service's console): control characters (NUL,
 * line breaks) and text-direction controls (U+202E) make it read as something it is not. Joiners and
 * variation selectors stay allowed: emoji use them.
 */
const NAME_HAZARD = /[\p{Cc}\p{Bidi_Control}]/u;

export const agentName = z
  .string()
  .min(1, "must not be empty")
  .superRefine((value, ctx) => {
    const match = NAME_HAZARD.exec(value);
    if (!match) return;
    const code = (match[0].codePointAt(0) ?? 0).toString(16).toUpperCase().padStart(4, "0");
    ctx.addIssue({
      code: "custom",
      message: `contains a control or text-direction character (U+${code}) at position ${match.index + 1}: type the name again without it`,
    });
  });

/** A name or id that must be exactly what it looks like. */
const visibleText = (schema: z.ZodString) =>
  schema.superRefine((value, ctx) => {
    const problem = invisibleProblem(value);
    if (problem) ctx.addIssue({ code: "custom", message: problem });
  });

const textPattern = z
  .string()
  .min(1, "must not be empty")
  .superRefine((value, ctx) => {
    const problem = regexProblem(value);
    if (problem) ctx.addIssue({ code: "custom", message: problem });
  })
  .meta({ description: 'A case-insensitive phrase, or "/regex/flags".' });

/** `prompt` as written in a file: inline `text`, or a `file` relative to the YAML file. */
const filePrompt = z
  .strictObject({
    type: z.string().meta({ description: 'Prompt type; "fixed" is the documented value.' }),
    text: z.string().optional().meta({ description: "The prompt text, sent as written." }),
    file: z
      .string()
      .optional()
      .meta({ description: "A text file relative to this YAML file; its exact content is sent as `text`." }),
  })
  .superRefine((value, ctx) => {
    if (value.text !== undefined && value.file !== undefined) {
      ctx.addIssue({ code: "custom", path: ["file"], message: "give either text or file, not both" });
    } else if (value.text === undefined && value.file === undefined) {
      ctx.addIssue({ code: "custom", path: ["text"], message: "required: give the prompt as text or as a file" });
    } else if (value.text !== undefined && value.text.trim() === "") {
      ctx.addIssue({ code: "custom", path: ["text"], message: "the prompt is empty" });
    } else if (value.file !== undefined && value.file.trim() === "") {
      ctx.addIssue({ code: "custom", path: ["file"], message: "must name a prompt file" });
    }
  });

const conversationalRuntime = conversationalAgentConfig.shape.runtime.unwrap();
const proceduralRuntime = proceduralAgentConfig.shape.runtime.unwrap();

const toolsBlock = conversationalAgentConfig.shape.tool.unwrap();
const toolItem = toolsBlock.shape.tools.unwrap().element;
const transferItem = toolsBlock.shape.transfers.unwrap().element;
const personaItem = conversationalAgentConfig.shape.personas.unwrap().element;
const personaVoice = personaItem.shape.voice.unwrap();

// Models, tool names and namespaces, transfer and voice ids: refused with invisible characters.
const visibleTools = z
  .array(toolItem.extend({ ns: visibleText(toolItem.shape.ns), name: visibleText(toolItem.shape.name) }))
  .optional();
const visibleModel = visibleText(modelName).optional();

export const conversationalConfigFile = conversationalAgentConfig.extend({
  personas: z
    .array(
      personaItem.extend({
        voice: personaVoice.extend({ id: visibleText(personaVoice.shape.id) }).optional(),
      }),
    )
    .optional(),
  runtime: conversationalRuntime.extend({ model: visibleModel, prompt: filePrompt.optional() }).optional(),
  tool: toolsBlock
    .extend({
      tools: visibleTools,
      transfers: z.array(transferItem.extend({ id: visibleText(transferItem.shape.id) })).optional(),
    })
    .optional(),
});
const proceduralConfigFile = proceduralAgentConfig.extend({
  runtime: proceduralRuntime.extend({ model: visibleModel, prompt: filePrompt.optional() }).optional(),
  tool: proceduralAgentConfig.shape.tool.unwrap().extend({ tools: visibleTools }).optional(),
});

const argumentMatchers = z
  .record(z.string(), z.unknown())
  .superRefine((value, ctx) => {
    for (const [name, expected] of Object.entries(value)) {
      const problem = typeof expected === "string" ? regexProblem(expected) : undefined;
      if (problem) ctx.addIssue({ code: "custom", path: [name], message: problem });
    }
  })
  .meta({ description: 'Argument name → exact value, or "/regex/flags" matched against the argument.' });

/** Votes of a judged rubric: odd (a majority always exists), default 3. */
export const DEFAULT_JUDGE_VOTES = 3;
const oddVotes = z
  .int()
  .min(1)
  .max(15)
  .refine((n) => n % 2 === 1, "must be odd (1, 3, 5 …): a majority of the votes decides");
const judgeVotes = z.union([oddVotes, z.literal("auto")]).meta({
  description: `Independent judge requests; the majority decides (odd, default 3), or auto: asked until the verdict is settled at 95 % or max_votes (default ${DEFAULT_MAX_VOTES}).`,
});

/** A judged expectation: a sentence the judge model checks the transcript against. */
export const judgeRubric = z
  .union([
    z.string().trim().min(1, "must not be empty"),
    z
      .strictObject({
        rubric: z.string().trim().min(1, "must not be empty"),
        votes: judgeVotes.optional(),
        max_votes: oddVotes
          .optional()
          .meta({ description: `With votes: auto, the most votes asked (odd, default ${DEFAULT_MAX_VOTES}).` }),
      })
      .refine((item) => item.max_votes === undefined || item.votes === "auto", {
        path: ["max_votes"],
        message: "max_votes belongs to adaptive votes: give votes: auto too",
      }),
  ])
  .meta({ description: "A rubric sentence, or {rubric, votes}." });

const expectations = z.strictObject({
  judge: z.array(judgeRubric).optional().meta({
    description:
      "Rubrics a judge model (agents:judgeBaseUrl, agents:judgeModel) checks the transcript against; the transcript is sent to that endpoint.",
  }),
  says: z.array(textPattern).optional().meta({ description: "Phrases some completed agent message must match." }),
  never_says: z.array(textPattern).optional().meta({ description: "Phrases no agent message may match." }),
  tool_calls: z
    .array(
      z.union([
        visibleText(z.string().min(1)),
        z.strictObject({ name: visibleText(z.string().min(1)), arguments: argumentMatchers.optional() }),
      ]),
    )
    .optional()
    .meta({ description: "Tools that must be called: a name, or {name, arguments}." }),
  no_errors: z.boolean().default(true).meta({ description: "No server.error event (default true)." }),
  ends: z.boolean().default(true).meta({ description: "conversation.ended within the timeout (default true)." }),
  max_duration_sec: z.number().positive().optional(),
  procedures: z
    .record(agentKey, z.string().min(1))
    .optional()
    .meta({ description: "Procedural agent key (linked in postprocess_agents) → expected terminal status." }),
  latency: z
    .strictObject({
      first_response_ms: z.number().positive().optional(),
      response_p50_ms: z.number().positive().optional(),
      response_p95_ms: z.number().positive().optional(),
      tool_ms: z.number().positive().optional(),
    })
    .optional()
    .meta({
      description:
        "Upper bounds in ms, over all iterations: first_response_ms and tool_ms on their 95th percentile, response_p50_ms/response_p95_ms on every user turn's response latency.",
    }),
});

/** A judged rubric with its votes: `votes` asked, or with `auto` at most `votes` (the budget counts that). */
export type JudgeRubric = { rubric: string; votes: number; auto: boolean };

/** A scenario's judged rubrics, each with its votes (default 3). */
export function judgeRubrics(expect: { judge?: z.input<typeof judgeRubric>[] | undefined }): JudgeRubric[] {
  return (expect.judge ?? []).map((item) => {
    if (typeof item === "string") return { rubric: item.trim(), votes: DEFAULT_JUDGE_VOTES, auto: false };
    const auto = item.votes === "auto";
    const votes = item.votes === "auto" ? (item.max_votes ?? DEFAULT_MAX_VOTES) : (item.votes ?? DEFAULT_JUDGE_VOTES);
    return { rubric: item.rubric.trim(), votes, auto };
  });
}

/** The rubric of a persona caller's fidelity check, worded so a judge reads it like any other (and the cache keys on it). */
const CALLER_CHECK_PREFIX = "the caller (the lines marked caller:)";

/**
 * The judge's check of a persona caller (`caller.check`, default on): whether it stayed in its
 * persona and pursued its goal. None for a scripted caller, no caller, or `check: false`.
 */
export function callerCheckRubric(scenario: {
  caller?: { persona?: string | undefined; goal?: string | undefined; check?: boolean | undefined } | undefined;
}): JudgeRubric | undefined {
  const caller = scenario.caller;
  if (!caller?.persona || caller.check === false) return undefined;
  const goal = caller.goal ? `pursues its goal (${caller.goal})` : "pursues the conversation";
  return {
    rubric: `${CALLER_CHECK_PREFIX} stays in its persona (${caller.persona}) and ${goal}, without ending the call before the goal is reached or refused`,
    votes: DEFAULT_JUDGE_VOTES,
    auto: false,
  };
}

/** The latency bounds of a scenario (`expect.latency`). */
export type LatencyBounds = NonNullable<z.output<typeof expectations>["latency"]>;

/** Longest persona conversation (caller lines) a scenario may ask for. */
const MAX_CALLER_TURNS = 50;
/** A persona's most lines when the scenario gives no max_turns. */
export const DEFAULT_PERSONA_TURNS = 8;
/** Most rephrasings of a scripted caller's turns (`caller.variations`): one model answer holds them all. */
const MAX_VARIATIONS = 20;

const callerTurn = z.union([
  z
    .string()
    .min(1, "must not be empty")
    .meta({ description: "A line the caller says when the agent has finished its turn." }),
  z.strictObject({
    say: z.string().min(1, "must not be empty").meta({ description: "The caller's line." }),
    after: textPattern.meta({
      description:
        'Said only once the agent has said this (a case-insensitive phrase or "/regex/flags"); the call ends, failed, if it never does.',
    }),
  }),
]);

/** The caller side of a scenario: scripted `turns`, or a `persona` played by a model. Needs `transport: ws`. */
const callerSchema = z
  .strictObject({
    turns: z.array(callerTurn).min(1, "give at least one turn").max(MAX_CALLER_TURNS).optional().meta({
      description:
        "The caller's lines in order, each sent as a control message on the session when the agent has finished its turn.",
    }),
    persona: z.string().min(1, "must not be empty").optional().meta({
      description: "Who the caller is: a model (agents:callerModel) plays them and writes each line.",
    }),
    goal: z
      .string()
      .min(1, "must not be empty")
      .optional()
      .meta({ description: "What the persona wants from the call." }),
    max_turns: z
      .int()
      .min(1)
      .max(MAX_CALLER_TURNS)
      .optional()
      .meta({
        description: `The most lines the persona says (default ${DEFAULT_PERSONA_TURNS}); the budget counts this worst case.`,
      }),
    check: z.boolean().optional().meta({
      description:
        "Whether the judge (when one is configured) checks after each call that the persona stayed in character and pursued its goal (default true); a call whose caller did not is inconclusive, the caller's fault, and re-placed.",
    }),
    variations: z.int().min(1).max(MAX_VARIATIONS).optional().meta({
      description:
        "With turns: the caller's model (agents:callerModel) rephrases each turn this many ways, one request per scenario per run; call i (iteration or comparison pair) says rephrasing (i − 1) mod N of every turn, `after` kept. Recorded with the call: --replay needs no model.",
    }),
  })
  .superRefine((caller, ctx) => {
    const problem = (path: string, message: string) => ctx.addIssue({ code: "custom", path: [path], message });
    if (caller.turns && caller.persona) problem("persona", "give caller.turns or caller.persona, not both");
    if (!caller.turns && !caller.persona)
      problem("turns", "give the caller's turns (caller.turns) or a persona (caller.persona)");
    if (caller.persona === undefined) {
      if (caller.goal !== undefined) problem("goal", "goal belongs to a persona: give caller.persona too");
      if (caller.max_turns !== undefined)
        problem("max_turns", "max_turns belongs to a persona: give caller.persona too");
      if (caller.check !== undefined) problem("check", "check belongs to a persona: give caller.persona too");
    }
    if (caller.variations !== undefined && caller.turns === undefined) {
      problem("variations", "variations rephrase scripted turns: give caller.turns (a persona words its own lines)");
    }
  })
  .meta({ description: "Who plays the caller over the session (needs transport: ws): scripted turns or a persona." });

/** A scenario's caller, as validated. */
export type CallerSpec = z.output<typeof callerSchema>;

export const smokeScenario = z
  .strictObject({
    name: z.string().min(1, "must not be empty"),
    channel: z.strictObject({
      callee_no: z.string().min(1, "must not be empty"),
      caller_no: z.string().nullable().optional(),
      priority: z.string().optional(),
    }),
    livemode: z.boolean().default(false).meta({ description: "Place a live call (needs --live). Default false." }),
    context: z.record(z.string(), z.unknown()).optional(),
    override_config: conversationalConfigFile.optional(),
    transport: z.enum(TRANSPORTS).default("sse"),
    caller: callerSchema.optional(),
    timeout: z.number().positive().max(3600).default(120).meta({ description: "Seconds (default 120)." }),
    iterations: z.int().min(1).max(100).default(1),
    min_pass: z
      .int()
      .min(1)
      .optional()
      .meta({ description: "Iterations that must pass (default: all); a pass with failing iterations is flaky." }),
    pass_rate: z
      .number()
      .gt(0)
      .max(1)
      .optional()
      .meta({ description: "Share of iterations that must pass (0–1], rounded up; instead of min_pass." }),
    confidence: z.number().gt(0.5).lt(1).optional().meta({
      description:
        "With pass_rate: a sequential test (calls in rounds until passed, failed or, at max_iterations, inconclusive); 1 − confidence is its false-pass and false-fail rate.",
    }),
    max_iterations: z
      .int()
      .min(1)
      .max(1000)
      .optional()
      .meta({
        description: `With confidence: the cap on calls (default ${DEFAULT_MAX_ITERATIONS}); undecided there is inconclusive.`,
      }),
    margin: z.number().gt(0).lt(0.5).optional().meta({
      description:
        "With confidence: the indifference margin δ around pass_rate (default min(0.05, pass_rate/2, (1 − pass_rate)/2)); rates within ±δ may end either way or inconclusive.",
    }),
    compare: compareRuleSchema.optional(),
    pass_k: z
      .strictObject({ k: z.int().min(1), min: z.number().gt(0).max(1) })
      .optional()
      .meta({
        description: "Require pass^k (the chance k calls in a row all pass, estimated from the repeats) ≥ min.",
      }),
    expect: expectations.default({ no_errors: true, ends: true }),
    judge_min_agreement: z.number().gt(0).max(1).optional().meta({
      description:
        "Each judged rubric's last measured agreement with human labels (`agent-iac judge check`) must be at least this (0–1].",
    }),
    judge_min_kappa: z.number().gt(0).max(1).optional().meta({
      description:
        "Each judged rubric's measured kappa (`agent-iac judge check`): its 95 % interval's lower bound must be at least this (0–1].",
    }),
  })
  .superRefine(checkScenario)
  // A sequential test plans its cap: every count of planned calls (budget, dry run) is the worst case.
  .transform((scenario) =>
    scenario.confidence === undefined
      ? scenario
      : { ...scenario, iterations: scenario.max_iterations ?? DEFAULT_MAX_ITERATIONS },
  );

type ScenarioCheck = {
  iterations: number;
  min_pass?: number | undefined;
  pass_rate?: number | undefined;
  confidence?: number | undefined;
  max_iterations?: number | undefined;
  margin?: number | undefined;
  pass_k?: { k: number; min: number } | undefined;
  judge_min_agreement?: number | undefined;
  judge_min_kappa?: number | undefined;
  expect: { judge?: unknown[] | undefined };
  transport: Transport;
  caller?: unknown;
};

function checkScenario(scenario: ScenarioCheck, ctx: z.core.$RefinementCtx<ScenarioCheck>): void {
  const problem = (path: string, message: string) => ctx.addIssue({ code: "custom", path: [path], message });
  if (scenario.caller !== undefined && scenario.transport !== "ws") {
    problem(
      "caller",
      "a caller speaks over the conversation's WebSocket session: give transport: ws (the event stream cannot carry the caller's lines)",
    );
  }
  for (const gate of ["judge_min_agreement", "judge_min_kappa"] as const) {
    if (scenario[gate] !== undefined && !scenario.expect.judge?.length) {
      problem(gate, "the scenario has no judged expectation (expect.judge)");
    }
  }
  if (scenario.min_pass !== undefined && scenario.pass_rate !== undefined) {
    problem("pass_rate", "give min_pass or pass_rate, not both");
  }
  if (scenario.min_pass !== undefined && scenario.min_pass > scenario.iterations) {
    problem(
      "min_pass",
      `min_pass ${scenario.min_pass} is more than the scenario's iterations (${scenario.iterations})`,
    );
  }
  if (scenario.confidence === undefined) {
    for (const name of ["max_iterations", "margin"] as const) {
      if (scenario[name] !== undefined)
        problem(name, `${name} belongs to a sequential test: give pass_rate and confidence too`);
    }
    if (scenario.pass_k && scenario.pass_k.k > scenario.iterations) {
      problem(
        "pass_k",
        `pass_k.k ${scenario.pass_k.k} is more than the scenario's iterations (${scenario.iterations})`,
      );
    }
    return;
  }
  if (scenario.pass_rate === undefined) {
    problem("confidence", "confidence needs pass_rate (the rate to reach)");
    return;
  }
  if (scenario.iterations !== 1) {
    problem(
      "iterations",
      "a sequential test (confidence) places up to max_iterations calls: give max_iterations, not iterations",
    );
  }
  const margin = scenario.margin ?? defaultMargin(scenario.pass_rate);
  if (scenario.pass_rate - margin <= 0 || scenario.pass_rate + margin >= 1) {
    problem(
      "margin",
      `pass_rate ${scenario.pass_rate} ± margin ${margin} must stay between 0 and 1: choose a margin below ${Math.min(scenario.pass_rate, 1 - scenario.pass_rate)}`,
    );
    return;
  }
  const cap = scenario.max_iterations ?? DEFAULT_MAX_ITERATIONS;
  const { toPass } = fewestCalls({ passRate: scenario.pass_rate, confidence: scenario.confidence, margin });
  if (toPass > cap) {
    problem(
      scenario.max_iterations === undefined ? "confidence" : "max_iterations",
      `this test needs at least ${toPass} calls to pass (all passing), more than max_iterations ${cap}: raise max_iterations or the margin, or lower the confidence`,
    );
  }
  if (scenario.pass_k && scenario.pass_k.k > cap) {
    problem("pass_k", `pass_k.k ${scenario.pass_k.k} is more than max_iterations (${cap})`);
  }
}

/** How many of a scenario's iterations must pass: `min_pass`, else `pass_rate` × iterations rounded up, else all. */
export function requiredPasses(scenario: { iterations: number; min_pass?: number; pass_rate?: number }): number {
  if (scenario.min_pass !== undefined) return scenario.min_pass;
  // (A sequential test's verdict does not use it; for it this is the rate × the cap.)
  // The small epsilon keeps 0.9 × 10 at 9, not 10 (0.9 × 10 is 9.000000000000002 in floating point).
  if (scenario.pass_rate !== undefined) return Math.max(1, Math.ceil(scenario.pass_rate * scenario.iterations - 1e-9));
  return scenario.iterations;
}

const common = {
  name: agentName,
  description: z.string(),
  protect: z.boolean().default(false).meta({ description: "Pulumi protect: the stack refuses to drop this agent." }),
};

export const conversationalFile = z
  .strictObject({
    kind: z.literal("conversational"),
    ...common,
    config: conversationalConfigFile,
    postprocess_agents: z
      .array(agentKey)
      .default([])
      .meta({ description: "Keys of procedural agents (files in this directory) run after each conversation." }),
    smoke: z.array(smokeScenario).default([]).meta({ description: "Smoke-call scenarios (agent-iac smoke)." }),
    variants: z
      .record(
        z.string().max(100).regex(KEY_PATTERN, "a variant name: lowercase letters, digits and single dashes"),
        conversationalConfigFile,
      )
      .default({})
      .meta({
        description: "Config variants to try (agent-iac try --variant NAME); not sent: not an input.",
      }),
  })
  .meta({ title: "Conversational agent" });

export const proceduralFile = z
  .strictObject({ kind: z.literal("procedural"), ...common, config: proceduralConfigFile })
  .meta({ title: "Procedural agent" });

/** The whole file, for the JSON Schema (the loader validates against the branch named by `kind`). */
export const agentFile = z.discriminatedUnion("kind", [conversationalFile, proceduralFile]).meta({
  title: "agent-iac agent file",
  description: "One agent per file: agents/<key>.yaml. Generated by `agent-iac schema`; do not edit.",
});

export type SmokeScenarioFile = z.output<typeof smokeScenario>;
/** A scenario's `expect` block; the input form, so every default is optional to a caller. */
export type Expectations = z.input<typeof expectations>;

/** The JSON Schema of agent files, with sorted keys so the committed file is stable. */
export function agentJsonSchema(): string {
  const schema = z.toJSONSchema(agentFile, { io: "input", target: "draft-7", unrepresentable: "any" });
  return `${JSON.stringify(sortKeys(schema), null, 2)}\n`;
}

function sortKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sortKeys);
  if (value && typeof value === "object") {
    return Object.fromEntries(
      Object.keys(value)
        .sort()
        .map((k) => [k, sortKeys((value as Record<string, unknown>)[k])]),
    );
  }
  return value;
}
