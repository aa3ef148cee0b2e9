// Drift's use cases: `baseline bless` (smoke reports of the versions the stack holds → the one
// baseline file, the only writer of it) and `drift` (the baseline's scenarios on the baseline's
// pinned versions, each decided against the baseline's counts, through the one smoke job).
import { mkdir, readFile, rename, writeFile } from "node:fs/promises";
import path from "node:path";
import packageJson from "../../package.json" with { type: "json" };
import type { SmokeScenario } from "../definitions/index.ts";
import {
  type Baseline,
  baselineJson,
  baselinePath,
  blessBaseline,
  DRIFT_DEFAULTS,
  driftReport,
  driftScenario,
  parseBaseline,
  requireBlessedVersions,
  scenarioHashes,
} from "../drift/index.ts";
import { ConfigError, InvalidInputError, IoError } from "../errors/index.ts";
import { type Report, readReport } from "../results/index.ts";
import type { Connection, ProjectContext } from "../settings/index.ts";
import { type PlannedCall, selectedScenarios, smokePlanOf } from "../smoke/index.ts";
import type { DriftRule } from "../stats/index.ts";
import type { JudgeCacheOptions } from "./judge.ts";
import { fileAtRef, type HeldAgents, type StackSession } from "./session.ts";
import { type JobIO, type JobResult, runSmokeJob, smokeJobFrom } from "./smoke-job.ts";
import { openValidStack, planHeld, type Warn } from "./smoke-prologue.ts";

const TOOL_VERSION: string = packageJson.version;

/** The stack's agents with their scenarios as declared now, and each scenario's hash. */
async function declaredScenarios(session: StackSession, held: HeldAgents) {
  const definitions = await session.scenarioAgents(held);
  return scenarioHashes(selectedScenarios(definitions, {}));
}

const heldVersions = (held: HeldAgents) =>
  Object.fromEntries(Object.entries(held.agents).map(([key, agent]) => [key, agent.version_id]));

export type BlessRequest = { stack: string; project: ProjectContext; reports: string[]; now?: string };

/** `baseline bless`: the reports (of the versions the stack holds) as `baselines/<stack>.json`. */
export async function blessReports(request: BlessRequest, warn: Warn): Promise<{ file: string; baseline: Baseline }> {
  const reports: { file: string; report: Report }[] = [];
  for (const file of request.reports)
    reports.push({ file: path.basename(file), report: await readReport(file, request.project.dir) });
  const session = await openValidStack(
    request.stack,
    { project: request.project, what: "reading the stack failed", readState: true },
    warn,
  );
  const held = await session.held();
  const versions = heldVersions(held);
  for (const { file, report } of reports) {
    const other = report.results.find((c) => versions[c.agent] !== c.version_id);
    if (other) {
      throw new InvalidInputError(
        `${file}: agent "${other.agent}" was called on ${other.version_id}, but the stack holds ${versions[other.agent] ?? "no such agent"}: bless reports of the versions the stack holds (run smoke again)`,
      );
    }
  }
  const baseline = blessBaseline({
    stack: request.stack,
    reports,
    hashes: await declaredScenarios(session, held),
    toolVersion: TOOL_VERSION,
    now: request.now ?? new Date().toISOString(),
  });
  const file = path.join(request.project.dir, baselinePath(request.stack));
  await writeAtomically(file, baselineJson(baseline));
  return { file: path.relative(request.project.dir, file), baseline };
}

async function writeAtomically(file: string, text: string): Promise<void> {
  try {
    await mkdir(path.dirname(file), { recursive: true });
    const temporary = `${file}.${process.pid}.tmp`;
    await writeFile(temporary, text);
    await rename(temporary, file);
  } catch (error) {
    throw new IoError(`cannot write ${file}: ${(error as NodeJS.ErrnoException).code ?? String(error)}`, {
      cause: error,
    });
  }
}

