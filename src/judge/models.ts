// Which model names a run depends on that move under a pinned gate: the judge's when a scenario is
// judged, the persona's when one plays a persona or rephrases scripted turns.
import { judgeRubrics, type SmokeScenario } from "../definitions/index.ts";
import {
  type CallerShapeSettings,
  JUDGE_KEYS,
  type JudgeSettings,
  movingModelWarnings,
  PERSONA_KEYS,
} from "../settings/index.ts";

/**
 * Warnings for the model names these scenarios use that move (`latest`, `preview`, no version or
 * date): the judge's when a scenario is judged, the persona's when one plays a persona (said once
 * when it is the judge's model).
 */
export function movingModels(
  scenarios: readonly SmokeScenario[],
  judge: JudgeSettings,
  caller: CallerShapeSettings | undefined,
): string[] {
  const judged = scenarios.some((s) => judgeRubrics(s.expect).length > 0);
  const persona = scenarios.some((s) => s.caller?.persona !== undefined || s.caller?.variations !== undefined);
  const personaModel = caller?.persona?.model;
  return movingModelWarnings([
    ...(judged ? [{ setting: JUDGE_KEYS.model.config, model: judge.model }] : []),
    ...(persona && !(judged && personaModel === judge.model)
      ? [{ setting: PERSONA_KEYS.model.config, model: personaModel }]
      : []),
  ]);
}
