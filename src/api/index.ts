// The service client: the only public entry of src/api, and exactly what other folders use. No
// top-level side effects: importing it opens no socket (the keep-alive Agent is made by the first
// request), so a Pulumi dynamic provider can load it when one of its methods runs. The service's
// schemas and types live in src/contract; the few re-exported here are those the client's callers
// name alongside it.
export {
  type CreateConversationalAgentRequest,
  type CreateConversationResponse,
  createConversationalAgentRequest,
  createProceduralAgentRequest,
  type EventEnvelope,
  type Procedure,
} from "../contract/index.ts";
export {
  ApiError,
  type ApiErrorCode,
  AuthenticationError,
  ConnectionError,
  InvalidRequestError,
  InvalidResponseError,
  NotFoundError,
  RateLimitError,
  redact,
  ServerError,
  TimeoutError,
} from "../errors/index.ts";
export { type Client, createClient } from "./client.ts";
export type { ClientOptions, RequestOptions, RequestSpec, RetryNotice, Timeouts } from "./core.ts";
export { Core as RequestCore } from "./core.ts";
export { displayUrl } from "./errors.ts";
export type { EventStream, EventStreamOptions } from "./events.ts";
export type { PagedList } from "./paging.ts";
export type { Session, SessionOptions } from "./session.ts";
export { STREAMS } from "./streams.ts";
export {
  type Transcript,
  TranscriptBuilder,
  type TranscriptEntry,
  type TranscriptMessage,
  type TranscriptToolCall,
} from "./transcript.ts";
