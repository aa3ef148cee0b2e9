// Which calls a smoke run places: the selected agents' scenarios × iterations, each pinned to a
// version id. Every refusal is an InvalidInputError that says what to change (naming the selection's
// fields, which the CLI words as its flags).
import { isPinnedVersionId } from "../contract/index.ts";
import type { AgentDefinition, SmokeScenario } from "../definitions/index.ts";
import { InvalidInputError } from "../errors/index.ts";
import type { HeldAgent } from "../provider/index.ts";
import type { PlannedCall, ProceduralTarget } from "./call.ts";

export type Selection = {
  agents?: string[];
  scenarios?: string[];
  /** A pin of the user's own, for the one selected agent. */
  versionId?: string;
  allowUnpinned?: boolean;
  live?: boolean;
  /**
   * For a report of calls that will not be placed (a deploy that stopped): an agent the stack does
   * not hold is planned under this label instead of refused.
   */
  notDeployed?: string;
};

/** The selection's conversational agents (all when it names none). */
function chosenAgents(definitions: AgentDefinition[], selection: Selection): AgentDefinition[] {
  const conversational = definitions.filter((d) => d.kind === "conversational");
  return selection.agents?.length ? conversational.filter((d) => selection.agents?.includes(d.key)) : conversational;
}

/** An agent's scenarios that the selection names (all when it names none). */
function chosenScenarios(definition: AgentDefinition, selection: Selection): SmokeScenario[] {
  return definition.smoke.filter((s) => !selection.scenarios?.length || selection.scenarios.includes(s.name));
}

/** The selection's scenarios with their agents, unchecked (a replay places no call and pins nothing). */
export function selectedScenarios(
  definitions: AgentDefinition[],
  selection: Selection,
): { agent: string; scenario: SmokeScenario }[] {
  return chosenAgents(definitions, selection).flatMap((d) =>
    chosenScenarios(d, selection).map((scenario) => ({ agent: d.key, scenario })),
  );
}

export function planCalls(
  definitions: AgentDefinition[],
  held: Record<string, HeldAgent> | undefined,
  selection: Selection,
): PlannedCall[] {
  const conversational = definitions.filter((d) => d.kind === "conversational");
  for (const key of selection.agents ?? []) {
    const known = definitions.find((d) => d.key === key);
    if (!known) {
      throw new InvalidInputError(`unknown agent "${key}" (agents: ${conversational.map((d) => d.key).join(", ")})`, {
        field: "agent",
        value: key,
      });
    }
    if (known.kind !== "conversational") {
      throw new InvalidInputError(`agent "${key}" is procedural; only conversational agents take calls`, {
        field: "agent",
        value: key,
      });
    }
  }
  const chosen = chosenAgents(conversational, selection);
  if (selection.versionId !== undefined && chosen.length !== 1) {
    throw new InvalidInputError((name) => `${name("versionId")} pins one agent: select it with ${name("agent")} KEY`, {
      field: "versionId",
      value: selection.versionId,
    });
  }

  const calls: PlannedCall[] = [];
  const matchedScenarios = new Set<string>();
  for (const definition of chosen) {
    const scenarios = chosenScenarios(definition, selection);
    for (const s of scenarios) matchedScenarios.add(s.name);
    if (scenarios.length === 0) continue;
    const versionId = selection.versionId ?? held?.[definition.key]?.version_id ?? selection.notDeployed;
    if (!versionId) {
      throw new InvalidInputError(
        (name) =>
          `no version id for agent "${definition.key}" in the stack: run \`pulumi up\` first, or pass ${name("versionId")}`,
        { field: "versionId" },
      );
    }
    if (!isPinnedVersionId(versionId) && !selection.allowUnpinned) {
      throw new InvalidInputError(
        (name) =>
          `"${versionId}" is not pinned to a version (ca_x@vN): smoke calls target exact versions; pass ${name("allowUnpinned")} to call the released version`,
        { field: "versionId", value: versionId },
      );
    }
    const procedural = proceduralTargets(definitions, held, versionId === held?.[definition.key]?.version_id);
    for (const scenario of scenarios) {
      if (scenario.livemode && !selection.live) {
        throw new InvalidInputError(
          (name) =>
            `scenario "${definition.key}/${scenario.name}" places a live call (livemode: true): pass ${name("live")}`,
          { field: "live" },
        );
      }
      for (let iteration = 1; iteration <= scenario.iterations; iteration++) {
        calls.push({
          agent: definition.key,
          scenario,
          iteration,
          versionId,
          procedural,
          live: Boolean(selection.live),
        });
      }
    }
  }
  for (const name of selection.scenarios ?? []) {
    if (!matchedScenarios.has(name)) {
      throw new InvalidInputError(`no scenario named "${name}" in the selected agents`, {
        field: "scenario",
        value: name,
      });
    }
  }
  if (calls.length === 0)
    throw new InvalidInputError("no smoke scenarios to run: add `smoke:` scenarios to a conversational agent");
  return calls;
}

/**
 * How each procedural agent's procedures are recognised. The stack's current version links the
 * procedural agents the stack holds: match by their ids. Another version (an older one, called
 * with --version-id) links whatever was current when it was made, whose ids the stack no longer
 * knows: match by the procedural agent's name, which the service reports on every procedure.
 */
function proceduralTargets(
  definitions: AgentDefinition[],
  held: Record<string, HeldAgent> | undefined,
  currentVersion: boolean,
): Record<string, ProceduralTarget> {
  return Object.fromEntries(
    definitions
      .filter((d) => d.kind === "procedural")
      .map((d): [string, ProceduralTarget] => {
        const id = held?.[d.key]?.id;
        const matchBy = currentVersion && id ? "agent_id" : "name";
        return [d.key, { ...(id ? { id } : {}), name: d.name, matchBy }];
      }),
  );
}
