// The blessed baseline: what a stack's pinned versions did on the day a person approved them, per
// agent version, scenario and expectation, with what produced it (the scenario's text, the judge's
// and the caller's models as their endpoints answered, this tool's version). A file in
// `baselines/<stack>.json` that a pull request commits and a person reviews. Written strictly (only
// `baseline bless` writes one) and read strictly: a hand edit that breaks it is an error, not a guess.
import { createHash } from "node:crypto";
import { z } from "zod";
import { InvalidInputError } from "../errors/index.ts";
import { expectationId, type Report } from "../results/index.ts";

const BASELINE_FORMAT = "agent-iac-baseline";
const BASELINE_VERSION = 1;

const count = z.int().min(0);
const ms = z.number().nonnegative();

const expectationSchema = z.strictObject({
  kind: z.string().nullable(),
  key: z.string().nullable(),
  description: z.string(),
  /** Calls that evaluated it, and those in which it held. */
  calls: count,
  passes: count,
  /** A judged expectation's votes over those calls (null: not judged). */
  votes: z.strictObject({ for: count, total: count }).nullable(),
});

const latencySchema = z.strictObject({
  /** Agent response latency over every user turn of every call (nearest rank). */
  response_p50_ms: ms.nullable(),
  response_p95_ms: ms.nullable(),
  turns: count,
});

const scenarioSchema = z.strictObject({
  /** sha256 of the scenario as the agent file declared it when it was blessed. */
  scenario_hash: z.string(),
  /** Calls that ended on their own (passed or failed; errors are counted apart, never as the agent's). */
  calls: count,
  passes: count,
  errors: count,
  expectations: z.array(expectationSchema),
  latency: latencySchema,
  /** The models the judge's and the caller's endpoints said answered (sorted; empty: none named, or none used). */
  judge_models: z.array(z.string()),
  caller_models: z.array(z.string()),
});

const agentSchema = z.strictObject({
  version_id: z.string(),
  scenarios: z.record(z.string(), scenarioSchema),
});

const baselineSchema = z.strictObject({
  format: z.literal(BASELINE_FORMAT),
  version: z.literal(BASELINE_VERSION),
  stack: z.string(),
  blessed_at: z.string(),
  /** agent-iac's version that ran the blessed reports' calls and wrote this file. */
  tool_version: z.string(),
  /** The reports it was made from (their file names and when they were made). */
  reports: z.array(z.strictObject({ file: z.string(), created_at: z.string().nullable() })),
  agents: z.record(z.string(), agentSchema),
});

export type Baseline = z.output<typeof baselineSchema>;
export type BaselineScenario = z.output<typeof scenarioSchema>;
export type BaselineExpectation = z.output<typeof expectationSchema>;

/** The baseline file of a stack, relative to the project directory. */
export function baselinePath(stack: string): string {
  return `baselines/${stack.replaceAll("/", "_")}.json`;
}

