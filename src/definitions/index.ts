// Agent files (agents/<key>.yaml, optional agents/<key>.<stack>.yaml overlays) → validated agent
// definitions, or every problem at its file:line. The only way other folders read agent files.
export { type Diagnostic, formatDiagnostic } from "./diagnostic.ts";
export { agentInputProblems } from "./inputs.ts";
export { type FieldProblem, fieldProblems } from "./issues.ts";
export {
  type AgentDefinition,
  type FieldLocator,
  type LoadResult,
  loadAgents,
  loadConfigFile,
  type SmokeScenario,
} from "./load.ts";
export type { FieldLocation } from "./locate.ts";
export { type PatternParts, regexParts } from "./patterns.ts";
export { type DeclaredOptions, declaredAgents, SCENARIO_DIR, scenariosInText } from "./scenarios.ts";
export {
  agentJsonSchema,
  agentKey,
  type CallerSpec,
  COMPARE_DEFAULTS,
  callerCheckRubric,
  DEFAULT_JUDGE_VOTES,
  DEFAULT_PERSONA_TURNS,
  type Expectations,
  type JudgeRubric,
  judgeRubrics,
  type LatencyBounds,
  requiredPasses,
} from "./schema.ts";
export { simulationWarnings } from "./simulation.ts";
export { MAX_DEPTH, MAX_PROMPT_BYTES, MAX_YAML_BYTES } from "./source.ts";
