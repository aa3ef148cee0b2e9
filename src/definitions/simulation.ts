// `context.simulation` is the local simulator's convention (its fault knobs: failure rate, delays,
// outcomes). A real service passes `context` to the agent as data and nobody plays the caller, so a
// scenario that carries it against a service that is not on a loopback address is worth a warning
// at its file:line: its caller belongs in `caller.turns`.
import type { Diagnostic } from "./diagnostic.ts";
import type { LoadResult } from "./load.ts";

/** A warning at each scenario that carries `context.simulation`, for a stack whose service is at `address`. */
export function simulationWarnings(loaded: LoadResult, address: string): Diagnostic[] {
  const warnings: Diagnostic[] = [];
  for (const agent of loaded.agents) {
    agent.smoke.forEach((scenario, i) => {
      if (scenario.context?.simulation === undefined) return;
      const path = ["smoke", i, "context", "simulation"] as const;
      const where = loaded.locate?.(agent.key, path);
      warnings.push({
        file: where?.file ?? agent.file,
        line: where?.line ?? 1,
        column: where?.column ?? 1,
        field: `smoke[${i}].context.simulation`,
        message: `warning: the local simulator's convention, sent as data to the service at ${address}, where nobody plays the caller: script the caller with caller.turns (transport: ws) and keep context.simulation for the simulator's fault knobs`,
      });
    });
  }
  return warnings;
}
