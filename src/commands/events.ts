// `agent-iac events <conversation-id>`: follows a conversation's event stream live.
import { followConversationEvents } from "../usecases/index.ts";
import { parseCommand, positiveNumber } from "./args.ts";
import { CONNECTION_FLAGS, CONNECTION_HELP } from "./flags.ts";
import type { CommandIO } from "./lifecycle.ts";

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
  const seconds = parsed.typed["idle-timeout"];
  // Once the connection is known, Ctrl+C (or SIGTERM) closes the stream: what arrived is printed;
  // exit 130. Before (the stack still being read), it ends the run at once, as in every command.
  const stop = new AbortController();
  let release = () => {};
  const listen = () => {
    const interruption = io.interruption();
    release = interruption.release;
    if (interruption.signal.aborted) stop.abort(interruption.signal.reason);
    interruption.signal.addEventListener("abort", () => stop.abort(interruption.signal.reason), { once: true });
  };
  const followed = await followConversationEvents(
    {
      project: io.project,
      stack: values.stack,
      baseUrl: values["base-url"],
      conversationId: parsed.positionals[0] ?? "",
      eventsUrl: values["events-url"],
      lastEventId: values["last-event-id"],
      idleTimeoutMs: seconds === undefined ? undefined : seconds * 1000,
      format: values.json === true ? "ndjson" : "transcript",
    },
    {
      out: io.stdout,
      signal: stop.signal,
      onRetry: io.printRetry,
      onConnection: (connection) => {
        io.useConnection(connection);
        listen();
      },
    },
  ).finally(() => release());
  return followed.code;
}
