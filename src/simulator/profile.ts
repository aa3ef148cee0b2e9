// Service profiles: the interface leaves many choices open ("not shown"). A profile is one value for
// each of them, passed to the plugins and runners; the routes are the same for every profile.
// `default` is the simulator's documented behaviour; `variant` takes the other legal value of every
// open choice a client depends on, so a client that only works against `default` fails on it.
// The table in README.md lists both.
import type { EventEnvelope } from "../contract/index.ts";

export type ProfileName = "default" | "variant";
export const PROFILE_NAMES: readonly ProfileName[] = ["default", "variant"];

type CreatedKind = "conversational_agent" | "procedural_agent" | "conversation";

export type Profile = {
  name: ProfileName;
  /** Status of a successful create (agents, conversations). */
  createStatus: 200 | 201;
  /** Fields added to a create response beyond the documented ones. */
  createExtras(kind: CreatedKind, createdAt: string): Record<string, unknown>;
  /** The response header that carries the request id. */
  requestIdHeader: string;
  /** An error response body. */
  errorBody(status: number, message: string, requestId: string, field?: string): unknown;
  sse: {
    contentType: string;
    /** "\n" or "\r\n". */
    eol: string;
    /** An `event: <payload.type>` line per message. */
    eventLines: boolean;
    /** `id:` is the event's 1-based position (numeric) instead of the envelope's id. */
    numericIds: boolean;
    /** The JSON split across two `data:` lines (joined by a newline: still one JSON text). */
    splitData: boolean;
    /** A comment line before the first event, and a `retry:` field. */
    preamble: string[];
  };
  /** Payloads emitted beside the documented ones (unknown types a consumer must skip). */
  extraEvents: boolean;
  /** Fields added to every event envelope. */
  envelopeExtras(conversationId: string, position: number): Record<string, unknown>;
  /** Tool-call `arguments` as a JSON-encoded string instead of an object. */
  argumentsAsString: boolean;
  /** Conversation statuses between `queued` and the final one. */
  conversationSteps: string[];
  /** Procedure statuses between `pending` and the final one, each held for `procedureStepMs`. */
  procedureSteps: string[];
  procedureStepMs: number;
  /** Items per page when the options give none. */
  pageSize: number;
  /** A next-page cursor on every non-empty page: the last page is an empty one. */
  trailingEmptyPage: boolean;
  /** A timestamp for "now", or for `at` (epoch ms; seeded traffic is dated in the past). */
  now(at?: number): string;
  /** Nullable fields filled as objects (customer_id, sentiment, failure_reason). */
  nullableObjects: boolean;
  /**
   * A conversation's `agent_id` ("agent that handled the conversation"): the version that handled
   * it (`ca_x@v2`), or the bare agent id (`ca_x`).
   */
  conversationAgentId: "version" | "agent";
  /** The session's control messages (their shape is not shown by the interface). */
  control: ControlShapes;
};

/** A control message as the simulator reads it: a caller's line, the end of the call, or not understood. */
type ControlMessage = { say: string } | { end: true } | { unknown: string | undefined };

type ControlShapes = {
  read(message: unknown): ControlMessage;
  /** The accepted shapes, as written in the `server.error` that refuses another one. */
  accepted: string;
};

const record = (value: unknown): Record<string, unknown> =>
  value && typeof value === "object" && !Array.isArray(value) ? (value as Record<string, unknown>) : {};

/** `{"type": "user.message", "text": "…"}` and `{"type": "end"}`. */
const defaultControl: ControlShapes = {
  read(message) {
    const { type, text } = record(message);
    if (type === "user.message" && typeof text === "string") return { say: text };
    if (type === "end") return { end: true };
    return { unknown: typeof type === "string" ? type : undefined };
  },
  accepted: '{"type": "user.message", "text": "…"} and {"type": "end"}',
};

/** `{"action": "say", "message": {"content": "…"}}` and `{"action": "hangup"}`. */
const variantControl: ControlShapes = {
  read(message) {
    const { action, message: said } = record(message);
    const content = record(said).content;
    if (action === "say" && typeof content === "string") return { say: content };
    if (action === "hangup") return { end: true };
    return { unknown: typeof action === "string" ? action : undefined };
  },
  accepted: '{"action": "say", "message": {"content": "…"}} and {"action": "hangup"}',
};

