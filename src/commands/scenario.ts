// `agent-iac scenario capture <conversation-id>`: a real call printed as a regression scenario for
// the agent file (src/capture). The events come from a recording (`smoke --record DIR`), or from the
// conversation's event stream; the interface does not promise that an ended conversation's stream
// replays its events, so when it gives none the command says so and points to --record.
// `scenario derive` reads a call the same ways and `scenario generate` reads the agent file; a model
// writes persona scenarios from them (src/drafts), printed only once vetted (and with --check, passed).
import { CliError } from "../errors/index.ts";
import { type CommandOutcome, captureScenario, deriveDraft, generateDraft } from "../usecases/index.ts";
import { parseCommand, positiveNumber, STACK_FLAG, suggestion, wholeNumber } from "./args.ts";
import { CONNECTION_FLAGS, CONNECTION_HELP } from "./flags.ts";
import type { CommandIO } from "./lifecycle.ts";
import { runIO } from "./run-io.ts";

/** How long a stream may stay silent before the service is taken not to replay an ended conversation. */
const DEFAULT_REPLAY_WAIT_S = 10;

/** Where the call is read from: the flags capture and derive share. */
const CALL_FLAGS = {
  "from-recording": {
    type: "string",
    arg: "DIR",
    help: "read the call from the recordings in DIR (smoke --record DIR), not from the service",
  },
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
} as const;

const SPEC = {
  name: "scenario capture",
  synopsis: "<conversation-id> [options]",
  about: `Prints a smoke scenario made from a real call, for the agent file's smoke: list: the caller's lines
(user.message.received) as caller.turns, the tools the agent called as draft tool_calls expectations,
and the call's channel. Reads the call from a recording (--from-recording DIR, written by
smoke --record DIR), or from the conversation's event stream on the service; a service need not replay
an ended conversation's events, and then the command says so (exit 3): record the calls instead.`,
  flags: {
    name: { type: "string", arg: "NAME", help: 'the scenario\'s name (default "captured <conversation-id>")' },
    ...CALL_FLAGS,
  },
  footer: CONNECTION_HELP,
  positionals: { min: 1, max: 1, what: "a conversation id" },
} as const;

/** What derive and generate share: the model's scenarios vetted, personal data, the budget and the check. */
const DRAFT_FLAGS = {
  "keep-pii": {
    type: "boolean",
    default: false,
    help: "send and print phone numbers, e-mail addresses, card and account numbers and the channel's numbers as they are (default: labelled placeholders)",
  },
  "max-call-minutes": {
    type: "string",
    arg: "M",
    value: positiveNumber("a positive number of minutes"),
    help: "drop a scenario whose worst case (iterations × timeout) is over M call minutes",
  },
  check: {
    type: "boolean",
    default: false,
    help: "place each kept scenario once against the stack's pinned version and keep only those that pass (the others are printed apart on stderr, with why)",
  },
} as const;

const DRAFT_HELP = `model: the persona caller's (agents:callerBaseUrl, agents:callerModel, agents:callerApiKey, or
AGENT_IAC_CALLER_BASE_URL, AGENT_IAC_CALLER_MODEL, AGENT_IAC_CALLER_API_KEY), else the judge's; with
none, exit 2 before any request. It is sent what docs/smoke.md says, with personal data replaced.

Nothing unchecked is printed: a proposal is kept only when it validates against the agent-file
schema, names only tools, procedural agents and languages the agent has, repeats no scenario (same
persona and goal) and fits --max-call-minutes; the others are dropped and counted on stderr
("5 proposed, 4 kept: 1 named a tool the agent does not have"). The YAML goes to stdout in one write
once everything is checked: Ctrl+C leaves nothing half-written (exit 130).

exit codes: 0 a scenario was kept (printed), 1 none was kept, 2 usage or configuration error (no
model configured, an unknown agent or recording), 3 the model, the service or the stream failed,
130 interrupted.`;

const DERIVE_SPEC = {
  name: "scenario derive",
  synopsis: "<conversation-id> [options]",
  about: `Prints a persona scenario written by a model from a real call, for the agent file's smoke: list:
caller.persona (who called, how they spoke) and goal, max_turns from the call's length, the tools the
agent called (tool_calls) and the procedures that ran as expectations, and one or two judge rubrics
for the outcome the caller got; a comment names the call. Reads the call like scenario capture: from
a recording (--from-recording DIR) or from the conversation's event stream on the service.`,
  flags: {
    name: { type: "string", arg: "NAME", help: "the scenario's name (default: the model's)" },
    agent: {
      type: "string",
      arg: "KEY",
      help: "the call's agent (from the service: required, its events do not say it)",
    },
    ...CALL_FLAGS,
    ...DRAFT_FLAGS,
  },
  footer: `from the service: the stack's connection, as scenario capture reads it.\n\n${DRAFT_HELP}`,
  positionals: { min: 1, max: 1, what: "a conversation id" },
} as const;

