/**
 * GET /api/v1/users/me/statement (DESIGN §26, docs/statement.md): every movement of the payer's
 * balance, newest first, each with the balance after it. The entries are written with the
 * movements (store/statement/statement-items.ts); the balance after each row is computed here,
 * backward from the available balance now: the newest row's is the balance, each older row's is
 * the newer one's minus the newer one's amount, per currency. A cursor carries the position and
 * the running balance of each currency, so pages reconcile across each other too.
 *
 * A page costs at most 3 DynamoDB requests: the balance's GetItem (first page only) and at most
 * two Queries. Filters are applied to the rows read, so skipped rows still move the running
 * balance; when the budget runs out before `limit` rows match, the page answers what it found and
 * a `nextCursor` (as DynamoDB's own filtered pages do).
 */
import { decodeCursor, encodeCursor, isCount, pageLimit } from '../../contracts/cursor';
import { jsonAmount } from '../../contracts/json';
import type { StatementQuery } from '../../contracts/request.schemas';
import { CURRENCIES } from '../../core/money';
import {
  filtersRows,
  matches,
  type Running,
  type StatementEntry,
  type StatementFilter,
  statementEntryId,
  type WalkedRow,
  walkBackward,
} from '../../core/statement';
import { refuse } from '../../messages/refusal';
import { getUser } from '../../store/identity/user.repository';
import { statementRows } from '../../store/statement/statement.repository';

/** Queries a page may make after the balance's GetItem (DESIGN §26: at most 3 requests a page). */
export const STATEMENT_QUERIES_PER_PAGE = 2;
/** Rows a Query reads when filters may skip some: about 600 bytes each, 60 KB (15 strongly consistent read units) a Query. */
export const STATEMENT_ROWS_PER_QUERY = 100;

/** A page of the statement: its rows with the balance after each, and where the next page starts. */
export interface StatementPage {
  rows: WalkedRow[];
  next: StatementCursor | undefined;
}

/** Where a page stopped: the last row read (shown or skipped), the balances before it, the page size. */
export interface StatementCursor {
  before: string;
  running: Running;
  limit: number;
}

/** The payer's statement, a page (see the file header). */
export async function readStatement(userId: string, query: StatementQuery): Promise<StatementPage> {
  const cursor = query.cursor ? readStatementCursor(query.cursor) : undefined;
  const limit = pageLimit(query.limit, cursor?.limit);
  const filter = filterOf(query);
  let running: Running;
  if (cursor) running = { ...cursor.running };
  else {
    // Strongly consistent: the newest row's balance after it is the balance a GET /users/me shows now.
    const user = await getUser(userId);
    if (!user) throw refuse('userNotFound');
    running = { ...user.balances };
  }
  // Unfiltered, a page reads one row more than it shows (is there a next page?); filtered (or
  // bounded by `to`, whose newer rows are read only to move the balance), as many as a Query takes.
  const scan = filtersRows(filter) || filter.to !== undefined ? STATEMENT_ROWS_PER_QUERY : limit + 1;
  const rows: WalkedRow[] = [];
  let before = cursor?.before;
  for (let queries = 0; queries < STATEMENT_QUERIES_PER_PAGE; queries++) {
    const { entries, more } = await statementRows(userId, {
      limit: scan,
      ...(before !== undefined ? { before } : {}),
      ...(filter.from !== undefined ? { since: filter.from } : {}),
    });
    let read = 0;
    for (const entry of entries) {
      if (rows.length === limit) break;
      const [walked] = walkBackward([entry], running);
      read++;
      before = entry.entryId;
      if (walked && matches(entry, filter)) rows.push(walked);
    }
    const unread = entries.slice(read);
    if (rows.length === limit) {
      // Full: a next page only where a row is left to show (in what was read, or below it).
      const next = more || unread.some((entry) => matches(entry, filter));
      return { rows, next: next && before !== undefined ? { before, running, limit } : undefined };
    }
    if (!more) return { rows, next: undefined };
  }
  // The budget ran out before `limit` rows matched: what was found, and where to go on.
  return { rows, next: before !== undefined ? { before, running, limit } : undefined };
}

function filterOf(query: StatementQuery): StatementFilter {
  return {
    ...(query.currency ? { currency: query.currency } : {}),
    ...(query.type ? { type: query.type } : {}),
    ...(query.agentId ? { agentId: query.agentId } : {}),
    ...(query.q ? { q: query.q } : {}),
    ...(query.from ? { from: query.from } : {}),
    ...(query.to ? { to: query.to } : {}),
  };
}

/**
 * A statement cursor: base64url JSON of the last row read, the page size and the running balance of
 * each currency. Not signed: it names a position in the caller's own partition (another payer's
 * rows are never read with it), so a cursor edited by hand only misleads its own holder's
 * `balanceAfter` figures (docs/statement.md).
 */
export const encodeStatementCursor = (c: StatementCursor): string =>
  encodeCursor([c.before, c.limit, ...CURRENCIES.map((currency) => c.running[currency])]);

function readStatementCursor(text: string): StatementCursor {
  return decodeCursor(text, ([before, limit, ...balances]) => {
    if (typeof before !== 'string' || !/^[0-9a-hjkmnp-tv-z]{26}$/.test(before) || !isCount(limit)) return undefined;
    if (balances.length !== CURRENCIES.length || !balances.every((b) => Number.isSafeInteger(b))) return undefined;
    const running = Object.fromEntries(CURRENCIES.map((currency, i) => [currency, balances[i] as number])) as Running;
    return { before, limit, running };
  });
}

/** A row as the API shows it: amounts signed, exact decimal literals. */
export function statementRowView({ entry, balanceAfter }: WalkedRow) {
  return {
    id: statementEntryId(entry.entryId),
    createdAt: entry.createdAt,
    type: entry.type,
    amount: jsonAmount(entry.amount, entry.currency),
    currency: entry.currency,
    balanceAfter: jsonAmount(balanceAfter, entry.currency),
    status: entry.status,
    description: entry.description,
    counterparty: entry.counterparty,
    grantId: entry.grantId ?? null,
    reference: entry.reference,
  };
}

/** The page as the API answers it. */
export const statementView = (page: StatementPage) => ({
  data: page.rows.map(statementRowView),
  nextCursor: page.next ? encodeStatementCursor(page.next) : null,
});

export type { StatementEntry };