/** The stack's baseline file, read strictly; none is a configuration error that says how to bless one. */
async function readBaseline(
  project: ProjectContext,
  stack: string,
  file?: string,
): Promise<{ file: string; baseline: Baseline }> {
  const relative = file ?? baselinePath(stack);
  const text = await readFile(path.resolve(project.dir, relative), "utf8").catch((error: NodeJS.ErrnoException) => {
    throw new ConfigError(
      `${relative}: no baseline (${error.code ?? error.message}): bless one first: \`agent-iac smoke --stack ${stack} --json r.json\`, then \`agent-iac baseline bless r.json --stack ${stack}\``,
    );
  });
  const baseline = parseBaseline(relative, text);
  if (baseline.stack !== stack) {
    throw new ConfigError(`${relative}: the baseline of stack "${baseline.stack}", not "${stack}"`);
  }
  return { file: relative, baseline };
}

export type DriftRequest = {
  stack: string;
  project: ProjectContext;
  baselineFile?: string | undefined;
  rule?: Partial<DriftRule>;
  concurrency: number;
  maxCallMinutes?: number | undefined;
  dryRun?: boolean;
  judgeCache?: JudgeCacheOptions | undefined;
};

/** Each blessed scenario as the drift test places it, up to the cap; those it cannot test, apart. */
function driftCalls(baseline: Baseline, planned: PlannedCall[], rule: DriftRule) {
  const calls: PlannedCall[] = [];
  const untestable: { agent: string; scenario: string }[] = [];
  for (const [agent, blessedAgent] of Object.entries(baseline.agents)) {
    for (const [name, blessed] of Object.entries(blessedAgent.scenarios)) {
      const first = planned.find((c) => c.agent === agent && c.scenario.name === name);
      if (!first) continue; // no longer declared: the verdict says so
      const scenario: SmokeScenario | undefined = driftScenario(first.scenario, blessed, rule);
      if (!scenario) {
        untestable.push({ agent, scenario: name });
        continue;
      }
      for (let iteration = 1; iteration <= rule.maxCalls; iteration++) calls.push({ ...first, scenario, iteration });
    }
  }
  return { calls, untestable };
}

/** `drift`: refuses a stack whose versions moved; places the calls; the drift report (or the dry run). */
export async function runDrift(
  request: DriftRequest,
  io: JobIO & { warn: Warn; useConnection?: (connection: Connection) => void },
): Promise<{ result: JobResult; report?: Report; session: StackSession }> {
  const rule: DriftRule = { ...DRIFT_DEFAULTS, ...request.rule };
  const { file, baseline } = await readBaseline(request.project, request.stack, request.baselineFile);
  const session = await openValidStack(
    request.stack,
    { project: request.project, what: "reading the stack failed", readState: true },
    io.warn,
  );
  const held = await session.held();
  requireBlessedVersions(baseline, heldVersions(held), file);
  const agents = Object.keys(baseline.agents);
  const plan = await planHeld(session, held, { selection: { agents } }, io.warn);
  const { calls, untestable } = driftCalls(baseline, plan.calls, rule);
  // The service's errors are said in the stack's terms.
  io.useConnection?.(session.connection);
  const result = await runSmokeJob(
    smokeJobFrom(session, {
      plan: smokePlanOf(calls),
      placement: { kind: "smoke" },
      concurrency: request.concurrency,
      maxCallMinutes: request.maxCallMinutes,
      ...(request.dryRun ? { dryRun: true } : {}),
      judgeCache: request.judgeCache,
    }),
    io,
  );
  if (result.kind === "dry-run") return { result, session };
  const report = driftReport({
    baseline,
    baselineFile: file,
    rule,
    report: result.report,
    hashes: scenarioHashes(plan.calls.filter((c) => c.iteration === 1)),
    toolVersion: TOOL_VERSION,
    untestable,
  });
  return { result, report, session };
}

/**
 * Whether a pull request changes the stack's baseline (a re-bless is a reviewed change, like a
 * setting): the file at `ref` against the working tree. Undefined when it is the same, or neither has one.
 */
export async function baselineChange(
  stack: string,
  ref: string,
  project: ProjectContext,
): Promise<{ file: string; base: string; change: "added" | "changed" | "removed" } | undefined> {
  const file = baselinePath(stack);
  const atBase = await fileAtRef(project, ref, file);
  const head = await readFile(path.join(project.dir, file), "utf8").catch(() => undefined);
  if (atBase === head) return undefined;
  const change = atBase === undefined ? "added" : head === undefined ? "removed" : "changed";
  return { file, base: ref, change };
}
