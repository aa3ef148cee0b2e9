// A call's stream by transport: the one place that knows which of the client's doors each
// transport (src/contract TRANSPORTS) opens. A new transport is its name there and its entry here.
import type { EventEnvelope, Transport } from "../contract/index.ts";
import type { Client } from "./client.ts";
import type { EventStreamOptions } from "./events.ts";
import type { SessionOptions } from "./session.ts";

/** What a call reads: the conversation's envelopes and, where the transport carries them, its control messages. */
type CallStream = {
  events: AsyncIterable<EventEnvelope>;
  /** Sends control messages (a caller's lines) and closes; absent on a transport that only listens. */
  speaker?: { send(message: Record<string, unknown>): void; close(): void };
};

type CallStreamOptions = EventStreamOptions & SessionOptions;

type OpenStream = (client: Client, conversationId: string, options: CallStreamOptions) => Promise<CallStream>;

/** Opens a conversation's stream over each transport. */
export const STREAMS: Record<Transport, OpenStream> = {
  sse: async (client, conversationId, options) => ({ events: client.conversations.events(conversationId, options) }),
  ws: async (client, conversationId, options) => {
    const session = await client.conversations.session(conversationId, options);
    return { events: session, speaker: session };
  },
};
