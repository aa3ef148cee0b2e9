// The client: each resource is a thin object over the one request core.
import type { z } from "zod";
import {
  type Conversation,
  type ConversationList,
  type ConversationListQuery,
  type CreateAgentResponse,
  type CreateConversationalAgentRequest,
  type CreateConversationRequest,
  type CreateConversationResponse,
  type CreateProceduralAgentRequest,
  conversationList,
  conversationListQuery,
  conversationProceduresQuery,
  createAgentResponse,
  createConversationalAgentRequest,
  createConversationRequest,
  createConversationResponse,
  createProceduralAgentRequest,
  type Feedback,
  type FeedbackList,
  type FeedbackListQuery,
  feedbackList,
  feedbackListQuery,
  type Procedure,
  type ProcedureList,
  type ProcedureListQuery,
  procedureList,
  procedureListQuery,
} from "../contract/index.ts";
import { type ClientOptions, Core, type RequestOptions } from "./core.ts";
import { EventStream, type EventStreamOptions } from "./events.ts";
import { type Page, PagedList } from "./paging.ts";
import { pathFor } from "./path.ts";
import { Session, type SessionOptions } from "./session.ts";

export type Client = {
  readonly baseUrl: string;
  conversationalAgents: {
    create(body: CreateConversationalAgentRequest, options?: RequestOptions): Promise<CreateAgentResponse>;
  };
  proceduralAgents: {
    create(body: CreateProceduralAgentRequest, options?: RequestOptions): Promise<CreateAgentResponse>;
  };
  conversations: {
    create(body: CreateConversationRequest, options?: RequestOptions): Promise<CreateConversationResponse>;
    list(query?: ConversationListQuery, options?: RequestOptions): PagedList<Conversation, ConversationList>;
    procedures(
      conversationId: string,
      query?: { cursor?: string },
      options?: RequestOptions,
    ): PagedList<Procedure, ProcedureList>;
    events(conversationId: string, options?: EventStreamOptions): EventStream;
    session(conversationId: string, options?: SessionOptions): Promise<Session>;
  };
  procedures: { list(query?: ProcedureListQuery, options?: RequestOptions): PagedList<Procedure, ProcedureList> };
  feedbacks: { list(query: FeedbackListQuery, options?: RequestOptions): PagedList<Feedback, FeedbackList> };
  /** Closes the keep-alive connections. */
  close(): Promise<void>;
};

/** A list endpoint: the query is validated (strictly) when the list is made; each page is one GET through the core. */
function list<T, B extends { cursor?: string | null | undefined }>(
  core: Core,
  path: string,
  querySchema: z.ZodType<Record<string, string | undefined>>,
  query: unknown,
  responseSchema: z.ZodType<B>,
  items: (body: B) => T[],
  options: RequestOptions,
  serviceVersion?: string,
): PagedList<T, B> {
  const { cursor: start, ...filters } = core.validate("GET", path, querySchema, query);
  return new PagedList<T, B>(
    async (cursor): Promise<Page<T, B>> => {
      const body = await core.request({
        method: "GET",
        path,
        query: { ...filters, cursor },
        responseSchema,
        ...(serviceVersion ? { serviceVersion } : {}),
        ...options,
      });
      return { items: items(body), cursor: body.cursor ?? null, body };
    },
    start,
    { method: "GET", path },
  );
}

export function createClient(options: ClientOptions): Client {
  const core = new Core(options);

  return {
    baseUrl: core.baseUrl,
    conversationalAgents: {
      create: (body, options = {}) =>
        core.request({
          ...options,
          method: "POST",
          path: "/conversational_agents",
          body,
          requestSchema: createConversationalAgentRequest,
          responseSchema: createAgentResponse,
        }),
    },
    proceduralAgents: {
      create: (body, options = {}) =>
        core.request({
          ...options,
          method: "POST",
          path: "/procedural_agents",
          body,
          requestSchema: createProceduralAgentRequest,
          responseSchema: createAgentResponse,
        }),
    },
    conversations: {
      create: async (body, options = {}) => {
        const created = await core.request({
          ...options,
          method: "POST",
          path: "/conversations",
          body,
          requestSchema: createConversationRequest,
          responseSchema: createConversationResponse,
        });
        core.addSecret(created.channel.token);
        return created;
      },
      list: (query = {}, options = {}) =>
        list<Conversation, ConversationList>(
          core,
          "/conversations",
          conversationListQuery,
          query,
          conversationList,
          (b) => b.data,
          options,
        ),
      procedures: (conversationId, query = {}, options = {}) =>
        list<Procedure, ProcedureList>(
          core,
          pathFor`/conversations/${conversationId}/procedures`,
          conversationProceduresQuery,
          query,
          procedureList,
          (b) => b.page,
          options,
        ),
      events: (conversationId, options = {}) =>
        new EventStream(core, pathFor`/conversations/${conversationId}/events`, options),
      session: (conversationId, options = {}) =>
        Session.open(core, pathFor`/conversations/${conversationId}/session`, options),
    },
    procedures: {
      list: (query = {}, options = {}) =>
        list<Procedure, ProcedureList>(
          core,
          "/procedures",
          procedureListQuery,
          query,
          procedureList,
          (b) => b.page,
          options,
        ),
    },
    feedbacks: {
      list: (query, options = {}) =>
        list<Feedback, FeedbackList>(
          core,
          "/feedbacks",
          feedbackListQuery,
          query,
          feedbackList,
          (b) => b.data,
          options,
          core.feedbacksServiceVersion,
        ),
    },
    close: () => core.close(),
  };
}
