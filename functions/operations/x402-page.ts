/**
 * The x402 listings' pages (purchases, credited payments): `?limit=&cursor=`, a cursor being
 * `[after, limit]`. Its own file so the facilitator's functions do not bundle the purchases'.
 */
import { decodeCursor, isCount, pageLimit } from '../contracts/cursor';
import type { ListX402PaymentsQuery } from '../contracts/x402';

/**
 * A page's limit and where it starts, from the query: a cursor is `[after, limit]` with `after` an
 * id the listing accepts; the limit asked, else the cursor's, else the default.
 */
export function pageOf(query: ListX402PaymentsQuery, isAfter: (id: string) => boolean): { limit: number; after?: string } {
  const cursor = query.cursor
    ? decodeCursor(query.cursor, ([after, limit, ...rest]) =>
        rest.length === 0 && typeof after === 'string' && isAfter(after) && isCount(limit) ? { after, limit } : undefined,
      )
    : undefined;
  const limit = pageLimit(query.limit, cursor?.limit);
  return { limit, ...(cursor ? { after: cursor.after } : {}) };
}
