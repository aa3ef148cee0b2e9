// Operator commands: `conversations list`, `conversations procedures <id>`, `procedures list`,
// `feedbacks list`, and `events <conversation-id>`. A readable table by default, `--json` (NDJSON)
// for scripts. The API key is read only from AGENT_IAC_API_KEY and a stream token only from
// AGENT_IAC_STREAM_TOKEN: process arguments are visible to other users of the machine.
import { type ParseArgsConfig, parseArgs } from "node:util";
import {
  AuthenticationError,
  type Client,
  createClient,
  displayUrl,
  InvalidRequestError,
  NotFoundError,
  type PagedList,
  redact,
} from "../api/index.ts";
import { transcriptPrinter } from "../render/index.ts";

const CONNECTION_HELP = `connection:
  --base-url URL   the service address (else AGENT_IAC_BASE_URL)
  the API key is read from AGENT_IAC_API_KEY only (never a flag)

exit codes: 0 done, 2 usage or configuration error (also 400/401/403/404 from the service),
3 service unreachable, failing, or the stream failed.`;

const LIST_FLAGS = `  --json                 one JSON object per line (NDJSON) instead of a table
  --limit N              stop after N items (default: every page)
  --cursor CURSOR        start from this page cursor`;

const HELP: Record<string, string> = {
  "conversations list": `usage: agent-iac conversations list [filters] [--json]

Lists conversations, following every page.

filters (ISO 8601 date-times; _gte: at or after, _lt: before):
  --created-at-gte T  --created-at-lt T  --completed-at-gte T  --completed-at-lt T
${LIST_FLAGS}

${CONNECTION_HELP}
`,
  "conversations procedures": `usage: agent-iac conversations procedures <conversation-id> [--json]

Lists the procedures of one conversation.
${LIST_FLAGS}

${CONNECTION_HELP}
`,
  "procedures list": `usage: agent-iac procedures list [filters] [--json]

Lists procedures, following every page.

filters:
  --agent-id ID  --conversation-id ID  --created-at-gte T  --created-at-lt T
${LIST_FLAGS}

${CONNECTION_HELP}
`,
  "feedbacks list": `usage: agent-iac feedbacks list --service-id ID [filters] [--json]

Lists the feedback given on the conversations of one service instance.

filters:
  --service-id ID (required)  --created-at-gte DATE  --created-at-lt DATE
${LIST_FLAGS}

${CONNECTION_HELP}
`,
  events: `usage: agent-iac events <conversation-id> [--json] [--events-url URL] [--last-event-id ID]

Follows a conversation's event stream live and prints its transcript as it grows; with --json,
prints each event envelope as one JSON line. Exits 0 after conversation.ended.

  --json               one event envelope per line (NDJSON)
  --events-url URL     the stream address from the create-conversation response; with
                       AGENT_IAC_STREAM_TOKEN set, the stream is opened with that token and no key
  --last-event-id ID   resume after this event
  --idle-timeout S     give up when the stream sends nothing for S seconds (default 120)

${CONNECTION_HELP}
`,
};

const GROUP_HELP: Record<string, string> = {
  conversations: `usage: agent-iac conversations list [filters] [--json]
       agent-iac conversations procedures <conversation-id> [--json]
`,
  procedures: "usage: agent-iac procedures list [filters] [--json]\n",
  feedbacks: "usage: agent-iac feedbacks list --service-id ID [filters] [--json]\n",
};

class UsageError extends Error {}

type Flags = Record<string, string | boolean | undefined>;

const listOptions = {
  json: { type: "boolean" },
  limit: { type: "string" },
  cursor: { type: "string" },
  "base-url": { type: "string" },
  help: { type: "boolean", short: "h" },
} as const;

const OPTIONS = {
  "conversations list": {
    ...listOptions,
    "created-at-gte": { type: "string" },
    "created-at-lt": { type: "string" },
    "completed-at-gte": { type: "string" },
    "completed-at-lt": { type: "string" },
  },
  "conversations procedures": listOptions,
  "procedures list": {
    ...listOptions,
    "agent-id": { type: "string" },
    "conversation-id": { type: "string" },
    "created-at-gte": { type: "string" },
    "created-at-lt": { type: "string" },
  },
  "feedbacks list": {
    ...listOptions,
    "service-id": { type: "string" },
    "created-at-gte": { type: "string" },
    "created-at-lt": { type: "string" },
  },
  events: {
    json: { type: "boolean" },
    "events-url": { type: "string" },
    "last-event-id": { type: "string" },
    "idle-timeout": { type: "string" },
    "base-url": { type: "string" },
    help: { type: "boolean", short: "h" },
  },
} as const;

type CommandName = keyof typeof OPTIONS;

