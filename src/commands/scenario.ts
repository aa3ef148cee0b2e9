// `agent-iac scenario capture <conversation-id>`: a real call printed as a regression scenario for
// the agent file (src/capture). The events come from a recording (`smoke --record DIR`), or from the
// conversation's event stream; the interface does not promise that an ended conversation's stream
// replays its events, so when it gives none the command says so and points to --record.
import { stat } from "node:fs/promises";
import { type EventEnvelope, TimeoutError } from "../api/index.ts";
import { type CapturedCall, captureScenario } from "../capture/index.ts";
import { CliError, InvalidInputError, ServiceError } from "../errors/index.ts";
import { terminalText } from "../render/index.ts";
import { requireConnection } from "../settings/index.ts";
import { findRecording, MAX_RECORDING_BYTES } from "../smoke/index.ts";
import { stackConnection } from "../usecases/index.ts";
import { parseCommand, positiveNumber, suggestion } from "./args.ts";
import { CONNECTION_FLAGS, CONNECTION_HELP } from "./flags.ts";
import { type CommandIO, interruptedWhile } from "./lifecycle.ts";

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
  const call = dir
    ? await fromRecording(dir, conversationId, values["callee-no"])
    : await fromService(conversationId, {
        stack: values.stack,
        baseUrl: values["base-url"],
        calleeNo: values["callee-no"],
        idleSeconds: parsed.typed["idle-timeout"] ?? DEFAULT_REPLAY_WAIT_S,
        io,
      });
  const captured = captureScenario(call, { name: values.name });
  io.stdout.write(captured.yaml);
  for (const note of captured.notes) io.stderr.write(`note: ${note}\n`);
  io.stderr.write(
    `captured ${captured.turns} caller turn(s) and ${captured.toolCalls.length} tool(s) from ${terminalText(conversationId)}\n`,
  );
  return 0;
}

async function fromRecording(dir: string, conversationId: string, calleeNo: string | undefined): Promise<CapturedCall> {
  if (!(await stat(dir).catch(() => undefined))?.isDirectory()) {
    throw new InvalidInputError(`--from-recording ${dir}: no such directory of recordings`);
  }
  const found = await findRecording(dir, conversationId);
  if (!found) {
    throw new InvalidInputError(`--from-recording ${dir}: no recording of conversation ${conversationId}`, {
      hint: "recordings are written by `agent-iac smoke --record DIR`; each names its conversation id on its first line",
    });
  }
  const { channel, context } = found.scenario;
  return {
    conversationId,
    envelopes: found.envelopes,
    agent: found.agent,
    versionId: found.versionId,
    channel: calleeNo ? { ...channel, callee_no: calleeNo } : channel,
    context,
    callerLines: found.callerLines,
  };
}

async function fromService(
  conversationId: string,
  options: {
    stack: string;
    baseUrl: string | undefined;
    calleeNo: string | undefined;
    idleSeconds: number;
    io: CommandIO;
  },
): Promise<CapturedCall> {
  const { io } = options;
  if (!options.calleeNo) {
    throw new CliError("--callee-no is needed to capture from the service: its events do not say the channel", {
      hint: "or capture from a recording of the call: --from-recording DIR",
    });
  }
  const connection = await stackConnection(io.project, options.stack, { baseUrl: options.baseUrl });
  io.useConnection(connection);
  const client = io.serviceClient(requireConnection(connection, options.stack));
  const stop = io.interruption();
  const envelopes: EventEnvelope[] = [];
  // A stream that never ends is not kept whole: a capture holds at most what a recording may.
  let bytes = 0;
  try {
    const stream = client.conversations.events(conversationId, {
      idleTimeoutMs: options.idleSeconds * 1000,
      signal: stop.signal,
    });
    for await (const envelope of stream) {
      bytes += Buffer.byteLength(JSON.stringify(envelope));
      if (bytes > MAX_RECORDING_BYTES) {
        throw new ServiceError(
          `the service's stream of conversation ${conversationId} sent more than ${MAX_RECORDING_BYTES} bytes of events (${envelopes.length} events) without conversation.ended: stopped reading, nothing captured (a capture keeps at most what a recording may hold)`,
          {
            hint: "capture a call that has ended, or record the calls as they happen with `agent-iac smoke --record DIR`",
          },
        );
      }
      envelopes.push(envelope);
      if (envelope.payload.type === "conversation.ended") break;
    }
  } catch (error) {
    if (stop.signal.aborted) throw interruptedWhile(`the stream was closed after ${envelopes.length} event(s)`);
    if (!(error instanceof TimeoutError && error.limit === "idle")) throw error;
  } finally {
    stop.release();
  }
  if (!envelopes.some((envelope) => envelope.payload.type === "conversation.started")) {
    throw new ServiceError(
      `the service did not replay conversation ${conversationId}'s events (nothing for ${options.idleSeconds} s): the interface does not promise the stream of an ended conversation`,
      {
        hint: "record the calls as they happen with `agent-iac smoke --record DIR`, then `agent-iac scenario capture <id> --from-recording DIR`",
      },
    );
  }
  return { conversationId, envelopes, channel: { callee_no: options.calleeNo } };
}
