// The response shapes of the simulator-only routes a client reads (GET /_simulator/health, /info,
// /agents, /deliveries): the routes answer with these types, and the use cases' admin client
// (src/usecases/simulator-admin.ts) parses with these schemas, tolerantly, like any service answer.
import { z } from "zod";

export const simulatorHealth = z.looseObject({
  ok: z.boolean(),
  simulator: z.string(),
  profile: z.string(),
  service_id: z.string(),
});
export type SimulatorHealth = z.infer<typeof simulatorHealth>;

export const simulatorInfo = z.looseObject({
  service_id: z.string().optional(),
  pid: z.number().optional(),
  /** The data file, absolute; null for an in-memory simulator. */
  data_file: z.string().nullable().optional(),
  /** The working directory of its process (the checkout it was started in). */
  cwd: z.string().optional(),
  started_at: z.string().optional(),
});
export type SimulatorInfo = z.infer<typeof simulatorInfo>;

const listedAgent = z.looseObject({ id: z.string(), version_id: z.string().optional() });
export const simulatorAgents = z.looseObject({
  conversational: z.array(listedAgent).default([]),
  procedural: z.array(listedAgent).default([]),
});

export const simulatorDeliveries = z.looseObject({
  deliveries: z
    .array(
      z.looseObject({
        procedure_id: z.string(),
        /** The conversation whose procedure it was (lets a run report only its own deliveries). */
        conversation_id: z.string().optional(),
        url: z.string(),
        ok: z.boolean(),
        status: z.number().nullable().optional(),
        error: z.string().nullable().optional(),
      }),
    )
    .default([]),
});
export type SimulatorDelivery = z.infer<typeof simulatorDeliveries>["deliveries"][number];