export async function run(argv: string[]): Promise<number> {
  const [group = "", ...rest] = argv;
  let name: CommandName;
  let args: string[];
  if (group === "events") {
    name = "events";
    args = rest;
  } else {
    const sub = rest[0];
    const candidate = `${group} ${sub}`;
    if (!sub || !(candidate in OPTIONS)) {
      if (sub === "--help" || sub === "-h" || sub === "help") {
        process.stdout.write(GROUP_HELP[group] ?? "");
        return 0;
      }
      process.stderr.write(
        `agent-iac ${group}: ${sub ? `unknown subcommand "${sub}"` : "a subcommand is needed"}\n\n${GROUP_HELP[group] ?? ""}`,
      );
      return 2;
    }
    name = candidate as CommandName;
    args = rest.slice(1);
  }
  const label = `agent-iac ${name}`;
  let values: Flags;
  let positionals: string[];
  try {
    ({ values, positionals } = parseArgs({
      args,
      options: OPTIONS[name] as ParseArgsConfig["options"],
      allowPositionals: true,
      strict: true,
    }));
  } catch (error) {
    process.stderr.write(`${label}: ${(error as Error).message}\n\n${HELP[name]}`);
    return 2;
  }
  if (values.help) {
    process.stdout.write(HELP[name] ?? "");
    return 0;
  }
  let client: Client | undefined;
  try {
    const needsId = name === "events" || name === "conversations procedures";
    if (needsId ? positionals.length !== 1 : positionals.length !== 0) {
      throw new UsageError(
        needsId ? "exactly one conversation id is needed" : `unexpected argument "${positionals[0]}"`,
      );
    }
    const id = positionals[0] ?? "";
    if (name === "events") return await followEvents(id, values);
    client = connect(values);
    const limit = parseLimit(values.limit);
    switch (name) {
      case "conversations list":
        return await printList(
          client.conversations.list(
            query(values, ["cursor", "created-at-gte", "created-at-lt", "completed-at-gte", "completed-at-lt"]),
          ),
          values,
          limit,
          ["id", "agent_id", "status", "direction", "livemode", "created_at", "completed_at", "duration_sec"],
        );
      case "conversations procedures":
        return await printList(client.conversations.procedures(id, query(values, ["cursor"])), values, limit, [
          "id",
          "name",
          "agent_id",
          "status",
          "created_at",
          "output",
          "error",
        ]);
      case "procedures list":
        return await printList(
          client.procedures.list(
            query(values, ["cursor", "agent-id", "conversation-id", "created-at-gte", "created-at-lt"]),
          ),
          values,
          limit,
          ["id", "name", "conversation_id", "agent_id", "status", "livemode", "created_at", "output", "error"],
        );
      case "feedbacks list": {
        if (!values["service-id"]) throw new UsageError("--service-id is required");
        const list = client.feedbacks.list({
          service_id: String(values["service-id"]),
          ...query(values, ["cursor", "created-at-gte", "created-at-lt"]),
        });
        return await printList(
          list,
          values,
          limit,
          ["id", "conversation_id", "rating", "reasons", "comment", "created_by_user_name", "created_at"],
          (body) => {
            const reasons = (body as { reasons?: unknown }).reasons;
            return reasons && Object.keys(reasons).length > 0 ? `reasons: ${JSON.stringify(reasons)}` : undefined;
          },
        );
      }
    }
    return 2;
  } catch (error) {
    return fail(label, error);
  } finally {
    await client?.close();
  }
}

function fail(label: string, error: unknown): number {
  const secrets = [process.env.AGENT_IAC_API_KEY, process.env.AGENT_IAC_STREAM_TOKEN];
  const message = redact(error instanceof Error ? error.message : String(error), secrets);
  process.stderr.write(`${label}: ${message}\n`);
  if (error instanceof UsageError) process.stderr.write(`(see ${label} --help)\n`);
  return exitCodeFor(error);
}

/** 2: the caller must change something (flags, key, id); 3: the service or the stream failed. */
export function exitCodeFor(error: unknown): number {
  if (error instanceof UsageError || error instanceof TypeError) return 2;
  if (error instanceof AuthenticationError || error instanceof InvalidRequestError || error instanceof NotFoundError) {
    return 2;
  }
  return 3;
}

function connect(values: Flags, options: { keyOptional?: boolean; baseUrl?: string } = {}): Client {
  const baseUrl = (values["base-url"] as string | undefined) || process.env.AGENT_IAC_BASE_URL || options.baseUrl;
  if (!baseUrl) throw new UsageError("no service address: give --base-url or set AGENT_IAC_BASE_URL");
  const apiKey = process.env.AGENT_IAC_API_KEY || undefined;
  if (!apiKey && !options.keyOptional) throw new UsageError("no API key: set AGENT_IAC_API_KEY");
  return createClient({ baseUrl, apiKey });
}

