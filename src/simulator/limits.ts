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

const strictUtf8 = new TextDecoder("utf-8", { fatal: true });

/**
 * The body parser for application/json, as strict as the service may be: UTF-8 that decodes (no
 * silent replacement characters), the depth bound, JSON.parse, then no key twice in one object
 * (JSON.parse keeps the last, so a client and the simulator could read different values).
 */
export function parseJsonBody(bytes: Uint8Array): unknown {
  let text: string;
  try {
    text = strictUtf8.decode(bytes);
  } catch {
    throw new HttpError(400, "body: not valid UTF-8", { field: "body" });
  }
  if (jsonDepth(text) > LIMITS.bodyDepth) {
    throw new HttpError(400, `body: nested deeper than ${LIMITS.bodyDepth} levels (the simulator's limit)`, {
      field: "body",
    });
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw new HttpError(400, "body: not valid JSON", { field: "body" });
  }
  const duplicate = duplicateKey(text);
  if (duplicate !== undefined) {
    throw new HttpError(400, `${duplicate}: written twice in one object (a key must be unique)`, { field: duplicate });
  }
  return value;
}

type Container = { keys?: Set<string>; expectKey: boolean; at: string; index: number; key?: string };

const join = (at: string, key: string) => (at === "" ? key : `${at}.${key}`);

/**
 * The path of the first key written twice in one object of a valid JSON text (`config.runtime.model`).
 * Keys are compared as JSON reads them (`"a"` and `"\u0061"` are one key).
 */
function duplicateKey(text: string): string | undefined {
  const stack: Container[] = [];
  const childPath = () => {
    const top = stack.at(-1);
    if (!top) return "";
    return top.keys ? join(top.at, top.key ?? "") : `${top.at}[${top.index}]`;
  };
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (c === "{" || c === "[") {
      stack.push({
        ...(c === "{" ? { keys: new Set<string>() } : {}),
        expectKey: c === "{",
        at: childPath(),
        index: 0,
      });
    } else if (c === "}" || c === "]") stack.pop();
    else if (c === ",") {
      const top = stack.at(-1);
      if (top?.keys) top.expectKey = true;
      else if (top) top.index++;
    } else if (c === '"') {
      const start = i;
      for (i++; text[i] !== '"'; i++) if (text[i] === "\\") i++;
      const top = stack.at(-1);
      if (top?.keys && top.expectKey) {
        const key = JSON.parse(text.slice(start, i + 1)) as string;
        if (top.keys.has(key)) return join(top.at, key);
        top.keys.add(key);
        top.key = key;
        top.expectKey = false;
      }
    }
  }
  return undefined;
}
