// Bounds on what a client can make the simulator hold: every stored value must stay small enough to
// serialize, so no single request can stop the data file from being written (issue 14).
import { HttpError } from "./http.ts";

export const LIMITS = {
  /** Largest request body. */
  bodyBytes: 1024 * 1024,
  /** Deepest nesting of objects and arrays in a request body. */
  bodyDepth: 32,
  /** Largest WebSocket message (a larger one closes the socket with 1009). */
  wsMessageBytes: 64 * 1024,
  /** Events of one conversation: session user turns beyond it are refused. */
  eventsPerConversation: 5000,
  /** `server.error` events stored per conversation for invalid control messages. */
  controlErrorsPerConversation: 20,
  /** post_url deliveries started per second (the rest are recorded as not delivered). */
  deliveriesPerSecond: 10,
  /** Delivery records and hook records kept (oldest dropped). */
  keptRecords: 1000,
  /** Time to receive a whole request (headers and body). */
  requestTimeoutMs: 30_000,
} as const;

/** Nesting depth of a JSON text, counted without parsing it (strings skipped). */
function jsonDepth(text: string): number {
  let depth = 0;
  let max = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 0x5c) i++;
      else if (c === 0x22) inString = false;
    } else if (c === 0x22) inString = true;
    else if (c === 0x7b || c === 0x5b) max = Math.max(max, ++depth);
    else if (c === 0x7d || c === 0x5d) depth--;
  }
  return max;
}

/** The body parser for application/json: the depth bound first, then JSON.parse. */
export function parseJsonBody(text: string): unknown {
  if (jsonDepth(text) > LIMITS.bodyDepth) {
    throw new HttpError(400, `body: nested deeper than ${LIMITS.bodyDepth} levels (the simulator's limit)`, {
      field: "body",
    });
  }
  try {
    return JSON.parse(text);
  } catch {
    throw new HttpError(400, "body: not valid JSON", { field: "body" });
  }
}
