// Lists: newest first, keyset paging on an internal sequence number. The cursor is opaque to
// clients (base64url JSON of the last item's sequence and the filters it was issued for, then a
// MAC), so items created while a client pages neither repeat nor shift the pages, and a cursor
// this simulator did not issue (forged, or from before a restart or reset) is refused.
import { createHmac, timingSafeEqual } from "node:crypto";
import { HttpError } from "./http.ts";

type Cursor = { after: number; filters: Record<string, string> };

const mac = (key: Buffer, data: string) => createHmac("sha256", key).update(data).digest().subarray(0, 16);

function encodeCursor(cursor: Cursor, key: Buffer): string {
  const data = Buffer.from(JSON.stringify(cursor)).toString("base64url");
  return `${data}.${mac(key, data).toString("base64url")}`;
}

function decodeCursor(text: string, key: Buffer): Cursor {
  const [data = "", signature = ""] = text.split(".");
  const given = Buffer.from(signature, "base64url");
  const expected = mac(key, data);
  if (given.length === expected.length && timingSafeEqual(given, expected)) {
    try {
      const value = JSON.parse(Buffer.from(data, "base64url").toString("utf8")) as Cursor;
      if (typeof value?.after === "number" && value.filters && typeof value.filters === "object") return value;
    } catch {
      // fall through
    }
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
    /** Signs and checks cursors. */
    key: Buffer;
    /** A cursor after every non-empty page, so the last page is empty (the variant profile). */
    trailingEmptyPage?: boolean;
  },
): { items: T[]; cursor: string | null } {
  let filters = defined(options.filters);
  let after = Number.POSITIVE_INFINITY;
  if (options.cursor !== undefined) {
    const cursor = decodeCursor(options.cursor, options.key);
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
  const next = more || options.trailingEmptyPage === true;
  return { items: out, cursor: next && last ? encodeCursor({ after: last.seq, filters }, options.key) : null };
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
