// What `start` checks before it deploys (issue 42): nothing is created anywhere until the service
// at the stack's address is known to be the one its agents live in, and a judged smoke has a judge.
import { judgeRubrics } from "../definitions/index.ts";
import { requireJudge } from "../settings/index.ts";
import { checkComparisonBase } from "./comparison-base.ts";
import { checkReusedSimulator, type LocalService } from "./local-service.ts";
import type { StackSession } from "./session.ts";

/**
 * Before `pulumi up`: a simulator reused at the stack's address must know every agent the stack
 * holds (else a ConfigError naming it and the ways out: an up would create the changed agents in a
 * service the others do not live in); a pending comparison base must name only versions the stack
 * held (comparison-base.ts); with `smoke`, scenarios with judged expectations need a judge (a
 * ConfigError, before anything is deployed, instead of after).
 */
export async function checkBeforeDeploy(
  session: StackSession,
  service: LocalService,
  options: { smoke: boolean },
): Promise<void> {
  const held = await session.held();
  await checkReusedSimulator(service, held.agents, session);
  // Also without smoke: the deploy carries the pending base on, with what it saw of the stack.
  await checkComparisonBase(session, held);
  if (!options.smoke) return;
  const definitions = await session.scenarioAgents(held);
  const judged = definitions.flatMap((agent) =>
    agent.smoke.filter((s) => judgeRubrics(s.expect).length > 0).map((s) => `${agent.key}/${s.name}`),
  );
  if (judged.length === 0) return;
  const shown =
    judged.length > 3 ? `${judged.slice(0, 3).join(", ")} and ${judged.length - 3} more` : judged.join(", ");
  requireJudge(
    session.judge,
    `scenario(s) ${shown} have judged expectations (expect.judge); nothing was deployed`,
    session.name,
  );
}
