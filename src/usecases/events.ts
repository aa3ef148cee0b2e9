// `events <conversation-id>`: a conversation's event stream followed live and written as it arrives
// (its transcript, or one JSON line per envelope) until conversation.ended. The stream is opened with
// the stack's API key, or with the stream token of the run's AGENT_IAC_STREAM_TOKEN at the
// create-conversation response's events_url; the client is opened here and closed at the end.
import type { Client, EventEnvelope } from "../api/index.ts";
import { displayUrl } from "../api/index.ts";
import {
  AuthenticationError,
  ConfigError,
  InterruptedError,
  InvalidInputError,
  ServiceError,
} from "../errors/index.ts";
import { jsonLine, terminalText, transcriptPrinter } from "../render/index.ts";
import { type Connection, type ProjectContext, streamToken } from "../settings/index.ts";
import { type RetryListener, withClient, withStackClient } from "./service-client.ts";
import { stackConnection } from "./session.ts";

export type EventsRequest = {
  project: ProjectContext;
  stack: string;
  /** The service's address instead of the stack's (--base-url); default: the events URL's origin, if given. */
  baseUrl?: string | undefined;
  conversationId: string;
  /** The stream address from the create-conversation response (with a stream token, the only one it opens). */
  eventsUrl?: string | undefined;
  /** Resume after this event. */
  lastEventId?: string | undefined;
  /** Give up when the stream sends nothing for this long (default: the client's). */
  idleTimeoutMs?: number | undefined;
  /** `transcript`: the conversation as it grows; `ndjson`: each event envelope as one JSON line. */
  format: "transcript" | "ndjson";
};

export type EventsIO = {
  out: { write(text: string): unknown };
  /** Closes the stream: what arrived was written; the use case ends with an InterruptedError. */
  signal: AbortSignal;
  onRetry?: RetryListener | undefined;
  /** Told of the stack's connection before any request: the service's errors are said in its terms. */
  onConnection?: ((connection: Connection) => void) | undefined;
};

export type Followed = { events: number; notes: string[]; code: 0 };

/** Follows the stream to conversation.ended (a ServiceError when it ends before; an InterruptedError when stopped). */
export async function followConversationEvents(request: EventsRequest, io: EventsIO): Promise<Followed> {
  const { eventsUrl, conversationId } = request;
  const origin = eventsUrl === undefined ? undefined : originOf(eventsUrl);
  const token = streamToken(request.project.env);
  const connection = await stackConnection(request.project, request.stack, { baseUrl: request.baseUrl ?? origin });
  if (token && !eventsUrl && !connection.apiKey) {
    throw new InvalidInputError(
      (name) => `AGENT_IAC_STREAM_TOKEN is used with ${name("eventsUrl")} (the stream address it belongs to)`,
      { field: "eventsUrl" },
    );
  }
  io.onConnection?.(connection);
  const useToken = Boolean(token && eventsUrl);
  const follow = async (client: Client) => {
    const stream = client.conversations.events(conversationId, {
      ...(useToken ? { token, eventsUrl } : eventsUrl ? { eventsUrl } : {}),
      lastEventId: request.lastEventId,
      idleTimeoutMs: request.idleTimeoutMs,
      signal: io.signal,
    });
    return writeStream(stream, request.format, io).catch((error: unknown) => {
      throw tokenRefused(error, conversationId);
    });
  };
  const { events, ended } = useToken
    ? await withClient({ baseUrl: connection.baseUrl ?? origin ?? "" }, io.onRetry, follow)
    : await withStackClient(connection, request.stack, io.onRetry, follow);
  if (io.signal.aborted) {
    const after = `${events} event${events === 1 ? "" : "s"}${ended ? " (the conversation had ended)" : ""}`;
    throw new InterruptedError(undefined, `the stream was closed after ${after}`);
  }
  if (!ended) throw new ServiceError("the stream ended before conversation.ended");
  return { events, notes: [], code: 0 };
}

/** The events URL's origin (the service's address when no other is given); shown without its query if it is none. */
function originOf(eventsUrl: string): string {
  try {
    return new URL(eventsUrl).origin;
  } catch {
    throw new InvalidInputError((name) => `${name("eventsUrl")} is not a URL: ${displayUrl(eventsUrl)}`, {
      field: "eventsUrl",
    });
  }
}

/** A refused stream token is the token's fault, not the API key's (none was sent). */
function tokenRefused(error: unknown, conversationId: string): unknown {
  if (!(error instanceof AuthenticationError && error.credential === "stream_token")) return error;
  return new ConfigError(
    `the service refused the stream token from AGENT_IAC_STREAM_TOKEN for conversation ${conversationId}: ${terminalText(error.message)}`,
    {
      cause: error,
      hint: "a stream token opens only its own conversation's stream and expires; the create-conversation response gives one with its events_url (or unset AGENT_IAC_STREAM_TOKEN to use the API key)",
    },
  );
}

/** Writes each envelope as it arrives (a transcript, or one JSON line each); a stop ends it quietly. */
async function writeStream(
  stream: AsyncIterable<EventEnvelope>,
  format: EventsRequest["format"],
  io: EventsIO,
): Promise<{ events: number; ended: boolean }> {
  const write = (text: string) => io.out.write(text);
  const printer = format === "transcript" ? transcriptPrinter(write) : undefined;
  let ended = false;
  let events = 0;
  try {
    for await (const envelope of stream) {
      events++;
      if (printer) printer(envelope);
      else write(`${jsonLine(envelope)}\n`);
      if (envelope.payload.type === "conversation.ended") ended = true;
    }
  } catch (error) {
    if (!io.signal.aborted) throw error;
  }
  return { events, ended };
}
