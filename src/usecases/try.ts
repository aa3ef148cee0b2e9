// `try`'s use case: config variants of one agent played as override_config on the version the stack
// holds, beside the unchanged config, in interleaved rounds through the smoke job (its budget, judge,
// caller and access check), decided per variant against the base, ranked; `promote` writes one
// variant into the agent file. Everything that cannot be tried is refused before any call.
import { readFile, writeFile } from "node:fs/promises";
import path from "node:path";
import { parseDocument } from "yaml";
import { type AgentDefinition, formatDiagnostic, loadConfigFile } from "../definitions/index.ts";
import { ConfigError, InvalidFilesError } from "../errors/index.ts";
import type { Report } from "../results/index.ts";
import type { Connection, ProjectContext } from "../settings/index.ts";
import { type PlannedCall, planCalls, smokePlanOf } from "../smoke/index.ts";
import { fewestPairs, type PairedRule } from "../stats/index.ts";
import {
  agentUntryable,
  deployedDifferences,
  playRounds,
  promoteDiff,
  promoteText,
  promotionRefusal,
  roundsOf,
  strictestAlpha,
  type TryPlan,
  tryReport,
  untryable,
  type Variant,
  variantOverride,
  worstCase,
} from "../variants/index.ts";
import type { JudgeCacheOptions } from "./judge.ts";
import { type HeldAgents, serviceConnection } from "./session.ts";
import { type JobIO, runSmokeJob, smokeJobFrom } from "./smoke-job.ts";
import { openValidStack, type Warn } from "./smoke-prologue.ts";

/** try's defaults: a cap that lets three variants say "no worse" at Holm's strictest level (43 pairs at α 0.05/3, margin 0.1). */
export const COMPARE_DEFAULTS_FOR_TRY = { alpha: 0.05, margin: 0.1, maxPairs: 60 } as const;

/** A variant as asked for: a file (`NAME=FILE`), or a `variants:` entry of the agent file (`NAME`). */
export type VariantSpec = { name: string; file?: string | undefined };

export type TryRequest = {
  stack: string;
  project: ProjectContext;
  agent: string;
  variants: VariantSpec[];
  scenarios?: string[] | undefined;
  rule: PairedRule;
  concurrency: number;
  maxCallMinutes?: number | undefined;
  dryRun: boolean;
  failOn: "worse" | null;
  promote?: string | undefined;
  judgeCache?: JudgeCacheOptions;
  /** Told of the stack's connection when the calls are placed: the service's errors are said in its terms. */
  onConnection?: ((connection: Connection) => void) | undefined;
};

export type TryResult =
  | { kind: "dry-run" }
  | { kind: "ran"; report: Report; promoted?: { file: string; diff: string } | { refused: string } };

