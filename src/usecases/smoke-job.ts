// The one smoke job. `smoke`, `smoke --compare`, `npm start`'s smoke phase and `plan --behave` all
// run it: it takes one plan (the selection, the shard and the iterations, made once) and runs
// budget → judge setup → access check → place (plain, old-vs-new on that same plan, or the
// proposed config) → record → the report value. A run stopped before it places anything still
// gets its report from the plan: every planned call not run.
import { mkdir } from "node:fs/promises";
import { type Client, createClient, NotFoundError, type RetryNotice } from "../api/index.ts";
import { callerShape, PersonaModel, Rephrasings, requirePersona } from "../caller/index.ts";
import {
  type CompareRule,
  compareSides,
  comparisonPlan,
  type FailOn,
  type OldVersions,
  placePairs,
} from "../compare/index.ts";
import { DEFAULT_PERSONA_TURNS } from "../definitions/index.ts";
import { ConfigError } from "../errors/index.ts";
import { terminalLines, terminalText } from "../escape/index.ts";
import { type Judge, movingModels } from "../judge/index.ts";
import type { Report } from "../results/index.ts";
import {
  type CallerShapeSettings,
  isLoopbackUrl,
  type JudgeSettings,
  type ProjectContext,
  type ResolvedConnection,
} from "../settings/index.ts";
import {
  cutShort,
  dryRunText,
  type Estimate,
  estimate,
  estimateLine,
  type PlannedCall,
  runSmoke,
  type ScenarioResult,
  type SmokePlan,
} from "../smoke/index.ts";
import { overBudget } from "./errors.ts";
import { type JudgeCacheOptions, setupJudge } from "./judge.ts";
import { type StackSession, serviceConnection } from "./session.ts";

/** How the plan's calls are placed. */
type Placement =
  | { kind: "smoke" }
  /** Each call also on its agent's old version (the same plan, so the same shard). */
  | {
      kind: "compare";
      old: OldVersions;
      failOn: FailOn;
      alpha?: number | undefined;
      requireBaseline?: boolean;
      /** Every scenario's rule (else each scenario's `compare:`, else fixed). */
      rule?: CompareRule | undefined;
      /** A sequential comparison left inconclusive does not fail the run. */
      allowInconclusive?: boolean | undefined;
    }
  /** The calls carry the proposed config (plan --behave); `report` makes the preview's report value. */
  | { kind: "behave"; report: (results: ScenarioResult[]) => Report }
  /** The plan's calls are the worst case; `play` places them round by round (try's variants) and makes the report. */
  | {
      kind: "rounds";
      play: (
        place: (calls: PlannedCall[]) => Promise<ScenarioResult[]>,
      ) => Promise<{ report: Report; results: ScenarioResult[] }>;
    };

export type SmokeJob = {
  stack: string;
  plan: SmokePlan;
  placement: Placement;
  concurrency: number;
  /** Refuse (before any request) a worst case over this many call minutes. */
  maxCallMinutes?: number | undefined;
  /** Say the calls and their worst case; place none. */
  dryRun?: boolean;
  /** Say the worst case before placing (live calls cost money). */
  announceCost?: boolean;
  /** Write each (new-side) call's events and scenario here. */
  recordDir?: string | undefined;
  judge: { settings: JudgeSettings; cache?: JudgeCacheOptions };
  /** The project the run works in (the judge's cache is in its state directory). */
  project: ProjectContext;
  /** Where to place the calls; asked for only when calls are placed (a dry run needs no key). */
  connection: () => ResolvedConnection;
  /** The caller's control-message settings (agents:callerMessage, agents:callerEnd); none: the loopback default only. */
  caller?: CallerShapeSettings | undefined;
};

/** What a session gives every smoke job. */
type JobSession = Pick<StackSession, "name" | "project" | "judge" | "caller" | "connection">;