/** JSON with its keys sorted at every level: the same value always hashes the same. */
function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(",")}]`;
  if (value !== null && typeof value === "object") {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, v]) => v !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonical(v)}`).join(",")}}`;
  }
  return JSON.stringify(value);
}

/** The hash of a scenario as declared (its name, turns, expectations, iterations, everything). */
export function scenarioHash(scenario: unknown): string {
  return `sha256:${createHash("sha256").update(canonical(scenario)).digest("hex")}`;
}

/** The nearest-rank percentile; null for no values. */
export function percentile(values: readonly number[], p: number): number | null {
  if (values.length === 0) return null;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.max(1, Math.ceil((p / 100) * sorted.length)) - 1] ?? null;
}

type Calls = Report["results"];

/** The sorted distinct non-null strings. */
const distinct = (values: (string | null | undefined)[]) =>
  [...new Set(values.filter((v): v is string => typeof v === "string"))].sort();

/** The models a judge's endpoint said answered in these calls (the one asked, where it named none). */
export function judgeModels(calls: Calls): string[] {
  return distinct(
    calls.flatMap((c) => c.assertions.map((a) => a.judgement && (a.judgement.answered_model ?? a.judgement.model))),
  );
}

/** The models a persona caller's endpoint said answered (the one asked, where it named none). */
export function callerModels(calls: Calls): string[] {
  return distinct(calls.map((c) => c.caller_model && (c.caller_model.answered ?? c.caller_model.asked)));
}

/** Calls a scenario's verdict stands on: they ended on their own, passed or failed. */
const ended = (calls: Calls) => calls.filter((c) => c.outcome.kind === "passed" || c.outcome.kind === "failed");

/** Each expectation's calls and passes (and a judged one's votes), joined on its `{kind, key}`. */
export function expectationCounts(calls: Calls): BaselineExpectation[] {
  const byId = new Map<string, BaselineExpectation>();
  for (const call of ended(calls)) {
    for (const a of call.assertions) {
      const id = expectationId(a);
      const entry = byId.get(id) ?? {
        kind: a.kind ?? null,
        key: a.key ?? null,
        description: a.description,
        calls: 0,
        passes: 0,
        votes: null,
      };
      entry.calls++;
      if (a.passed) entry.passes++;
      if (a.judgement) {
        const votes = entry.votes ?? { for: 0, total: 0 };
        entry.votes = { for: votes.for + a.judgement.votes_for, total: votes.total + a.judgement.votes_total };
      }
      byId.set(id, entry);
    }
  }
  return [...byId.values()];
}

/** A scenario's figures from its calls (in one report or several). */
function scenarioFigures(calls: Calls, hash: string): BaselineScenario {
  const done = ended(calls);
  const responses = done.flatMap((c) => c.latency.response_ms);
  return {
    scenario_hash: hash,
    calls: done.length,
    passes: done.filter((c) => c.outcome.kind === "passed").length,
    errors: calls.filter((c) => c.outcome.kind === "error").length,
    expectations: expectationCounts(calls),
    latency: {
      response_p50_ms: percentile(responses, 50),
      response_p95_ms: percentile(responses, 95),
      turns: responses.length,
    },
    judge_models: judgeModels(done),
    caller_models: callerModels(done),
  };
}

export type BlessInput = {
  stack: string;
  reports: { file: string; report: Report }[];
  /** Agent key → scenario name → the scenario's hash as its file declares it now. */
  hashes: Map<string, Map<string, string>>;
  toolVersion: string;
  now: string;
};

/** The versions the reports tested, one per agent; refuses reports of another stack or of different versions. */
function testedVersions(input: BlessInput): Record<string, string> {
  const versions: Record<string, { id: string; file: string }> = {};
  for (const { file, report } of input.reports) {
    if (!["smoke", "merged"].includes(report.kind)) {
      throw new InvalidInputError(`${file}: a ${report.kind} report; a baseline is blessed from smoke reports`);
    }
    if (report.stack !== null && report.stack !== input.stack) {
      throw new InvalidInputError(`${file}: a report of stack "${report.stack}", not "${input.stack}"`);
    }
    if (report.interrupted) throw new InvalidInputError(`${file}: an interrupted run; bless only finished runs`);
    for (const call of report.results) {
      const known = versions[call.agent];
      if (known && known.id !== call.version_id) {
        throw new InvalidInputError(
          `${file}: agent "${call.agent}" was called on ${call.version_id}, but ${known.file} on ${known.id}: bless reports of the same versions`,
        );
      }
      versions[call.agent] = { id: call.version_id, file };
    }
  }
  return Object.fromEntries(Object.entries(versions).map(([agent, v]) => [agent, v.id]));
}

/** One baseline from one or more smoke reports of the same versions (more reports: more evidence). */
export function blessBaseline(input: BlessInput): Baseline {
  const versions = testedVersions(input);
  const agents: Baseline["agents"] = {};
  for (const [agent, versionId] of Object.entries(versions)) {
    const calls = input.reports.flatMap(({ report }) => report.results.filter((c) => c.agent === agent));
    const names = [...new Set(calls.map((c) => c.scenario))];
    const scenarios: Record<string, BaselineScenario> = {};
    for (const name of names) {
      const hash = input.hashes.get(agent)?.get(name);
      if (hash === undefined) {
        throw new InvalidInputError(
          `scenario "${agent}/${name}" is in the reports but no longer in the agent files: run smoke again and bless its report`,
        );
      }
      const figures = scenarioFigures(
        calls.filter((c) => c.scenario === name),
        hash,
      );
      if (figures.calls === 0) {
        throw new InvalidInputError(
          `scenario "${agent}/${name}": no call of it ended on its own in these reports (errors or not run): nothing to bless`,
        );
      }
      scenarios[name] = figures;
    }
    agents[agent] = { version_id: versionId, scenarios };
  }
  if (Object.keys(agents).length === 0) throw new InvalidInputError("the reports hold no calls: nothing to bless");
  return baselineSchema.parse({
    format: BASELINE_FORMAT,
    version: BASELINE_VERSION,
    stack: input.stack,
    blessed_at: input.now,
    tool_version: input.toolVersion,
    reports: input.reports.map(({ file, report }) => ({ file, created_at: report.created_at })),
    agents,
  });
}

/** A baseline file's text (what bless writes). */
export function baselineJson(baseline: Baseline): string {
  return `${JSON.stringify(baselineSchema.parse(baseline), null, 2)}\n`;
}

/** A baseline read strictly: the file's name and the first problem, field by field. */
export function parseBaseline(file: string, text: string): Baseline {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw new InvalidInputError(`${file}: not JSON (${(error as Error).message})`);
  }
  const parsed = baselineSchema.safeParse(value);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new InvalidInputError(
      `${file}: not an agent-iac baseline: ${issue?.path.join(".") || "(top)"}: ${issue?.message} (re-bless it with \`agent-iac baseline bless\`)`,
    );
  }
  return parsed.data;
}
