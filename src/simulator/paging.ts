// Lists: newest first, keyset paging on an internal sequence number. The cursor is opaque to
// clients (base64url JSON of the last item's sequence and the filters it was issued for), so items
// created while a client pages neither repeat nor shift the pages.
import { HttpError } from "./http.ts";

type Cursor = { after: number; filters: Record<string, string> };

export function encodeCursor(cursor: Cursor): string {
  return Buffer.from(JSON.stringify(cursor)).toString("base64url");
}

function decodeCursor(text: string): Cursor {
  try {
    const value = JSON.parse(Buffer.from(text, "base64url").toString("utf8")) as Cursor;
    if (typeof value?.after === "number" && value.filters && typeof value.filters === "object") return value;
  } catch {
    // fall through
  }
  throw new HttpError(400, "cursor: not a cursor returned by this service", { field: "cursor" });
}

/**
 * One page of `items` (ordered by `seq` ascending as stored) that pass `keep`, newest first.
 * `filters` are the query's filters: with a cursor they must be absent or equal to the cursor's.
 */
export function page<T extends { seq: number }>(
  items: readonly T[],
  options: {
    cursor: string | undefined;
    filters: Record<string, string | undefined>;
    pageSize: number;
    keep: (item: T, filters: Record<string, string>) => boolean;
  },
): { items: T[]; cursor: string | null } {
  let filters = defined(options.filters);
  let after = Number.POSITIVE_INFINITY;
  if (options.cursor !== undefined) {
    const cursor = decodeCursor(options.cursor);
    for (const [key, value] of Object.entries(filters)) {
      if (cursor.filters[key] !== value) {
        throw new HttpError(400, `cursor: was issued for other filters (${key} differs)`, { field: "cursor" });
      }
    }
    filters = cursor.filters;
    after = cursor.after;
  }
  const out: T[] = [];
  let more = false;
  for (let i = items.length - 1; i >= 0; i--) {
    const item = items[i] as T;
    if (item.seq >= after || !options.keep(item, filters)) continue;
    if (out.length === options.pageSize) {
      more = true;
      break;
    }
    out.push(item);
  }
  const last = out[out.length - 1];
  return { items: out, cursor: more && last ? encodeCursor({ after: last.seq, filters }) : null };
}

function defined(filters: Record<string, string | undefined>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [key, value] of Object.entries(filters)) if (value !== undefined) out[key] = value;
  return out;
}

/** A date filter's value as epoch ms; 400 naming the parameter when it is not a date. */
export function dateFilter(name: string, value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  const ms = Date.parse(value);
  if (Number.isNaN(ms)) throw new HttpError(400, `${name}: not a date-time`, { field: name });
  return ms;
}

export function inRange(value: string | null | undefined, gte: number | undefined, lt: number | undefined): boolean {
  if (gte === undefined && lt === undefined) return true;
  if (!value) return false;
  const ms = Date.parse(value);
  return (gte === undefined || ms >= gte) && (lt === undefined || ms < lt);
}
