// `agent-iac events <conversation-id>`: follows a conversation's event stream live.
import type { EventEnvelope } from "../api/index.ts";
import { AuthenticationError, CliError, ConfigError, ServiceError } from "../errors/index.ts";
import { jsonLine, terminalText, transcriptPrinter } from "../render/index.ts";
import type { Connection } from "../settings/index.ts";
import { displayUrl, stackConnection, streamToken } from "../usecases/index.ts";
import { parseCommand, positiveNumber } from "./args.ts";
import { CONNECTION_FLAGS, CONNECTION_HELP } from "./flags.ts";
import { type CommandIO, interruptedWhile } from "./lifecycle.ts";

const SPEC = {
  name: "events",
  synopsis: "<conversation-id> [options]",
  about: `Follows a conversation's event stream live and prints its transcript as it grows; with --json,
prints each event envelope as one JSON line. Exits 0 after conversation.ended.`,
  flags: {
    json: { type: "boolean", help: "one event envelope per line (NDJSON)" },
    "events-url": {
      type: "string",
      arg: "URL",
      help: "the stream address from the create-conversation response; with AGENT_IAC_STREAM_TOKEN set, the stream is opened with that token and no key",
    },
    "last-event-id": { type: "string", arg: "ID", help: "resume after this event" },
    "idle-timeout": {
      type: "string",
      arg: "S",
      value: positiveNumber("a positive number of seconds"),
      help: "give up when the stream sends nothing for S seconds (default 120)",
    },
    ...CONNECTION_FLAGS,
  },
  footer: CONNECTION_HELP,
  positionals: { min: 1, max: 1, what: "a conversation id" },
} as const;

export async function followEvents(argv: string[], io: CommandIO): Promise<number> {
  const parsed = parseCommand(SPEC, argv, io.stdout);
  if (!parsed) return 0;
  const { values } = parsed;
  const conversationId = parsed.positionals[0] ?? "";
  const eventsUrl = values["events-url"];
  const token = streamToken(io.env);
  const useToken = Boolean(token && eventsUrl);
  const seconds = parsed.typed["idle-timeout"];
  const idleTimeoutMs = seconds === undefined ? undefined : seconds * 1000;
  let origin: string | undefined;
  if (eventsUrl) {
    try {
      origin = new URL(eventsUrl).origin;
    } catch {
      throw new CliError(`--events-url is not a URL: ${displayUrl(eventsUrl)}`);
    }
  }
  const connection: Connection = await stackConnection(io.project, values.stack, {
    baseUrl: values["base-url"] ?? origin,
  });
  if (token && !eventsUrl && !connection.apiKey) {
    throw new CliError("AGENT_IAC_STREAM_TOKEN is used with --events-url (the stream address it belongs to)");
  }
  io.useConnection(connection);
  const client = useToken
    ? io.serviceClient({ baseUrl: connection.baseUrl ?? origin ?? "" })
    : io.stackClient(connection, values.stack);
  // Ctrl+C (or SIGTERM) closes the stream: what arrived is printed; exit 130.
  const stop = io.interruption();
  try {
    const stream = client.conversations.events(conversationId, {
      ...(useToken ? { token, eventsUrl } : eventsUrl ? { eventsUrl } : {}),
      lastEventId: values["last-event-id"],
      idleTimeoutMs,
      signal: stop.signal,
    });
    const { events, ended } = await printStream(stream, {
      json: values.json === true,
      io,
      signal: stop.signal,
    }).catch((error: unknown) => {
      throw tokenRefused(error, conversationId);
    });
    if (stop.signal.aborted) {
      throw interruptedWhile(
        `the stream was closed after ${events} event${events === 1 ? "" : "s"}${ended ? " (the conversation had ended)" : ""}`,
      );
    }
    if (!ended) throw new ServiceError("the stream ended before conversation.ended");
    return 0;
  } finally {
    stop.release();
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

/** Prints each envelope as it arrives (a transcript, or one JSON line each); a stop ends it quietly. */
async function printStream(
  stream: AsyncIterable<EventEnvelope>,
  options: { json: boolean; io: CommandIO; signal: AbortSignal },
): Promise<{ events: number; ended: boolean }> {
  const { io } = options;
  const printer = options.json ? undefined : transcriptPrinter((text) => io.stdout.write(text));
  let ended = false;
  let events = 0;
  try {
    for await (const envelope of stream) {
      events++;
      if (options.json) io.stdout.write(`${jsonLine(envelope)}\n`);
      else printer?.(envelope);
      if (envelope.payload.type === "conversation.ended") ended = true;
    }
  } catch (error) {
    if (!options.signal.aborted) throw error;
  }
  return { events, ended };
}