export async function tryVariants(request: TryRequest, io: JobIO & { warn: Warn }): Promise<TryResult> {
  const session = await openValidStack(
    request.stack,
    { project: request.project, what: "reading the stack failed", readState: true },
    io.warn,
  );
  const held = await session.held();
  const definitions = await session.scenarioAgents(held);
  const definition = definitions.find((d) => d.key === request.agent);
  const versionId = held.agents[request.agent]?.version_id;
  const why = agentUntryable(definition, request.agent, versionId);
  if (why || !definition || !versionId)
    throw new ConfigError(`${request.agent} cannot be tried: ${why}; nothing was called`);
  refuseUndeployedFile(definition, held, session.name);
  const variants = await resolveVariants(request, definition, session.dir);
  checkRule(request.rule, variants.length);
  const scenarios = planCalls(definitions, held.agents, {
    agents: [request.agent],
    ...(request.scenarios ? { scenarios: request.scenarios } : {}),
    live: true,
  }).filter((c) => c.iteration === 1);
  const plan: TryPlan = { agent: request.agent, versionId, scenarios: [], variants, rule: request.rule };
  plan.scenarios = scenarios.map(
    (c): PlannedCall => ({
      ...c,
      scenario: { ...c.scenario, iterations: roundsOf({ ...plan, scenarios }), confidence: undefined },
    }),
  );
  io.out.write(
    `try ${request.agent} against ${versionId}: ${variants.map((v) => `${v.name} (override_config ${Object.keys(v.override).join(", ")})`).join(", ")} beside the base, up to ${request.rule.maxPairs} pairs each\n`,
  );
  const notes = [
    `every call is a test call (livemode: false) on ${versionId}; each variant sends its changed top-level config sections whole as override_config; nothing is created`,
  ];
  const result = await runSmokeJob(
    smokeJobFrom(session, {
      plan: smokePlanOf(worstCase(plan)),
      placement: {
        kind: "rounds",
        play: async (place) => {
          const played = await playRounds(plan, place, { signal: io.signal, onRound: roundLine(io.out) });
          const report = tryReport(plan, played, {
            stack: session.name,
            failOn: request.failOn,
            interrupted: io.signal.aborted,
            notes,
          });
          return { report, results: played.calls.map((c) => c.result) };
        },
      },
      concurrency: request.concurrency,
      maxCallMinutes: request.maxCallMinutes,
      dryRun: request.dryRun,
      judgeCache: request.judgeCache,
      connection: () => {
        request.onConnection?.(session.connection);
        return serviceConnection(session);
      },
    }),
    io,
  );
  if (result.kind === "dry-run") return { kind: "dry-run" };
  if (request.promote === undefined || result.report.interrupted) return { kind: "ran", report: result.report };
  const promoted = await promote(request, definition, variants, result.report, session.dir);
  return { kind: "ran", report: result.report, promoted };
}

/**
 * Refuses (before any call) an agent file whose request body is not the one the stack's version was
 * created with: the base is the deployed version, each override is computed against the file.
 */
function refuseUndeployedFile(definition: AgentDefinition, held: HeldAgents, stack: string): void {
  const deployed = held.bodies?.[definition.key];
  const agent = held.agents[definition.key];
  if (!deployed || !agent) return;
  const links = definition.postprocessAgents.map((key) => held.agents[key]?.id ?? `(${key}, not deployed)`);
  const file = {
    name: definition.name,
    description: definition.description,
    config: definition.config,
    postprocess_agents: links,
  };
  const differing = deployedDifferences(file, deployed);
  if (differing.length === 0) return;
  throw new ConfigError(
    `${definition.file} differs from what stack ${stack} holds for ${definition.key} (${agent.version_id}) in ${differing.join(", ")}: try plays each variant on the deployed version, beside it as the base, so the file's change would be in neither side; nothing was called`,
    {
      hint: `deploy first (\`pulumi up --stack ${stack}\`), or try against what is deployed: put ${definition.file} back as deployed and give the change as a variant (--variant NAME=FILE)`,
    },
  );
}

/** After each round, where each variant stands (the calls' own lines do not say whose side they were). */
function roundLine(out: JobIO["out"]) {
  const said = new Set<string>();
  return (round: number, standings: readonly { name: string; pairs: unknown[]; verdict: string }[]) => {
    const running = standings.filter((s) => s.verdict === "undecided").map((s) => s.name);
    const decided = standings.filter((s) => s.verdict !== "undecided" && !said.has(s.name));
    for (const s of decided) said.add(s.name);
    const news = decided.map((s) => `${s.name} ${s.verdict.replace("_", " ")} after ${s.pairs.length} pairs`);
    out.write(
      `round ${round}: ${[...news, running.length > 0 ? `still running: ${running.join(", ")}` : "every variant decided"].join("; ")}\n`,
    );
  };
}

