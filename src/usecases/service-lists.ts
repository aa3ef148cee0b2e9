// The lists of `conversations list`, `conversations procedures <id>`, `procedures list` and
// `feedbacks list`: one of the service's lists read page by page and written as each page arrives
// (a table, or NDJSON for scripts), never held whole; the client is opened here and closed at the end.
import type { Client, PagedList } from "../api/index.ts";
import { InvalidInputError } from "../errors/index.ts";
import { jsonLine, TableWriter } from "../render/index.ts";
import type { Connection, ProjectContext } from "../settings/index.ts";
import { type RetryListener, withStackClient } from "./service-client.ts";
import { stackConnection } from "./session.ts";

type ServiceList = {
  /** The table's columns (fields of each item). */
  columns: string[];
  read(client: Client, query: Record<string, string>, conversationId: string): PagedList<object, unknown>;
  /** A note from the list's first page (e.g. feedbacks' reasons), said under the table. */
  note?: (body: unknown) => string | undefined;
};

const LISTS = {
  conversations: {
    columns: ["id", "agent_id", "status", "direction", "livemode", "created_at", "completed_at", "duration_sec"],
    read: (client, query) => client.conversations.list(query),
  },
  "conversation procedures": {
    columns: ["id", "name", "agent_id", "status", "created_at", "output", "error"],
    read: (client, query, conversationId) => client.conversations.procedures(conversationId, query),
  },
  procedures: {
    columns: ["id", "name", "conversation_id", "agent_id", "status", "livemode", "created_at", "output", "error"],
    read: (client, query) => client.procedures.list(query),
  },
  feedbacks: {
    columns: ["id", "conversation_id", "rating", "reasons", "comment", "created_by_user_name", "created_at"],
    read: (client, query) => {
      // GET /feedbacks needs its service instance: the command asks for it before any request.
      if (!query.service_id) throw new InvalidInputError("the feedbacks list needs a service_id");
      return client.feedbacks.list({ ...query, service_id: query.service_id });
    },
    note: (body) => {
      const reasons = (body as { reasons?: unknown }).reasons;
      return reasons && Object.keys(reasons).length > 0 ? `reasons: ${JSON.stringify(reasons)}` : undefined;
    },
  },
} satisfies Record<string, ServiceList>;

export type ServiceListName = keyof typeof LISTS;

export type ListRequest = {
  project: ProjectContext;
  stack: string;
  /** The service's address instead of the stack's (--base-url). */
  baseUrl?: string | undefined;
  list: ServiceListName;
  /** The list's query parameters, as the interface names them (`created_at_gte`, `cursor`, …). */
  query: Record<string, string>;
  /** The conversation whose procedures are listed (`conversation procedures`). */
  conversationId?: string | undefined;
  /** Stop after this many items (default: every page). */
  limit?: number | undefined;
  /** `table`: aligned columns, the count and the list's note; `ndjson`: one JSON object per line. */
  format: "table" | "ndjson";
};

export type ListIO = {
  out: { write(text: string): unknown };
  onRetry?: RetryListener | undefined;
  /** Told of the stack's connection before any request: the service's errors are said in its terms. */
  onConnection?: ((connection: Connection) => void) | undefined;
};

export type Listed = {
  /** The items written. */
  items: number;
  /** Said under a table (the list's note); none with NDJSON, whose output is only the items. */
  notes: string[];
  code: 0;
};

/** Reads the list page by page and writes each page as it arrives: nothing is held beyond one page. */
export async function listRecords(request: ListRequest, io: ListIO): Promise<Listed> {
  const list: ServiceList = LISTS[request.list];
  const connection = await stackConnection(request.project, request.stack, { baseUrl: request.baseUrl });
  io.onConnection?.(connection);
  const limit = request.limit ?? Number.POSITIVE_INFINITY;
  const out = (text: string) => io.out.write(text);
  const table = request.format === "table" ? new TableWriter(list.columns, out) : undefined;
  return withStackClient(connection, request.stack, io.onRetry, async (client) => {
    let items = 0;
    let note: string | undefined;
    for await (const page of list.read(client, request.query, request.conversationId ?? "").pages()) {
      note ??= list.note?.(page.body);
      const rows = page.items.slice(0, Math.max(0, limit - items)) as Record<string, unknown>[];
      items += rows.length;
      if (table) table.write(rows);
      else for (const item of rows) out(`${jsonLine(item)}\n`);
      if (items >= limit) break;
    }
    if (!table) return { items, notes: [], code: 0 };
    table.end();
    out(`${items} item${items === 1 ? "" : "s"}\n`);
    return { items, notes: note ? [note] : [], code: 0 };
  });
}