/**
 * The one way a use case makes a smoke job from its stack's session: the stack's name, project,
 * judge and caller settings come from the session, and so does the connection (asked for only when
 * calls are placed, so a dry run needs no key) unless the run places its calls elsewhere (the local
 * service of `start`).
 */
export function smokeJobFrom(
  session: JobSession,
  job: Omit<SmokeJob, "stack" | "project" | "judge" | "caller" | "connection"> & {
    judgeCache?: JudgeCacheOptions | undefined;
    connection?: () => ResolvedConnection;
  },
): SmokeJob {
  const { judgeCache, connection, ...rest } = job;
  return {
    ...rest,
    stack: session.name,
    project: session.project,
    judge: { settings: session.judge, ...(judgeCache ? { cache: judgeCache } : {}) },
    caller: session.caller,
    connection: connection ?? (() => serviceConnection(session)),
  };
}

export type JobIO = {
  /** Progress and each call's lines. */
  out: { write(text: string): unknown; isTTY?: boolean; columns?: number };
  /** Stops the calls: those in flight end interrupted, the rest not run; the report still holds every call. */
  signal: AbortSignal;
  onRetry?: (notice: RetryNotice) => void;
  /** The report so far, after every finished call of a plain run. */
  onReport?: (report: Report) => unknown;
};

export type JobResult =
  | { kind: "dry-run"; cost: Estimate }
  | {
      kind: "ran";
      report: Report;
      cost: Estimate;
      /** The new side's results (the only side of a plain run). */
      results: ScenarioResult[];
      oldResults: ScenarioResult[];
      judge: Judge | undefined;
    };

/**
 * Which calls the plan places on each side (a sequential comparison's up to its cap of pairs); the
 * dry run and the budget count both, the worst case.
 */
function sides(job: SmokeJob): ReturnType<typeof comparisonPlan> {
  const { placement } = job;
  if (placement.kind !== "compare") {
    return { newCalls: job.plan.calls, oldCalls: [], oldOf: new Map(), sequential: new Map(), notes: [] };
  }
  return comparisonPlan(job.plan.calls, placement.old, { rule: placement.rule, alpha: placement.alpha });
}

export async function runSmokeJob(job: SmokeJob, io: JobIO): Promise<JobResult> {
  const paired = sides(job);
  const { newCalls, oldCalls } = paired;
  const all = [...oldCalls, ...newCalls];
  // With a judge configured, persona calls are checked by it (and placed again when the caller strayed).
  const counting = { callerCheck: Boolean(job.judge.settings.baseUrl && job.judge.settings.model) };
  const cost = estimate(all, counting);
  // The version ids may come from a file (`--compare OLD`): each line escaped, its breaks kept.
  if (job.dryRun) io.out.write(terminalLines(dryRunText(all, counting)));
  if (job.maxCallMinutes !== undefined && cost.worstCaseMinutes > job.maxCallMinutes) {
    throw overBudget(cost, job.maxCallMinutes);
  }
  if (job.dryRun) return { kind: "dry-run", cost };
  const connection = job.connection();
  // A scenario with a caller on a service whose message shape nobody named stops here (exit 2).
  const caller = callerHooks(all, job, connection.baseUrl, io);
  // A judged run without a judge (or with an untrusted one) stops here, before any request.
  const judge = await setupJudge(
    newCalls.map((c) => ({ agent: c.agent, scenario: c.scenario })),
    job.judge.settings,
    { ...(job.judge.cache ? { cache: job.judge.cache } : {}), project: job.project, stack: job.stack, ...onRetry(io) },
  );
  // A judge or persona model whose name moves is said before the calls and in the report.
  const warnings = movingModels(
    all.map((c) => c.scenario),
    job.judge.settings,
    job.caller,
  ).map((warning) => `warning: ${warning}`);
  for (const warning of warnings) io.out.write(`${terminalText(warning)}\n`);
  const client = createClient({ ...connection, ...onRetry(io) });
  try {
    if (job.recordDir !== undefined) await recordingDirectory(job.recordDir);
    if (job.announceCost) io.out.write(`${estimateLine(cost)}\n`);
    if (newCalls.length > 0) await checkAccess(client);
    // Each model's key is checked as the service's is: a refused one stops the run before any call.
    if (all.length > 0) {
      await judge?.client.checkKey(io.signal);
      await caller.checkKey?.(io.signal);
    }
    const placed = await place(job, paired, { client, judge, io, caller, warnings });
    return { kind: "ran", cost, judge, ...placed };
  } finally {
    await client.close();
    await judge?.client.close();
    await caller.close?.();
  }
}

