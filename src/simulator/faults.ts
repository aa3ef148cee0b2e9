// Fault injection (POST /_simulator/faults): one fault per call, faults add up.
//
// Selection is counter-based, not random, so tests are stable: a fault with `rate` r affects the
// n-th matching request (n = 1, 2, …) exactly when floor(n·r) > floor((n−1)·r). With r = 0.3 that
// is the 4th, 7th and 10th of every 10 matching requests; r = 1 (the default) affects every one.
import { z } from "zod";

export const faultRequest = z.strictObject({
  route: z.string().min(1),
  rate: z.number().gt(0).max(1).default(1),
  count: z.number().int().positive().optional(),
  status: z.number().int().min(400).max(599).optional(),
  retry_after_s: z.number().nonnegative().optional(),
  latency_ms: z.number().int().nonnegative().max(600_000).optional(),
  reset_after_handled: z.boolean().optional(),
  drop_stream_after_events: z.number().int().nonnegative().optional(),
  stall_stream_after_events: z.number().int().nonnegative().optional(),
});
export type FaultRequest = z.infer<typeof faultRequest>;

export type Fault = FaultRequest & { id: string; matched: number; affected: number };

/** What the faults that selected one request ask for, summed. */
export type FaultEffect = {
  latencyMs: number;
  status?: { code: number; retryAfterS?: number | undefined; faultId: string };
  resetAfterHandled: boolean;
  dropAfterEvents?: number;
  stallAfterEvents?: number;
};

export class Faults {
  #faults: Fault[] = [];
  #next = 1;

  add(request: FaultRequest): Fault {
    const fault: Fault = { ...request, id: `flt_${this.#next++}`, matched: 0, affected: 0 };
    this.#faults.push(fault);
    return fault;
  }

  clear(): void {
    this.#faults = [];
  }

  list(): Fault[] {
    return this.#faults.map((f) => ({ ...f }));
  }

  /** Counts this request against every fault on its route and returns what the selected ones add up to. */
  select(route: string): FaultEffect | undefined {
    let effect: FaultEffect | undefined;
    for (const fault of this.#faults) {
      if (fault.route !== "*" && fault.route !== route) continue;
      if (fault.count !== undefined && fault.affected >= fault.count) continue;
      fault.matched++;
      if (Math.floor(fault.matched * fault.rate + 1e-9) <= Math.floor((fault.matched - 1) * fault.rate + 1e-9))
        continue;
      fault.affected++;
      effect ??= { latencyMs: 0, resetAfterHandled: false };
      effect.latencyMs += fault.latency_ms ?? 0;
      if (fault.status !== undefined && !effect.status) {
        effect.status = { code: fault.status, retryAfterS: fault.retry_after_s, faultId: fault.id };
      }
      if (fault.reset_after_handled) effect.resetAfterHandled = true;
      if (fault.drop_stream_after_events !== undefined) {
        effect.dropAfterEvents = Math.min(
          effect.dropAfterEvents ?? Number.POSITIVE_INFINITY,
          fault.drop_stream_after_events,
        );
      }
      if (fault.stall_stream_after_events !== undefined) {
        effect.stallAfterEvents = Math.min(
          effect.stallAfterEvents ?? Number.POSITIVE_INFINITY,
          fault.stall_stream_after_events,
        );
      }
    }
    return effect;
  }
}
