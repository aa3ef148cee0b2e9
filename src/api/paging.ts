// Lists as async iterables over items, with `.pages()` for page access. A cursor the service has
// already returned, or more than MAX_PAGES pages, stops the iteration with an error instead of
// paging forever (a service could return fresh cursors on empty pages without end).
import { InvalidResponseError } from "../errors/index.ts";

export type Page<T, B = unknown> = {
  items: T[];
  /** The cursor of the next page; null on the last page. */
  cursor: string | null;
  /** The whole response body (e.g. the feedback list's top-level `reasons`). */
  body: B;
};

/** More pages than any list should need (the `seen` set of cursors is bounded by it too). */
const MAX_PAGES = 10_000;

export type FetchPage<T, B> = (cursor: string | undefined) => Promise<Page<T, B>>;

export class PagedList<T, B = unknown> implements AsyncIterable<T> {
  readonly #fetchPage: FetchPage<T, B>;
  readonly #startCursor: string | undefined;
  readonly #describe: { method: string; path: string };

  constructor(fetchPage: FetchPage<T, B>, startCursor: string | undefined, describe: { method: string; path: string }) {
    this.#fetchPage = fetchPage;
    this.#startCursor = startCursor;
    this.#describe = describe;
  }

  /** Every page, first to last. Each iteration starts again from the first page. */
  async *pages(): AsyncGenerator<Page<T, B>, void, undefined> {
    const seen = new Set<string>();
    let cursor = this.#startCursor;
    if (cursor !== undefined) seen.add(cursor);
    for (let count = 1; ; count++) {
      const page = await this.#fetchPage(cursor);
      yield page;
      if (page.cursor === null || page.cursor === undefined || page.cursor === "") return;
      if (seen.has(page.cursor)) {
        const { method, path } = this.#describe;
        const shown = page.cursor.length > 40 ? `${page.cursor.slice(0, 40)}…` : page.cursor;
        throw new InvalidResponseError({
          message: `${method} ${path}: page ${count} returned the cursor ${JSON.stringify(shown)}, which was already followed; stopping instead of paging forever`,
          method,
          path,
          attempts: 1,
        });
      }
      if (count >= MAX_PAGES) {
        const { method, path } = this.#describe;
        throw new InvalidResponseError({
          message: `${method} ${path}: still more pages after ${MAX_PAGES}; stopping instead of paging forever (narrow the list with its filters)`,
          method,
          path,
          attempts: 1,
        });
      }
      seen.add(page.cursor);
      cursor = page.cursor;
    }
  }

  async *[Symbol.asyncIterator](): AsyncGenerator<T, void, undefined> {
    for await (const page of this.pages()) yield* page.items;
  }

  /** Collects the items (at most `limit`). */
  async toArray(limit = Number.POSITIVE_INFINITY): Promise<T[]> {
    const items: T[] = [];
    if (limit <= 0) return items;
    for await (const item of this) {
      items.push(item);
      if (items.length >= limit) break;
    }
    return items;
  }
}
