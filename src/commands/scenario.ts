// `agent-iac scenario capture <conversation-id>`: a real call becomes a regression scenario — its
// caller's lines as caller.turns, the tools called as draft expectations — printed as YAML for an
// agent file's `smoke:` list. From a recording (`--from-recording DIR`), or by reading the ended
// conversation's event stream again, which the interface does not promise: a service that does
// not replay it gets exit 3 and the pointer to `smoke --record`.
import type { EventEnvelope } from "../api/index.ts";
import { capturedScenario } from "../caller/index.ts";
import { CliError } from "../errors/index.ts";
import { requireConnection } from "../settings/index.ts";
import { recordedConversation } from "../smoke/index.ts";
import { stackConnection } from "../usecases/index.ts";
import { parseCommand } from "./args.ts";
import { CONNECTION_FLAGS, CONNECTION_HELP } from "./flags.ts";
import type { CommandIO } from "./lifecycle.ts";

/** How long the replayed stream may stay silent before the service is taken not to replay it. */
const REPLAY_IDLE_MS = 10_000;

const SPEC = {
  name: "scenario capture",
  synopsis: "<conversation-id> [--from-recording DIR] [options]",
  about: `Prints a smoke scenario made from a real call: the caller's lines (user.message.received) as
caller.turns, the call's channel (from a recording), and draft expectations from the tools the agent
called, by name. Paste it under the agent file's smoke: list and review it. Without
--from-recording the conversation's event stream is read again, which a service may not allow once
it ended: then exit 3; record calls with \`agent-iac smoke --record DIR\` and capture from there.`,
  flags: {
    "from-recording": { type: "string", arg: "DIR", help: "read the call from recordings (smoke --record DIR)" },
    ...CONNECTION_FLAGS,
  },
  footer: CONNECTION_HELP,
  positionals: { min: 1, max: 1, what: "a conversation id" },
} as const;

export async function run(argv: string[], io: CommandIO): Promise<number> {
  const [sub, ...rest] = argv;
  // `scenario --help` is the help of its one subcommand.
  if (sub === "--help" || sub === "-h") {
    parseCommand(SPEC, [sub], io.stdout);
    return 0;
  }
  if (sub !== "capture") {
    throw new CliError(`usage: agent-iac scenario capture <conversation-id> (unknown: ${sub ?? "nothing"})`, 2);
  }
  const parsed = parseCommand(SPEC, rest, io.stdout);
  if (!parsed) return 0;
  const conversationId = parsed.positionals[0] ?? "";
  const dir = parsed.values["from-recording"];
  if (dir !== undefined) {
    const recorded = await recordedConversation(dir, conversationId);
    if (!recorded) throw new CliError(`${dir}: no recording of conversation ${conversationId}`, 2);
    io.stdout.write(capturedScenario(recorded.envelopes, { conversationId, channel: recorded.scenario.channel }));
    return 0;
  }
  const connection = await stackConnection(parsed.values.stack, { baseUrl: parsed.values["base-url"] });
  io.useConnection(connection);
  const client = io.serviceClient(requireConnection(connection, parsed.values.stack));
  const envelopes: EventEnvelope[] = [];
  let ended = false;
  try {
    for await (const envelope of client.conversations.events(conversationId, { idleTimeoutMs: REPLAY_IDLE_MS })) {
      envelopes.push(envelope);
      if (envelope.payload.type === "conversation.ended") {
        ended = true;
        break;
      }
    }
  } catch (error) {
    if (envelopes.length === 0) throw notReplayed(conversationId, error);
  }
  if (!ended) throw notReplayed(conversationId, undefined);
  io.stdout.write(capturedScenario(envelopes, { conversationId }));
  return 0;
}

function notReplayed(conversationId: string, cause: unknown): CliError {
  const why = cause instanceof Error ? ` (${cause.message})` : "";
  return new CliError(
    `the service did not replay the event stream of conversation ${conversationId}${why}: the interface does not promise a replay of an ended conversation. Record calls with \`agent-iac smoke --record DIR\` and run \`agent-iac scenario capture ${conversationId} --from-recording DIR\`.`,
    3,
  );
}
