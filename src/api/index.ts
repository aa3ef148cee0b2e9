// The service client: the only public entry of src/api. No top-level side effects: importing it
// opens no socket (the keep-alive Agent is made by the first request), so a Pulumi dynamic provider
// can load it when one of its methods runs.

export * from "../contract/index.ts";
export { type Client, createClient } from "./client.ts";
export {
  type ClientOptions,
  MAX_RESPONSE_BYTES,
  type RequestOptions,
  type RetryNotice,
  type Timeouts,
  USER_AGENT,
} from "./core.ts";
export {
  ApiError,
  AuthenticationError,
  ConnectionError,
  displayUrl,
  InvalidRequestError,
  InvalidResponseError,
  NotFoundError,
  RateLimitError,
  redact,
  ServerError,
  TimeoutError,
} from "./errors.ts";
export { EventStream, type EventStreamOptions } from "./events.ts";
export { type Page, PagedList } from "./paging.ts";
export { encodePathSegment, pathFor } from "./path.ts";
export {
  MAX_RETRY_DELAY_MS,
  parseRetryAfter,
  type RetryDecision,
  type RetryInput,
  type RetryOutcome,
  shouldRetry,
} from "./retry.ts";
export { Session, type SessionOptions } from "./session.ts";
export {
  emptyTranscript,
  reduceTranscript,
  type Transcript,
  TranscriptBuilder,
  type TranscriptEntry,
  type TranscriptMessage,
  type TranscriptPrinterOptions,
  type TranscriptToolCall,
  transcriptPrinter,
} from "./transcript.ts";