/** The local simulator's idle limit: a conversation ends after this long without a line (docs/simulator.md). */
const SIMULATOR_IDLE_MS = 60_000;

const onRetry = (io: JobIO) => (io.onRetry ? { onRetry: io.onRetry } : {});

type Sides = ReturnType<typeof sides>;
/** `warnings`: what the report says beside its results (a model whose name moves). */
type Context = { client: Client; judge: Judge | undefined; io: JobIO; caller: CallerHooks; warnings: string[] };
type CallerHooks = NonNullable<Parameters<typeof runSmoke>[0]["caller"]>;

/**
 * The callers' message shape and their model (a persona's, and the rephrasings of scripted turns
 * with `caller.variations`), resolved once before any call (none needed when no scenario has a
 * caller): a missing setting stops the run here (exit 2).
 */
function callerHooks(
  calls: readonly PlannedCall[],
  job: SmokeJob,
  baseUrl: string,
  io: JobIO,
): CallerHooks & { close?: () => Promise<void>; checkKey?: (signal: AbortSignal) => Promise<void> } {
  if (!calls.some((call) => call.scenario.caller)) return {};
  const settings = job.caller ?? { message: undefined, end: undefined };
  const shape = callerShape(settings, baseUrl, job.stack);
  const named = (which: (call: PlannedCall) => unknown) => [
    ...new Set(calls.filter(which).map((c) => `${c.agent}/${c.scenario.name}`)),
  ];
  const personas = named((c) => c.scenario.caller?.persona);
  const varied = named((c) => c.scenario.caller?.variations);
  if (personas.length === 0 && varied.length === 0) return { callerShape: shape };
  const why = [
    personas.length > 0 ? `scenario(s) ${personas.join(", ")} have a persona caller` : undefined,
    varied.length > 0
      ? `scenario(s) ${varied.join(", ")} have their caller's turns rephrased (caller.variations)`
      : undefined,
  ].filter(Boolean);
  const endpoint = requirePersona(
    settings.persona,
    why.join(", and "),
    job.stack,
    personas.length > 0 ? "to play it" : "to rephrase them",
  );
  // Said once per run: a judge's model asked to play a caller may answer as a judge (the caller's error).
  if (settings.personaFromJudge) {
    io.out.write(
      `note: the ${personas.length > 0 ? "persona caller is played" : "caller's turns are rephrased"} by the judge's model (${terminalText(endpoint.model)}): agents:callerBaseUrl and agents:callerModel are not set\n`,
    );
  }
  // Made at the first call that needs it, so a run stopped before it holds no connection.
  let model: PersonaModel | undefined;
  const persona = () => {
    model ??= new PersonaModel({ ...endpoint, ...onRetry(io) });
    return model;
  };
  // One request per scenario for the whole run: both sides of a comparison hear the same rephrasings.
  let rephrasings: Rephrasings | undefined;
  return {
    callerShape: shape,
    // The local simulator waits for a model-written caller's first line as long as its conversation may idle.
    ...(isLoopbackUrl(baseUrl) ? { modelCallerWaitMs: SIMULATOR_IDLE_MS } : {}),
    close: async () => model?.close(),
    // One endpoint plays the personas and rephrases: its key is checked once, named by its first use.
    checkKey: (signal) => persona().checkKey(personas.length > 0 ? "caller" : "variations", signal),
    persona: (call) => {
      const spec = call.scenario.caller ?? {};
      return persona().turns(spec.persona ?? "", spec.goal, spec.max_turns ?? DEFAULT_PERSONA_TURNS);
    },
    variations: (call) => {
      const { turns = [], variations = 1 } = call.scenario.caller ?? {};
      rephrasings ??= new Rephrasings(persona(), io.signal);
      return rephrasings.turns(`${call.agent}\u0000${call.scenario.name}`, turns, variations, call.iteration);
    },
  };
}