function parseLimit(value: unknown): number {
  if (value === undefined) return Number.POSITIVE_INFINITY;
  const limit = Number(value);
  if (!Number.isInteger(limit) || limit < 1) throw new UsageError(`--limit must be a positive integer, not "${value}"`);
  return limit;
}

/** Flags (kebab-case) → query fields (snake_case), leaving out the absent ones. */
function query(values: Flags, flags: string[]): Record<string, string> {
  const out: Record<string, string> = {};
  for (const flag of flags) {
    const value = values[flag];
    if (typeof value === "string") out[flag.replaceAll("-", "_")] = value;
  }
  return out;
}

async function printList<T extends object, B>(
  list: PagedList<T, B>,
  values: Flags,
  limit: number,
  columns: string[],
  footer?: (body: B) => string | undefined,
): Promise<number> {
  let count = 0;
  const rows: T[] = [];
  let note: string | undefined;
  outer: for await (const page of list.pages()) {
    note ??= footer?.(page.body);
    for (const item of page.items) {
      if (values.json) process.stdout.write(`${JSON.stringify(item)}\n`);
      else rows.push(item);
      if (++count >= limit) break outer;
    }
  }
  if (!values.json) {
    process.stdout.write(table(rows as Record<string, unknown>[], columns));
    process.stdout.write(`${count} item${count === 1 ? "" : "s"}\n`);
    if (note) process.stdout.write(`${note}\n`);
  }
  return 0;
}

const MAX_CELL = 48;

function cell(value: unknown): string {
  if (value === undefined || value === null) return "-";
  const text = typeof value === "string" ? value : JSON.stringify(value);
  const flat = text.replace(/\s+/g, " ");
  return flat.length > MAX_CELL ? `${flat.slice(0, MAX_CELL - 1)}…` : flat;
}

export function table(rows: Record<string, unknown>[], columns: string[]): string {
  const cells = rows.map((row) => columns.map((column) => cell(row[column])));
  const widths = columns.map((column, i) => Math.max(column.length, ...cells.map((r) => (r[i] ?? "").length)));
  const line = (values: string[]) =>
    `${values
      .map((v, i) => v.padEnd(widths[i] ?? 0))
      .join("  ")
      .trimEnd()}\n`;
  return line(columns.map((c) => c.toUpperCase())) + cells.map(line).join("");
}

async function followEvents(conversationId: string, values: Flags): Promise<number> {
  const eventsUrl = values["events-url"] as string | undefined;
  const token = process.env.AGENT_IAC_STREAM_TOKEN || undefined;
  const useToken = Boolean(token && eventsUrl);
  if (token && !eventsUrl && !process.env.AGENT_IAC_API_KEY) {
    throw new UsageError("AGENT_IAC_STREAM_TOKEN is used with --events-url (the stream address it belongs to)");
  }
  let idleTimeoutMs: number | undefined;
  if (values["idle-timeout"] !== undefined) {
    const seconds = Number(values["idle-timeout"]);
    if (!(seconds > 0)) throw new UsageError(`--idle-timeout must be a positive number of seconds`);
    idleTimeoutMs = seconds * 1000;
  }
  let origin: string | undefined;
  if (eventsUrl) {
    try {
      origin = new URL(eventsUrl).origin;
    } catch {
      throw new UsageError(`--events-url is not a URL: ${displayUrl(eventsUrl)}`);
    }
  }
  const client = connect(values, { keyOptional: useToken, ...(origin ? { baseUrl: origin } : {}) });
  const controller = new AbortController();
  const onSignal = () => controller.abort(new Error("interrupted"));
  process.once("SIGINT", onSignal);
  const label = "agent-iac events";
  try {
    const stream = client.conversations.events(conversationId, {
      ...(useToken ? { token, eventsUrl } : eventsUrl ? { eventsUrl } : {}),
      lastEventId: values["last-event-id"] as string | undefined,
      idleTimeoutMs,
      signal: controller.signal,
    });
    const printer = values.json ? undefined : transcriptPrinter((text) => process.stdout.write(text));
    let ended = false;
    for await (const envelope of stream) {
      if (values.json) process.stdout.write(`${JSON.stringify(envelope)}\n`);
      else printer?.(envelope);
      if (envelope.payload.type === "conversation.ended") ended = true;
    }
    if (!ended) {
      process.stderr.write(`${label}: the stream ended before conversation.ended\n`);
      return 3;
    }
    return 0;
  } catch (error) {
    if (controller.signal.aborted) {
      process.stderr.write(`${label}: interrupted\n`);
      return 130;
    }
    return fail(label, error);
  } finally {
    process.off("SIGINT", onSignal);
    await client.close();
  }
}
