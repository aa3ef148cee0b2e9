// The service contract: zod schemas for every resource, request, response and event of the service
// interface (../shared/service-interface.md) and their z.infer types. The one source of every type of
// the service: imported by the client, the simulator, the agent definitions and smoke.
//
// Writing is strict: request schemas reject unknown keys and wrong types, so nothing the
// interface does not name is ever sent. Reading is tolerant: response schemas keep unknown
// fields (z.looseObject), value sets the interface calls "not shown" are plain strings, and
// fields whose type is "not shown" are z.unknown().
import { z } from "zod";

/** The single allowed `Service-Version` for conversation, procedure and agent-creation operations. */
export { issuesText } from "./issues.ts";

export const SERVICE_VERSION = "2025-06-19";

const dateTime = z.iso.datetime({ offset: true });
/** `YYYY-MM-DD`: the shape of `Service-Version`, free-form on `GET /feedbacks`. */
export const serviceVersionShape = z.string().regex(/^\d{4}-\d{2}-\d{2}$/, "must be a date (YYYY-MM-DD)");

const proceduralAgentId = z.string().regex(/^pa_[A-Za-z0-9_-]+$/, "must look like pa_<suffix>");
// The pinned-version rule, written once: an agent's id (`ca_` conversational, `pa_` procedural),
// `@v`, and a version number from 1.
const SUFFIX = "_[A-Za-z0-9_-]+";
const VERSION = "@v([1-9][0-9]*)";
const PINNED_VERSION = new RegExp(`^((?:ca|pa)${SUFFIX})${VERSION}$`);

/** `ca_<suffix>` (the released version) or `ca_<suffix>@v<n>` (a pinned version). */
export const conversationalAgentRef = z
  .string()
  .regex(new RegExp(`^ca${SUFFIX}(${VERSION})?$`), "must look like ca_<suffix> or ca_<suffix>@v<n>");

/** A pinned version id (`ca_x@vN`, `pa_x@vN`, N ≥ 1) as its agent id and version number; undefined for anything else. */
export function pinnedVersion(id: unknown): { agentId: string; version: number } | undefined {
  const match = typeof id === "string" ? PINNED_VERSION.exec(id) : null;
  return match?.[1] && match[2] ? { agentId: match[1], version: Number(match[2]) } : undefined;
}

/** One exact version of an agent (`ca_x@vN`): what smoke calls pin and traffic is attributed to. */
export const isPinnedVersionId = (id: unknown): id is string => pinnedVersion(id) !== undefined;

/** The agent id of a version id (`ca_x@v2` → `ca_x`); a bare agent id is its own. */
export const agentIdOf = (id: string): string => pinnedVersion(id)?.agentId ?? id;

/**
 * How a call's events reach the client: the conversation's event stream (SSE) or its WebSocket
 * session, which also carries a caller's lines. src/api's STREAMS opens each.
 */
export const TRANSPORTS = ["sse", "ws"] as const;
export type Transport = (typeof TRANSPORTS)[number];
export const modelName = z
  .string()
  .regex(/^[^/\s]+\/[^\s]+$/, "must look like <vendor>/<model name>, e.g. openai/gpt-4o");

// ---- Agent configuration (written: strict) ---------------------------------------------------

const prompt = z.strictObject({ text: z.string(), type: z.string() });
const toolRef = z.strictObject({ ns: z.string(), name: z.string() });