async function place(job: SmokeJob, paired: Sides, { client, judge, io, caller, warnings }: Context) {
  const { newCalls, notes } = paired;
  const run = (
    calls: PlannedCall[],
    extra: {
      earlyDecisions?: boolean;
      record?: (call: PlannedCall) => boolean;
      onReport?: boolean;
      notes?: string[];
    },
  ) =>
    runSmoke({
      plan: { ...job.plan, calls },
      connection: client,
      concurrency: job.concurrency,
      stack: job.stack,
      out: io.out,
      signal: io.signal,
      judge,
      caller,
      ...(extra.earlyDecisions === false ? { earlyDecisions: false } : {}),
      ...(extra.record && job.recordDir !== undefined ? { recordDir: job.recordDir, recordOnly: extra.record } : {}),
      ...(extra.onReport && io.onReport ? { onReport: io.onReport } : {}),
      ...(extra.notes ? { notes: extra.notes } : {}),
    });
  const { placement } = job;
  const everyCall = () => true;
  if (placement.kind === "smoke") {
    const { results, report } = await run(newCalls, { record: everyCall, onReport: true, notes: warnings });
    return { report, results, oldResults: [] };
  }
  if (placement.kind === "behave") {
    const { results } = await run(newCalls, {});
    return { report: placement.report(results), results, oldResults: [] };
  }
  if (placement.kind === "rounds") {
    // Every call of a round is needed for its pairs: no early decisions of fixed repeats.
    const { report, results } = await placement.play(
      async (calls) => (await run(calls, { earlyDecisions: false })).results,
    );
    return { report, results, oldResults: [] };
  }
  for (const note of notes) io.out.write(`note: ${terminalText(note)}\n`);
  // Old and new in pairs placed together; the tests need every planned call of fixed repeats on
  // both sides; only the new side's calls are recorded.
  const olds = new Set(paired.oldCalls);
  const {
    newResults: results,
    oldResults,
    stopped,
  } = await placePairs(
    paired,
    async (calls) => (await run(calls, { earlyDecisions: false, record: (call) => !olds.has(call) })).results,
    { pairsPerRound: Math.max(1, Math.floor(job.concurrency / 2)), signal: io.signal },
  );
  const { report } = compareSides(
    { newResults: results, oldResults, notes: [...warnings, ...notes] },
    {
      old: placement.old,
      failOn: placement.failOn,
      alpha: placement.alpha,
      requireBaseline: placement.requireBaseline,
      allowInconclusive: placement.allowInconclusive,
      sequential: paired.sequential,
      stack: job.stack,
      // A signal once every pair had ended interrupted nothing: the comparison is complete.
      interrupted: io.signal.aborted && (stopped || cutShort([...results, ...oldResults])),
      partial: job.plan.shard !== undefined,
      shard: job.plan.shard,
    },
  );
  return { report, results, oldResults };
}

async function recordingDirectory(dir: string): Promise<void> {
  await mkdir(dir, { recursive: true }).catch((error: NodeJS.ErrnoException) => {
    throw new ConfigError(`${dir}: cannot create the recordings directory (${error.code ?? error.message})`);
  });
}

/**
 * Fails early, before any call is placed, when the service cannot be reached or refuses the key
 * (the command says it in the connection's terms). A service without the list lets the calls tell.
 */
async function checkAccess(client: Client): Promise<void> {
  try {
    for await (const _ of client.conversations.list().pages()) break;
  } catch (error) {
    if (error instanceof NotFoundError) return;
    throw error;
  }
}
