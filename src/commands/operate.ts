// Operator commands: `conversations list`, `conversations procedures <id>`, `procedures list`,
// `feedbacks list`, and `events <conversation-id>`. A readable table by default (streamed page by
// page, never held whole), `--json` (NDJSON) for scripts. The connection is the stack's (--stack,
// default dev), as every command resolves it; the API key never comes from a flag (process
// arguments are visible to other users), a stream token only from AGENT_IAC_STREAM_TOKEN.
// Flags → one request → the use case that reads the service (listRecords, followConversationEvents).
import { CliError } from "../errors/index.ts";
import { terminalText } from "../render/index.ts";
import { listRecords, type ServiceListName } from "../usecases/index.ts";
import { type CommandSpec, type Flag, parseCommand, suggestion, wholeNumber } from "./args.ts";
import { followEvents } from "./events.ts";
import { CONNECTION_FLAGS, CONNECTION_HELP } from "./flags.ts";
import type { CommandIO } from "./lifecycle.ts";

const date = (help: string): Flag => ({ type: "string", arg: "T", help: `${help} (ISO 8601 date-time)` });
/** A flag that is also a query parameter of the list (kebab-case flag → snake_case field). */
type ListFlag = Flag & { query?: true };

type ListCommand = {
  about: string;
  synopsis?: string;
  flags: Record<string, ListFlag>;
  /** The service's list it reads (src/usecases: its columns, its note). */
  list: ServiceListName;
};

const LISTS: Record<string, ListCommand> = {
  "conversations list": {
    about: "Lists conversations, following every page.",
    flags: {
      "created-at-gte": { ...date("created at or after"), query: true },
      "created-at-lt": { ...date("created before"), query: true },
      "completed-at-gte": { ...date("completed at or after"), query: true },
      "completed-at-lt": { ...date("completed before"), query: true },
    },
    list: "conversations",
  },
  "conversations procedures": {
    about: "Lists the procedures of one conversation.",
    synopsis: "<conversation-id> [options]",
    flags: {},
    list: "conversation procedures",
  },
  "procedures list": {
    about: "Lists procedures, following every page.",
    flags: {
      "agent-id": { type: "string", arg: "ID", help: "only this procedural agent's", query: true },
      "conversation-id": { type: "string", arg: "ID", help: "only this conversation's", query: true },
      "created-at-gte": { ...date("created at or after"), query: true },
      "created-at-lt": { ...date("created before"), query: true },
    },
    list: "procedures",
  },
  "feedbacks list": {
    about: "Lists the feedback given on the conversations of one service instance.",
    synopsis: "--service-id ID [options]",
    flags: {
      "service-id": { type: "string", arg: "ID", help: "the service instance (required)", query: true },
      "created-at-gte": { type: "string", arg: "DATE", help: "created at or after", query: true },
      "created-at-lt": { type: "string", arg: "DATE", help: "created before", query: true },
    },
    list: "feedbacks",
  },
};

const LIST_FLAGS = {
  json: { type: "boolean", help: "one JSON object per line (NDJSON) instead of a table" },
  limit: { type: "string", arg: "N", help: "stop after N items (default: every page)", value: wholeNumber(1) },
  cursor: { type: "string", arg: "CURSOR", help: "start from this page cursor", query: true },
} as const satisfies Record<string, ListFlag>;

const GROUP_HELP: Record<string, string> = {
  conversations: `usage: agent-iac conversations list [filters] [--json]
       agent-iac conversations procedures <conversation-id> [--json]
`,
  procedures: "usage: agent-iac procedures list [filters] [--json]\n",
  feedbacks: "usage: agent-iac feedbacks list --service-id ID [filters] [--json]\n",
};

export async function run(argv: string[], io: CommandIO): Promise<number> {
  const [group = "", sub, ...rest] = argv;
  if (group === "events") return followEvents(argv.slice(1), io);
  const name = `${group} ${sub}`;
  const command = LISTS[name];
  if (!command) {
    if (sub === "--help" || sub === "-h" || sub === "help") {
      io.stdout.write(GROUP_HELP[group] ?? "");
      return 0;
    }
    const known = Object.keys(LISTS).flatMap((key) =>
      key.startsWith(`${group} `) ? [key.slice(group.length + 1)] : [],
    );
    throw new CliError(sub ? `unknown subcommand "${sub}"${suggestion(sub, known)}` : "a subcommand is needed", {
      hint: GROUP_HELP[group],
    });
  }
  const spec: CommandSpec<Record<string, ListFlag>> = {
    name,
    synopsis: command.synopsis ?? "[options]",
    about: command.about,
    flags: { ...command.flags, ...LIST_FLAGS, ...CONNECTION_FLAGS },
    footer: CONNECTION_HELP,
    positionals: command.synopsis?.startsWith("<")
      ? { min: 1, max: 1, what: "a conversation id" }
      : { max: 0, what: "" },
  };
  const parsed = parseCommand(spec, rest, io.stdout);
  if (!parsed) return 0;
  const values = parsed.values as Record<string, string | boolean | undefined>;
  const query = Object.fromEntries(
    Object.entries(spec.flags).flatMap(([flag, def]) =>
      def.query && typeof values[flag] === "string" ? [[flag.replaceAll("-", "_"), values[flag] as string]] : [],
    ),
  );
  if (command.list === "feedbacks" && !query.service_id) throw new CliError("--service-id is required");
  const json = values.json === true;
  const listed = await listRecords(
    {
      project: io.project,
      stack: String(values.stack),
      baseUrl: values["base-url"] as string | undefined,
      list: command.list,
      query,
      conversationId: parsed.positionals[0],
      limit: (parsed.typed as { limit?: number }).limit,
      format: json ? "ndjson" : "table",
    },
    { out: io.stdout, onRetry: io.printRetry, onConnection: (connection) => io.useConnection(connection) },
  );
  // NDJSON output is the items alone.
  if (!json) for (const note of listed.notes) io.stdout.write(`${terminalText(note)}\n`);
  return listed.code;
}
