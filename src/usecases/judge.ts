// The judge a run needs: none when no planned scenario has judged expectations; a configuration
// error (before any request) when one does and no judge is configured, or when a rubric's measured
// agreement is missing or below its scenario's judge_min_agreement.

import type { RetryNotice } from "../api/index.ts";
import { callerCheckRubric, judgeRubrics, type SmokeScenario } from "../definitions/index.ts";
import { ConfigError } from "../errors/index.ts";
import { DEFAULT_CACHE_DIR, Judge, JudgeClient, MIN_CALIBRATION_ITEMS, VoteCache } from "../judge/index.ts";
import { type JudgeSettings, type ProjectContext, requireJudge } from "../settings/index.ts";

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
  const { project } = options;
  const cache = new VoteCache(options.cache?.dir ?? DEFAULT_CACHE_DIR, {
    read: options.cache?.read ?? true,
    env: project.env,
    within: project.dir,
  });
  await cache.refuseTracked();
  const judge = new Judge(new JudgeClient({ ...endpoint, onRetry: options.onRetry }), cache);
  try {
    await requireAgreement(judged, judge);
  } catch (error) {
    await judge.client.close();
    throw error;
  }
  return judge;
}

async function requireAgreement(scenarios: readonly { agent: string; scenario: SmokeScenario }[], judge: Judge) {
  const measured = await judge.calibrations();
  const problems: string[] = [];
  for (const { agent, scenario } of scenarios) {
    const min = scenario.judge_min_agreement;
    if (min === undefined) continue;
    for (const { rubric } of judgeRubrics(scenario.expect)) {
      const last = measured[rubric];
      if (!last)
        problems.push(
          `${agent}/${scenario.name}: ${JSON.stringify(rubric)} was never measured with ${judge.model} at ${judge.identity.baseUrl} on this machine (a calibration copied from elsewhere, hand-written or made with another judge does not count)`,
        );
      else if (last.items < MIN_CALIBRATION_ITEMS)
        problems.push(
          `${agent}/${scenario.name}: ${JSON.stringify(rubric)} was measured over ${last.items} labelled transcript(s); judge_min_agreement needs at least ${MIN_CALIBRATION_ITEMS} per rubric`,
        );
      else if (last.agreement < min)
        problems.push(
          `${agent}/${scenario.name}: ${JSON.stringify(rubric)} agreed with its human labels ${round(last.agreement)} of the time (${last.checked_at}), below judge_min_agreement ${min}`,
        );
    }
  }
  if (problems.length > 0) {
    throw new ConfigError(`the judge is not trusted for these rubrics:\n  ${problems.join("\n  ")}`, {
      hint: "label transcripts of these rubrics and run `agent-iac judge check FILE` (see the README's judged expectations)",
    });
  }
}

const round = (x: number) => Math.round(x * 1000) / 1000;