export const conversationalAgentConfig = z.strictObject({
  personas: z
    .array(
      z.strictObject({
        name: z.string(),
        voice: z.strictObject({ id: z.string(), provider: z.string() }).optional(),
      }),
    )
    .optional(),
  voice: z
    .strictObject({
      boosted_keywords: z.array(z.string()).optional(),
      ambient_sound: z.unknown().optional(),
      busy_sound: z.unknown().optional(),
    })
    .optional(),
  runtime: z
    .strictObject({
      model: modelName.optional(),
      prompt: prompt.optional(),
      variables: z
        .array(
          z.strictObject({
            name: z.string(),
            description: z.string().optional(),
            default_value: z.unknown().optional(),
          }),
        )
        .optional(),
    })
    .optional(),
  tool: z
    .strictObject({
      tools: z.array(toolRef).optional(),
      transfers: z.array(z.strictObject({ id: z.string() })).optional(),
    })
    .optional(),
  language: z
    .strictObject({
      default_language: z.string().optional(),
      supported_languages: z.array(z.string()).optional(),
    })
    .optional(),
  channel: z.strictObject({ is_voicemail_enabled: z.boolean().optional() }).optional(),
});
export type ConversationalAgentConfig = z.infer<typeof conversationalAgentConfig>;

export const proceduralAgentConfig = z.strictObject({
  filter_statuses: z.array(z.string()).optional(),
  filter_condition: z.unknown().optional(),
  runtime: z
    .strictObject({
      model: modelName.optional(),
      reasoning_effort: z.string().optional(),
      prompt: prompt.optional(),
    })
    .optional(),
  tool: z.strictObject({ tools: z.array(toolRef).optional() }).optional(),
  output: z
    .strictObject({
      chat_channel: z.unknown().optional(),
      output_schema: z.record(z.string(), z.unknown()).nullable().optional(),
      post_url: z.url().nullable().optional(),
    })
    .optional(),
});
export type ProceduralAgentConfig = z.infer<typeof proceduralAgentConfig>;

// ---- Requests (written: strict) --------------------------------------------------------------

export const createConversationalAgentRequest = z.strictObject({
  name: z.string().min(1),
  description: z.string(),
  config: conversationalAgentConfig,
  postprocess_agents: z.array(proceduralAgentId).optional(),
});
export type CreateConversationalAgentRequest = z.infer<typeof createConversationalAgentRequest>;

export const createProceduralAgentRequest = z.strictObject({
  name: z.string().min(1),
  description: z.string(),
  config: proceduralAgentConfig,
});
export type CreateProceduralAgentRequest = z.infer<typeof createProceduralAgentRequest>;

const phoneChannelRequest = z.strictObject({
  type: z.literal("phone"),
  callee_no: z.string().min(1),
  caller_no: z.string().nullable().optional(),
  priority: z.string().optional(),
});

export const createConversationRequest = z.strictObject({
  agent_id: conversationalAgentRef,
  channel: phoneChannelRequest,
  livemode: z.boolean().optional(),
  override_config: conversationalAgentConfig.optional(),
  context: z.record(z.string(), z.unknown()).optional(),
});
export type CreateConversationRequest = z.infer<typeof createConversationRequest>;

// ---- List queries (written: strict) ----------------------------------------------------------

export const conversationListQuery = z.strictObject({
  cursor: z.string().optional(),
  created_at_gte: dateTime.optional(),
  created_at_lt: dateTime.optional(),
  completed_at_gte: dateTime.optional(),
  completed_at_lt: dateTime.optional(),
});
export type ConversationListQuery = z.infer<typeof conversationListQuery>;

export const procedureListQuery = z.strictObject({
  agent_id: z.string().optional(),
  conversation_id: z.string().optional(),
  created_at_gte: dateTime.optional(),
  created_at_lt: dateTime.optional(),
  cursor: z.string().optional(),
});
export type ProcedureListQuery = z.infer<typeof procedureListQuery>;

export const conversationProceduresQuery = z.strictObject({ cursor: z.string().optional() });

export const feedbackListQuery = z.strictObject({
  service_id: z.string().min(1),
  cursor: z.string().optional(),
  // Typed as plain strings in the interface (unlike the other lists' date-time filters).
  created_at_gte: z.string().optional(),
  created_at_lt: z.string().optional(),
});
export type FeedbackListQuery = z.infer<typeof feedbackListQuery>;

// ---- Responses (read: tolerant) --------------------------------------------------------------