const GENERATE_SPEC = {
  name: "scenario generate",
  synopsis: "<agent> [options]",
  about: `Prints persona scenarios a model proposes from the agent file alone (its persona, prompt, tools,
languages and postprocess agents), for its smoke: list: at least one per tool, one per language
beyond the default, a caller who is off-topic or hostile, one who ends early; each with a persona, a
goal and expectations.`,
  flags: {
    stack: STACK_FLAG,
    count: {
      type: "string",
      default: "5",
      arg: "N",
      value: wholeNumber(1, 50),
      help: "scenarios to ask for (default: 5)",
    },
    ...DRAFT_FLAGS,
  },
  footer: DRAFT_HELP,
  positionals: { min: 1, max: 1, what: "an agent key" },
} as const;

const SUBCOMMANDS = ["capture", "derive", "generate"];
const USAGE = [
  "usage: agent-iac scenario capture <conversation-id> [options]",
  "       agent-iac scenario derive <conversation-id> [options]",
  "       agent-iac scenario generate <agent> [options]",
].join("\n");

export async function run(argv: string[], io: CommandIO): Promise<number> {
  const [sub = "", ...rest] = argv;
  if (sub === "--help" || sub === "-h" || sub === "help") {
    io.stdout.write(`${USAGE}\n`);
    return 0;
  }
  if (sub === "capture") return capture(rest, io);
  if (sub === "derive") return derive(rest, io);
  if (sub === "generate") return generate(rest, io);
  throw new CliError(sub ? `unknown subcommand "${sub}"${suggestion(sub, SUBCOMMANDS)}` : "a subcommand is needed", {
    hint: "usage: agent-iac scenario capture|derive <conversation-id> [options], or generate <agent> [options]",
  });
}

type CallFlags = {
  "from-recording"?: string | undefined;
  "callee-no"?: string | undefined;
  stack: string;
  "base-url"?: string | undefined;
};

/** Where the call of `conversationId` is read from, as the use cases take it. */
function callRequest(conversationId: string, values: CallFlags, idleSeconds: number | undefined, io: CommandIO) {
  return {
    conversationId,
    project: io.project,
    fromRecording: values["from-recording"],
    calleeNo: values["callee-no"],
    stack: values.stack,
    baseUrl: values["base-url"],
    idleSeconds: idleSeconds ?? DEFAULT_REPLAY_WAIT_S,
  };
}

async function capture(argv: string[], io: CommandIO): Promise<number> {
  const parsed = parseCommand(SPEC, argv, io.stdout);
  if (!parsed) return 0;
  const call = callRequest(parsed.positionals[0] ?? "", parsed.values, parsed.typed["idle-timeout"], io);
  return emitted(await captureScenario({ ...call, name: parsed.values.name }, runIO(io, io.stderr)), io);
}

async function derive(argv: string[], io: CommandIO): Promise<number> {
  const parsed = parseCommand(DERIVE_SPEC, argv, io.stdout);
  if (!parsed) return 0;
  const { values, typed } = parsed;
  const outcome = await deriveDraft(
    {
      ...callRequest(parsed.positionals[0] ?? "", values, typed["idle-timeout"], io),
      agent: values.agent,
      name: values.name,
      keepPii: values["keep-pii"],
      maxCallMinutes: typed["max-call-minutes"],
      check: values.check,
    },
    runIO(io, io.stderr),
  );
  return emitted(outcome, io);
}

async function generate(argv: string[], io: CommandIO): Promise<number> {
  const parsed = parseCommand(GENERATE_SPEC, argv, io.stdout);
  if (!parsed) return 0;
  const { values, typed } = parsed;
  const outcome = await generateDraft(
    {
      stack: values.stack,
      project: io.project,
      agent: parsed.positionals[0] ?? "",
      count: typed.count ?? 5,
      keepPii: values["keep-pii"],
      maxCallMinutes: typed["max-call-minutes"],
      check: values.check,
    },
    runIO(io, io.stderr),
  );
  return emitted(outcome, io);
}

/** The YAML on stdout in one write, the notes after it on stderr. */
function emitted(outcome: CommandOutcome<string>, io: CommandIO): number {
  io.stdout.write(outcome.report ?? "");
  for (const note of outcome.notes) io.stderr.write(note);
  return outcome.code;
}
