/**
 * The cost of deep pagination: page 1 versus page 100 of an agent's charges (limit 20), by page
 * number (a keys-only read of each of the agent's 33 charge partitions' newest 2,000 ids, merged,
 * then one BatchGetItem of the page) and by `nextCursor` (one query per partition from the cursor),
 * in DynamoDB read requests, items examined and read capacity units as DynamoDB Local reports
 * them, plus the latency of each through the HTTP stack.
 */
import { encodeCursor } from '../../functions/contracts/cursor';
import { type BenchContext, enabledAgent, fundedUser, inBatches } from './context';
import { median } from './http';
import { apiEvent, invokeCounted } from './requests';

export interface PaginationRow {
  case: string;
  readRequests: number;
  itemsRead: number;
  readUnits: number;
  returned: number;
  medianMs: number;
}

export interface PaginationResult {
  charges: number;
  limit: number;
  rows: PaginationRow[];
}

const LIMIT = 20;
const PAGES = 100;

export async function deepPagination(ctx: BenchContext): Promise<PaginationResult> {
  const agent = await enabledAgent(ctx);
  const user = await fundedUser(ctx, { USD: '1000' });
  const total = PAGES * LIMIT + 10;
  // Real charges through the API, 16 at a time.
  const ids = await inBatches(total, 16, async (i) => {
    const r = await ctx.call(
      'POST',
      '/api/v1/agents/charges',
      { 'x-agent-key': agent.key, 'x-user-key': user.key, 'idempotency-key': `pg-${agent.id}-${i}` },
      '{"amount":0.01,"currency":"USD","description":"page"}',
    );
    if (r.status !== 201) throw new Error(`seeding charge: ${r.status} ${r.body}`);
    return (JSON.parse(r.body) as { id: string }).id;
  });
  // Newest first: page p starts after the ((p − 1) · limit)-th newest id.
  const newestFirst = [...ids].sort().reverse();
  const afterPage99 = newestFirst[(PAGES - 1) * LIMIT - 1] as string;

  const cases: { label: string; query: Record<string, string> }[] = [
    { label: 'page 1 (?page=1)', query: { page: '1', limit: String(LIMIT) } },
    {
      label: `page ${PAGES} (?page=${PAGES}, keys-only skip of ${(PAGES - 1) * LIMIT})`,
      query: { page: String(PAGES), limit: String(LIMIT) },
    },
    {
      label: `page ${PAGES} (?cursor= from page ${PAGES - 1})`,
      // A cursor carries the page it leads to and the limit it was made with (functions/use-cases/charges/charges.ts).
      query: { cursor: encodeCursor([afterPage99, PAGES, LIMIT]), limit: String(LIMIT) },
    },
  ];
  const rows: PaginationRow[] = [];
  const pages: string[][] = [];
  for (const c of cases) {
    const event = apiEvent('GET', '/api/v1/agents/charges', '/api/v1/agents/charges', {
      headers: { 'x-agent-key': agent.key },
      query: c.query,
    });
    const counted = await invokeCounted('list-charges', event);
    if (counted.status !== 200) throw new Error(`${c.label}: ${counted.status} ${counted.body}`);
    const body = JSON.parse(counted.body) as { data: { id: string }[] };
    pages.push(body.data.map((d) => d.id));
    const qs = new URLSearchParams(c.query).toString();
    const times: number[] = [];
    for (let i = 0; i < 15; i++) {
      const t0 = performance.now();
      const res = await ctx.call('GET', `/api/v1/agents/charges?${qs}`, { 'x-agent-key': agent.key });
      times.push(performance.now() - t0);
      if (res.status !== 200) throw new Error(`${c.label}: ${res.status}`);
    }
    const s = counted.scope;
    const reads = ['GetItem', 'BatchGetItem', 'Query', 'Scan'].reduce((a, n) => a + (s.dynamo.get(n) ?? 0), 0);
    rows.push({
      case: c.label,
      readRequests: reads,
      itemsRead: s.itemsRead,
      readUnits: s.readUnits,
      returned: body.data.length,
      medianMs: median(times),
    });
  }
  // The page-number and cursor routes to page 100 must return the same charges, the right ones.
  const expected = newestFirst.slice((PAGES - 1) * LIMIT, PAGES * LIMIT).join(',');
  if (pages[1]?.join(',') !== expected || pages[2]?.join(',') !== expected) {
    throw new Error(`page ${PAGES} by number and by cursor disagree with the charges made`);
  }
  return { charges: total, limit: LIMIT, rows };
}
