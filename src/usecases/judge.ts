// The judge a run needs: none when no planned scenario has judged expectations; a configuration
// error (before any request) when one does and no judge is configured, or when a rubric's measured
// agreement is missing, rests on labels of one human verdict, or is below its scenario's
// judge_min_agreement or (kappa's 95 % interval's lower bound) judge_min_kappa.

import type { RetryNotice } from "../api/index.ts";
import { callerCheckRubric, judgeRubrics, type SmokeScenario } from "../definitions/index.ts";
import { ConfigError } from "../errors/index.ts";
import {
  type Calibration,
  Judge,
  JudgeClient,
  MIN_CALIBRATION_ITEMS,
  oneVerdictOnly,
  VoteCache,
} from "../judge/index.ts";
import {
  JUDGE_CACHE_DIR,
  type JudgeSettings,
  type ProjectContext,
  type ResolvedJudge,
  requireJudge,
} from "../settings/index.ts";

/** How the run uses the judge's vote cache. */
export type JudgeCacheOptions = { dir?: string | undefined; read?: boolean | undefined };

export async function setupJudge(
  scenarios: readonly { agent: string; scenario: SmokeScenario }[],
  settings: JudgeSettings,
  options: {
    /** The project whose state directory holds the cache (a relative --judge-cache is in its directory) and whose environment holds its key. */
    project: ProjectContext;
    cache?: JudgeCacheOptions;
    stack?: string;
    onRetry?: (notice: RetryNotice) => void;
  },
): Promise<Judge | undefined> {
  const judged = scenarios.filter((s) => judgeRubrics(s.scenario.expect).length > 0);
  // A persona caller is checked by the judge when one is configured; it needs none.
  const checksCallers = scenarios.some((s) => callerCheckRubric(s.scenario)) && !!settings.baseUrl && !!settings.model;
  if (judged.length === 0 && !checksCallers) return undefined;
  const names = [...new Set(judged.map((s) => `${s.agent}/${s.scenario.name}`))];
  const shown = names.length > 3 ? `${names.slice(0, 3).join(", ")} and ${names.length - 3} more` : names.join(", ");
  const endpoint = requireJudge(
    settings,
    `scenario(s) ${shown} have judged expectations (expect.judge)`,
    options.stack,
  );
  const judge = await buildJudge(endpoint, options);
  try {
    await requireAgreement(judged, judge);
  } catch (error) {
    await judge.client.close();
    throw error;
  }
  return judge;
}

/**
 * The one way a judge is built, for a run and for `judge check`: its client on the endpoint and its
 * vote cache (in the project's state directory unless `cache.dir`; refused where git tracks it).
 */
export async function buildJudge(
  endpoint: ResolvedJudge,
  options: { project: ProjectContext; cache?: JudgeCacheOptions; onRetry?: (notice: RetryNotice) => void },
): Promise<Judge> {
  const { project } = options;
  const cache = new VoteCache(options.cache?.dir ?? JUDGE_CACHE_DIR, {
    read: options.cache?.read ?? true,
    env: project.env,
    within: project.dir,
  });
  await cache.refuseTracked();
  return new Judge(new JudgeClient({ ...endpoint, onRetry: options.onRetry }), cache);
}

async function requireAgreement(scenarios: readonly { agent: string; scenario: SmokeScenario }[], judge: Judge) {
  const measured = await judge.calibrations();
  const problems: string[] = [];
  for (const { agent, scenario } of scenarios) {
    const minAgreement = scenario.judge_min_agreement;
    const minKappa = scenario.judge_min_kappa;
    if (minAgreement === undefined && minKappa === undefined) continue;
    const gate = minAgreement === undefined ? "judge_min_kappa" : "judge_min_agreement";
    for (const { rubric } of judgeRubrics(scenario.expect)) {
      const name = `${agent}/${scenario.name}: ${JSON.stringify(rubric)}`;
      const problem = calibrationProblem(measured[rubric], gate, judge);
      if (problem) {
        problems.push(`${name} ${problem}`);
        continue;
      }
      const last = measured[rubric] as Calibration;
      if (minAgreement !== undefined && last.agreement < minAgreement)
        problems.push(
          `${name} agreed with its human labels ${round(last.agreement)} of the time (${last.checked_at}), below judge_min_agreement ${minAgreement}`,
        );
      if (minKappa !== undefined && (last.kappa_low ?? Number.NEGATIVE_INFINITY) < minKappa)
        problems.push(
          last.kappa_low === null
            ? `${name} has no kappa interval (${last.checked_at}): judge_min_kappa ${minKappa} needs one`
            : `${name} has kappa ${round(last.kappa ?? 0)} whose 95 % interval's lower bound ${round(last.kappa_low)} (${last.checked_at}, over ${last.items}) is below judge_min_kappa ${minKappa}`,
        );
    }
  }
  if (problems.length > 0) {
    throw new ConfigError(`the judge is not trusted for these rubrics:\n  ${problems.join("\n  ")}`, {
      hint: "label transcripts of these rubrics and run `agent-iac judge check FILE` (see the README's judged expectations)",
    });
  }
}

/** Why a rubric's measurement cannot back any gate (never made here, too few labels, one human verdict), or null. */
function calibrationProblem(last: Calibration | undefined, gate: string, judge: Judge): string | null {
  if (!last)
    return `was never measured with ${judge.model} at ${judge.identity.baseUrl} on this machine (a calibration copied from elsewhere, hand-written or made with another judge does not count)`;
  if (last.items < MIN_CALIBRATION_ITEMS)
    return `was measured over ${last.items} labelled transcript(s); ${gate} needs at least ${MIN_CALIBRATION_ITEMS} per rubric`;
  const oneVerdict = oneVerdictOnly({ pass: last.human_pass ?? 0, fail: last.human_fail ?? 0 });
  return oneVerdict ? `cannot pass ${gate}: ${oneVerdict}` : null;
}

const round = (x: number) => Math.round(x * 1000) / 1000;