export const createAgentResponse = z.looseObject({ id: z.string(), version_id: z.string() });
export type CreateAgentResponse = z.infer<typeof createAgentResponse>;

const phoneChannelResponse = z.looseObject({
  type: z.string(),
  callee_no: z.string().nullable().optional(),
  caller_no: z.string().nullable().optional(),
  priority: z.string().optional(),
  token: z.string(),
  events_url: z.string(),
});

export const createConversationResponse = z.looseObject({ id: z.string(), channel: phoneChannelResponse });
export type CreateConversationResponse = z.infer<typeof createConversationResponse>;

export const conversation = z.looseObject({
  id: z.string(),
  agent_id: z.string(),
  livemode: z.boolean(),
  created_at: z.string(),
  direction: z.string().optional(),
  status: z.string(),
  custom_fields: z.record(z.string(), z.unknown()).optional(),
  customer_id: z.unknown().optional(),
  channel_type: z.unknown().optional(),
  started_at: z.string().nullable().optional(),
  completed_at: z.string().nullable().optional(),
  failure_reason: z.unknown().optional(),
  duration_sec: z.unknown().optional(),
  sentiment: z.unknown().optional(),
});
export type Conversation = z.infer<typeof conversation>;

const procedure = z.looseObject({
  id: z.string(),
  livemode: z.boolean().optional(),
  name: z.string(),
  conversation_id: z.string(),
  agent_id: z.string(),
  created_at: z.string(),
  status: z.string(),
  output: z.unknown().optional(),
  error: z.unknown().optional(),
});
export type Procedure = z.infer<typeof procedure>;

const feedback = z.looseObject({
  id: z.string(),
  conversation_id: z.string(),
  created_at: z.string(),
  rating: z.string(),
  created_by_user_id: z.string().optional(),
  created_by_user_name: z.string().optional(),
  reasons: z.array(z.string()).optional(),
  comment: z.string().optional(),
});
export type Feedback = z.infer<typeof feedback>;

const cursor = z.string().nullable().optional();
export const conversationList = z.looseObject({ data: z.array(conversation), cursor });
export const procedureList = z.looseObject({ page: z.array(procedure), cursor });
export const feedbackList = z.looseObject({
  data: z.array(feedback),
  cursor,
  reasons: z.record(z.string(), z.unknown()).optional(),
});
export type ConversationList = z.infer<typeof conversationList>;
export type ProcedureList = z.infer<typeof procedureList>;
export type FeedbackList = z.infer<typeof feedbackList>;

// ---- Events (read: tolerant) -----------------------------------------------------------------

/** Any event: known types are narrowed with `knownPayload`, unknown ones are kept as they are. */
export const eventEnvelope = z.looseObject({
  id: z.string(),
  created_at: z.string(),
  payload: z.looseObject({ type: z.string() }),
});
export type EventEnvelope = z.infer<typeof eventEnvelope>;

export const knownPayload = z.discriminatedUnion("type", [
  z.looseObject({ type: z.literal("agent.message.delta"), generation_id: z.string(), text_delta: z.string() }),
  z.looseObject({ type: z.literal("agent.message.completed"), generation_id: z.string(), text: z.string() }),
  z.looseObject({
    type: z.literal("agent.tool_call.created"),
    call_id: z.string(),
    name: z.string(),
    arguments: z.unknown().optional(),
  }),
  z.looseObject({
    type: z.literal("agent.tool_call.returned"),
    call_id: z.string(),
    name: z.string(),
    arguments: z.unknown().optional(),
    result: z.unknown().optional(),
    error: z.unknown().optional(),
  }),
  z.looseObject({ type: z.literal("user.message.received"), text: z.string() }),
  z.looseObject({ type: z.literal("conversation.started") }),
  z.looseObject({ type: z.literal("conversation.ended") }),
  z.looseObject({ type: z.literal("server.error"), error: z.unknown().optional() }),
]);

export { hostHeaderName, isLoopbackHost } from "./loopback.ts";
export { deepMerge } from "./merge.ts";