/** Each asked-for variant, checked: what cannot be tried is refused with the reason (exit 2), a bad file with file:line (exit 1). */
async function resolveVariants(
  request: TryRequest,
  definition: AgentDefinition,
  agentsDir: string,
): Promise<Variant[]> {
  const names = new Set<string>();
  const variants: Variant[] = [];
  const root = path.dirname(agentsDir);
  for (const spec of request.variants) {
    if (names.has(spec.name)) throw new ConfigError(`variant "${spec.name}" is named twice`);
    if (spec.name === "base") throw new ConfigError(`"base" names the unchanged config: give the variant another name`);
    names.add(spec.name);
    let partial: Record<string, unknown>;
    let source: string;
    if (spec.file !== undefined) {
      const loaded = await loadConfigFile(spec.file, root, request.project.dir);
      const why = loaded.raw === undefined ? undefined : untryable(loaded.raw);
      if (why)
        throw new ConfigError(`${spec.file}: variant "${spec.name}" cannot be tried: ${why}; nothing was called`);
      if (!loaded.config) {
        throw new InvalidFilesError(
          `${loaded.errors.length} error(s) in the variant file ${spec.file}; nothing was called`,
          loaded.errors.map(formatDiagnostic).join("\n"),
        );
      }
      partial = loaded.config;
      source = spec.file;
    } else {
      const entry = definition.variants?.[spec.name];
      if (!entry) {
        const known = Object.keys(definition.variants ?? {});
        throw new ConfigError(
          `${definition.file} has no variant "${spec.name}" under variants:${known.length > 0 ? ` (it has ${known.join(", ")})` : ""}; or give one as --variant ${spec.name}=FILE`,
        );
      }
      partial = entry;
      source = `variants.${spec.name}`;
    }
    const tried = variantOverride(definition.config as Record<string, unknown>, partial);
    if (!tried) throw new ConfigError(`variant "${spec.name}" changes nothing in ${request.agent}'s config`);
    variants.push({ name: spec.name, source, ...tried });
  }
  if (variants.length === 0) throw new ConfigError("name at least one variant (--variant NAME=FILE or --variant NAME)");
  return variants;
}

/** The cap must let the strictest Holm level say "no worse" at all. */
function checkRule(rule: PairedRule, variants: number): void {
  const alpha = strictestAlpha(rule.alpha, variants);
  const fewest = fewestPairs({ alpha, margin: rule.margin });
  if (fewest > rule.maxPairs) {
    throw new ConfigError(
      `with ${variants} variant(s), Holm's strictest level is α ${Math.round(alpha * 10000) / 10000}: saying "no worse" within a margin of ${rule.margin} needs at least ${fewest} pairs, more than --max-pairs ${rule.maxPairs}: raise --max-pairs or --margin`,
    );
  }
}

/** Writes the promoted variant into the agent file (only one decided no worse or better) and returns the diff. */
async function promote(
  request: TryRequest,
  definition: AgentDefinition,
  variants: Variant[],
  report: Report,
  agentsDir: string,
): Promise<{ file: string; diff: string } | { refused: string }> {
  const name = request.promote as string;
  const tried = report.variants?.variants.find((v) => v.name === name);
  const variant = variants.find((v) => v.name === name);
  const refused = promotionRefusal(name, variant ? tried?.verdict : undefined);
  if (refused || !variant) return { refused: refused ?? `--promote ${name}: no such variant was tried` };
  const file = path.join(agentsDir, `${definition.key}.yaml`);
  const before = await readFile(file, "utf8");
  const partial = variant.source.startsWith("variants.")
    ? (parseDocument(before).getIn(["variants", name], false) as { toJSON(): unknown } | undefined)?.toJSON()
    : await writtenVariant(path.resolve(request.project.dir, variant.source), path.dirname(file));
  const after = promoteText(
    before,
    (partial ?? {}) as Record<string, unknown>,
    variant.source.startsWith("variants.") ? name : undefined,
  );
  await writeFile(file, after);
  return {
    file: path.relative(request.project.dir, file),
    diff: promoteDiff(path.relative(request.project.dir, file), before, after),
  };
}

/** A variant file as written, its prompt `file` made relative to the agent file's directory. */
async function writtenVariant(absolute: string, agentDir: string): Promise<Record<string, unknown>> {
  const raw = parseDocument(await readFile(absolute, "utf8")).toJSON() as Record<string, unknown>;
  const prompt = (raw.runtime as { prompt?: { file?: string } } | undefined)?.prompt;
  if (prompt?.file !== undefined) {
    prompt.file = path.relative(agentDir, path.resolve(path.dirname(absolute), prompt.file));
  }
  return raw;
}