const defaultProfile: Profile = {
  name: "default",
  createStatus: 200,
  createExtras: () => ({}),
  requestIdHeader: "request-id",
  errorBody: (status, message, requestId, field) => ({
    error: { type: errorType(status), message, ...(field === undefined ? {} : { field }), request_id: requestId },
  }),
  sse: {
    contentType: "text/event-stream; charset=utf-8",
    eol: "\n",
    eventLines: false,
    numericIds: false,
    splitData: false,
    preamble: [],
  },
  extraEvents: false,
  envelopeExtras: () => ({}),
  argumentsAsString: false,
  conversationSteps: ["in_progress"],
  procedureSteps: [],
  procedureStepMs: 0,
  pageSize: 20,
  trailingEmptyPage: false,
  now: (at = Date.now()) => new Date(at).toISOString(),
  nullableObjects: false,
  conversationAgentId: "version",
  control: defaultControl,
};

const variantProfile: Profile = {
  name: "variant",
  createStatus: 201,
  createExtras: (kind, createdAt) => ({
    object: kind,
    created_at: createdAt,
    ...(kind === "conversation" ? { status: "queued" } : { version: 1 }),
  }),
  requestIdHeader: "x-request-id",
  // FastAPI's shape; the request id only in the header.
  errorBody: (_status, message) => ({ detail: message }),
  sse: {
    contentType: "Text/Event-Stream; charset=utf-8",
    eol: "\r\n",
    eventLines: true,
    numericIds: true,
    splitData: true,
    preamble: [": stream opened", "retry: 3000"],
  },
  extraEvents: true,
  envelopeExtras: (conversationId, position) => ({
    object: "event",
    conversation_id: conversationId,
    sequence: position,
  }),
  argumentsAsString: true,
  conversationSteps: ["ringing", "active"],
  procedureSteps: ["accepted", "working"],
  procedureStepMs: 300,
  pageSize: 2,
  trailingEmptyPage: true,
  // Microseconds and an explicit offset: 2026-01-02T03:04:05.678000+00:00.
  now: (at = Date.now()) => new Date(at).toISOString().replace("Z", "000+00:00"),
  nullableObjects: true,
  conversationAgentId: "agent",
  control: variantControl,
};

export const PROFILES: Record<ProfileName, Profile> = { default: defaultProfile, variant: variantProfile };

function errorType(status: number): string {
  if (status === 400) return "invalid_request";
  if (status === 401) return "authentication_error";
  if (status === 403) return "permission_error";
  if (status === 404) return "not_found";
  if (status === 429) return "rate_limited";
  if (status >= 500) return "server_error";
  return "error";
}

/** One SSE message for an envelope at 1-based `position`, framed as the profile says. */
export function sseFrame(profile: Profile, envelope: EventEnvelope, position: number): string {
  const { eol, eventLines, numericIds, splitData } = profile.sse;
  const lines: string[] = [];
  if (eventLines) lines.push(`event: ${envelope.payload.type}`);
  lines.push(`id: ${numericIds ? position : envelope.id}`);
  const json = JSON.stringify(envelope);
  // The envelope's first member is its id: split right after it, outside every string.
  const head = `{"id":${JSON.stringify(envelope.id)},`;
  if (splitData && json.startsWith(head)) lines.push(`data: ${head}`, `data: ${json.slice(head.length)}`);
  else lines.push(`data: ${json}`);
  return lines.join(eol) + eol + eol;
}

/** The position after which a stream resumes for a `Last-Event-ID` (-1: from the start). */
export function resumeAfter(
  profile: Profile,
  events: readonly EventEnvelope[],
  lastEventId: string | undefined,
): number {
  if (lastEventId === undefined) return -1;
  const at = events.findIndex((e) => e.id === lastEventId);
  if (at !== -1) return at;
  if (profile.sse.numericIds) {
    const n = Number(lastEventId);
    return Number.isInteger(n) && n >= 1 && n <= events.length ? n - 1 : -1;
  }
  return -1;
}
