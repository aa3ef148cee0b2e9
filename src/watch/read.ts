// Reading a whole list through the client's paging (bounded by its page guard; each page retried
// by the client on 429, 5xx and network errors). When a page still fails after the client's
// retries with an error worth waiting out (a 429 storm, a 5xx spell, a dropped connection), the
// read resumes from the cursor of the last page it got, a bounded number of times: no page is
// read twice and no item counted twice. Pages and items read are counted for the report.
import { setTimeout as sleep } from "node:timers/promises";
import { ConnectionError, type PagedList, RateLimitError, ServerError, TimeoutError } from "../api/index.ts";

export type ReadCount = {
  /** What was read, e.g. "GET /conversations (created 2026-11-22T08:00Z … 2026-11-23T08:00Z)". */
  what: string;
  pages: number;
  items: number;
  /** Times the read resumed from its last cursor after the client gave up on a page. */
  resumed: number;
};

export type ResumeOptions = {
  /** Resumes after the client's own retries gave up (default 3). */
  maxResumes?: number;
  /** Wait before the first resume (doubled each time; default 2 s). */
  resumeDelayMs?: number;
  signal?: AbortSignal | undefined;
  /** Said before each resume (stderr in the commands). */
  onResume?: (line: string) => void;
};

/** Errors of one page that a later attempt may not get: worth resuming after. */
function worthResuming(error: unknown): boolean {
  if (error instanceof RateLimitError || error instanceof ServerError) return true;
  if (error instanceof ConnectionError) return true;
  // A trickling response that passed the whole-response deadline would do the same again.
  return error instanceof TimeoutError && error.limit !== "deadline";
}

/**
 * Every item of a list, page by page, to `onItem`. `open(cursor)` makes the list starting at a
 * cursor (undefined: the first page) with the same filters.
 */
export async function readAll<T>(
  open: (cursor: string | undefined) => PagedList<T, unknown>,
  count: ReadCount,
  onItem: (item: T) => void,
  options: ResumeOptions = {},
): Promise<void> {
  const maxResumes = options.maxResumes ?? 3;
  let delay = options.resumeDelayMs ?? 2000;
  let cursor: string | undefined;
  for (;;) {
    try {
      for await (const page of open(cursor).pages()) {
        count.pages++;
        count.items += page.items.length;
        for (const item of page.items) onItem(item);
        if (page.cursor) cursor = page.cursor;
      }
      return;
    } catch (error) {
      if (!worthResuming(error) || count.resumed >= maxResumes || options.signal?.aborted) throw error;
      count.resumed++;
      const where = cursor === undefined ? "the first page" : `page ${count.pages + 1}`;
      options.onResume?.(
        `${count.what}: ${(error as Error).message}; resuming at ${where} in ${(delay / 1000).toFixed(1)} s (resume ${count.resumed} of ${maxResumes})`,
      );
      await sleep(delay, undefined, options.signal ? { signal: options.signal } : {});
      delay *= 2;
    }
  }
}
