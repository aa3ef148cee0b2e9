// `agent-iac scenario capture <conversation-id>`: a real call printed as a regression scenario for
// the agent file (src/capture). The events come from a recording (`smoke --record DIR`), or from the
// conversation's event stream; the interface does not promise that an ended conversation's stream
// replays its events, so when it gives none the command says so and points to --record.
import type { Captured } from "../capture/index.ts";
import { CliError } from "../errors/index.ts";
import { terminalText } from "../render/index.ts";
import { type CaptureRequest, captureFromRecording, captureFromService, stackConnection } from "../usecases/index.ts";
import { parseCommand, positiveNumber, suggestion } from "./args.ts";
import { CONNECTION_FLAGS, CONNECTION_HELP } from "./flags.ts";
import type { CommandIO } from "./lifecycle.ts";

/** How long a stream may stay silent before the service is taken not to replay an ended conversation. */
const DEFAULT_REPLAY_WAIT_S = 10;

const SPEC = {
  name: "scenario capture",
  synopsis: "<conversation-id> [options]",
  about: `Prints a smoke scenario made from a real call, for the agent file's smoke: list: the caller's lines
(user.message.received) as caller.turns, the tools the agent called as draft tool_calls expectations,
and the call's channel. Reads the call from a recording (--from-recording DIR, written by
smoke --record DIR), or from the conversation's event stream on the service; a service need not replay
an ended conversation's events, and then the command says so (exit 3): record the calls instead.`,
  flags: {
    "from-recording": {
      type: "string",
      arg: "DIR",
      help: "read the call from the recordings in DIR (smoke --record DIR), not from the service",
    },
    name: { type: "string", arg: "NAME", help: 'the scenario\'s name (default "captured <conversation-id>")' },
    "callee-no": {
      type: "string",
      arg: "NUMBER",
      help: "the channel's callee_no (from a recording: the recorded scenario's; from the service: required, its events do not say it)",
    },
    "idle-timeout": {
      type: "string",
      arg: "S",
      value: positiveNumber("a positive number of seconds"),
      help: `from the service: give up when its stream sends nothing for S seconds (default ${DEFAULT_REPLAY_WAIT_S})`,
    },
    ...CONNECTION_FLAGS,
  },
  footer: CONNECTION_HELP,
  positionals: { min: 1, max: 1, what: "a conversation id" },
} as const;

export async function run(argv: string[], io: CommandIO): Promise<number> {
  const [sub = "", ...rest] = argv;
  if (sub === "--help" || sub === "-h" || sub === "help") {
    io.stdout.write("usage: agent-iac scenario capture <conversation-id> [options]\n");
    return 0;
  }
  if (sub !== "capture") {
    throw new CliError(sub ? `unknown subcommand "${sub}"${suggestion(sub, ["capture"])}` : "a subcommand is needed", {
      hint: "usage: agent-iac scenario capture <conversation-id> [options]",
    });
  }
  const parsed = parseCommand(SPEC, rest, io.stdout);
  if (!parsed) return 0;
  const { values } = parsed;
  const conversationId = parsed.positionals[0] ?? "";
  const dir = values["from-recording"];
  const request = { conversationId, name: values.name, calleeNo: values["callee-no"] };
  const captured = dir
    ? await captureFromRecording(dir, request)
    : await fromService(request, {
        stack: values.stack,
        baseUrl: values["base-url"],
        idleSeconds: parsed.typed["idle-timeout"] ?? DEFAULT_REPLAY_WAIT_S,
        io,
      });
  io.stdout.write(captured.yaml);
  for (const note of captured.notes) io.stderr.write(`note: ${note}\n`);
  io.stderr.write(
    `captured ${captured.turns} caller turn(s) and ${captured.toolCalls.length} tool(s) from ${terminalText(conversationId)}\n`,
  );
  return 0;
}

/** The stack's (or --base-url's) service, its errors said in its terms; Ctrl+C closes the stream. */
async function fromService(
  request: CaptureRequest,
  options: { stack: string; baseUrl: string | undefined; idleSeconds: number; io: CommandIO },
): Promise<Captured> {
  const { io } = options;
  const { calleeNo } = request;
  if (!calleeNo) {
    throw new CliError("--callee-no is needed to capture from the service: its events do not say the channel", {
      hint: "or capture from a recording of the call: --from-recording DIR",
    });
  }
  const connection = await stackConnection(io.project, options.stack, { baseUrl: options.baseUrl });
  io.useConnection(connection);
  const client = io.stackClient(connection, options.stack);
  const stop = io.interruption();
  return captureFromService(
    { ...request, calleeNo, idleSeconds: options.idleSeconds },
    { client, signal: stop.signal },
  ).finally(stop.release);
}
