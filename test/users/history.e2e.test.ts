/**
 * Cursors of the list endpoints, held against other owners and against sparse filters (issue 19):
 * a cursor taken from another payer's history is 400 `cursor is invalid`, never a 5xx; a status
 * filter reads a bounded number of Query pages per request and answers a partial page with a
 * `nextCursor` instead of reading the whole partition; the agents' lists take another agent's
 * cursor without a 5xx and without showing anything that is not the caller's.
 */

import { MAX_FILTERED_QUERIES } from '../../functions/store/charges/charge-read.repository';
import { db } from '../../functions/store/client';
import { auditAfterAll } from '../support/audit';
import { useTestStack } from '../support/stack';

const t = useTestStack({}, { sweepIntervalMs: 0 });
auditAfterAll();

type Page = { data: { id: string; status: string; agent?: { id: string } }[]; nextCursor: string | null; error?: string };

const charge = (agentKey: string, userKey: string, key: string, amount: number) =>
  t.call<{ id: string; status: string }>('POST', '/api/v1/agents/charges', {
    headers: { 'x-agent-key': agentKey, 'x-user-key': userKey, 'idempotency-key': key },
    body: { amount, currency: 'USD', description: `charge ${key}` },
  });
const history = (userKey: string, query: string) =>
  t.call<Page>('GET', `/api/v1/users/me/charges${query}`, { headers: { 'x-user-key': userKey } });

/** A payer with `n` charges by one agent (SUCCESS while the balance lasts, then refused: FAILED). */
async function payerWithCharges(n: number, funded: number) {
  const user = await t.fundedUser({ USD: funded });
  const agent = await t.enabledAgent();
  for (let i = 0; i < n; i++) await charge(agent.key, user.key, `c-${user.id}-${i}`, 1);
  // A refusal answers no id: the charges as the unfiltered history shows them, oldest first.
  const all = (await history(user.key, '?limit=100')).body.data.reverse();
  expect(all).toHaveLength(n);
  return { user, agent, ids: all.map((c) => c.id), statuses: all.map((c) => c.status) };
}

/** Counts the Query requests the user history sends to its index (GSI2) while `work` runs. */
async function countHistoryQueries<T>(work: () => Promise<T>): Promise<{ result: T; queries: number }> {
  let queries = 0;
  const name = `count-gsi2-${Date.now()}`;
  db().middlewareStack.add(
    (next, context) => async (args) => {
      if (context.commandName === 'QueryCommand' && (args.input as { IndexName?: string }).IndexName === 'GSI2') queries += 1;
      return next(args);
    },
    { step: 'initialize', name },
  );
  try {
    return { result: await work(), queries };
  } finally {
    db().middlewareStack.remove(name);
  }
}

describe("a cursor from another payer's history", () => {
  it('is 400 cursor is invalid, with or without status, never a 5xx', async () => {
    const mine = await payerWithCharges(2, 10);
    const theirs = await payerWithCharges(3, 10);
    const theirPage = await history(theirs.user.key, '?limit=1');
    expect(theirPage.body.nextCursor).toEqual(expect.any(String));
    const theirFiltered = await history(theirs.user.key, '?limit=1&status=SUCCESS');
    expect(theirFiltered.body.nextCursor).toEqual(expect.any(String));
    for (const cursor of [theirPage.body.nextCursor, theirFiltered.body.nextCursor]) {
      for (const status of ['', '&status=SUCCESS', '&status=FAILED']) {
        const res = await history(mine.user.key, `?cursor=${cursor}${status}`);
        expect({ status, code: res.status, body: res.body }).toEqual({ status, code: 400, body: { error: 'cursor is invalid' } });
      }
    }
    // The owner's own cursor still works.
    const next = await history(theirs.user.key, `?cursor=${theirPage.body.nextCursor}`);
    expect(next.status).toBe(200);
    expect(next.body.data.map((c) => c.id)).toEqual([theirs.ids[1]]);
  });

  it('a well-formed cursor naming no charge at all is 400 too', async () => {
    const { user } = await payerWithCharges(1, 10);
    const cursor = Buffer.from(JSON.stringify(['c01jhx3k6v1f8q2n7c9m4p5r6s7', 20])).toString('base64url');
    const res = await history(user.key, `?cursor=${cursor}`);
    expect([res.status, res.body]).toEqual([400, { error: 'cursor is invalid' }]);
  });
});

describe('the filtered history', () => {
  it(`reads at most ${MAX_FILTERED_QUERIES} Query pages per request and answers a partial page with nextCursor`, async () => {
    // One SUCCESS charge, then 12 refused ones (FAILED, newer): status=SUCCESS&limit=1 must page
    // past 12 FAILED items, more than 3 Query pages of 2 items hold.
    const { user, ids } = await payerWithCharges(13, 1);
    const found: string[] = [];
    let cursor: string | null = null;
    let requests = 0;
    let partial = 0;
    do {
      const query: string = `?limit=1&status=SUCCESS${cursor ? `&cursor=${cursor}` : ''}`;
      const { result: page, queries } = await countHistoryQueries(() => history(user.key, query));
      expect(page.status).toBe(200);
      expect(queries).toBeLessThanOrEqual(MAX_FILTERED_QUERIES);
      if (page.body.data.length === 0 && page.body.nextCursor) partial += 1;
      found.push(...page.body.data.map((c) => c.id));
      cursor = page.body.nextCursor;
      requests += 1;
    } while (cursor && requests < 20);
    expect(found).toEqual([ids[0]]);
    expect(partial).toBeGreaterThanOrEqual(1);
    // The unfiltered history is unchanged: every charge, newest first, one page.
    const all = await history(user.key, '?limit=20');
    expect(all.body.data.map((c) => c.id)).toEqual([...ids].reverse());
    expect(all.body.nextCursor).toBeNull();
  });

  it('pages of a dense filter line up: every match once, newest first', async () => {
    const { user, ids, statuses } = await payerWithCharges(7, 5);
    const found: string[] = [];
    let cursor: string | null = null;
    do {
      const page: Awaited<ReturnType<typeof history>> = await history(
        user.key,
        `?limit=2&status=FAILED${cursor ? `&cursor=${cursor}` : ''}`,
      );
      expect(page.status).toBe(200);
      found.push(...page.body.data.map((c) => c.id));
      cursor = page.body.nextCursor;
    } while (cursor);
    expect(found).toEqual(ids.filter((_, i) => statuses[i] === 'FAILED').reverse());
    expect(found).toHaveLength(2);
  });
});

describe("agents' lists with another agent's cursor", () => {
  it('answer no 5xx and nothing of the other agent', async () => {
    const payer = await t.fundedUser({ USD: 20 });
    const a = await t.enabledAgent();
    const b = await t.enabledAgent();
    const aIds: string[] = [];
    for (let i = 0; i < 3; i++) aIds.push((await charge(a.key, payer.key, `a-${a.id}-${i}`, 1)).body.id);
    for (let i = 0; i < 3; i++) await charge(b.key, payer.key, `b-${b.id}-${i}`, 1);
    const bPage = await t.call<{ nextCursor: string | null }>('GET', '/api/v1/agents/charges?limit=1', {
      headers: { 'x-agent-key': b.key },
    });
    expect(bPage.body.nextCursor).toEqual(expect.any(String));
    const res = await t.call<{ data: { id: string }[] }>('GET', `/api/v1/agents/charges?cursor=${bPage.body.nextCursor}`, {
      headers: { 'x-agent-key': a.key },
    });
    expect(res.status).toBeLessThan(500);
    for (const c of res.body.data ?? []) expect(aIds).toContain(c.id);

    // Withdrawals: a cursor naming another agent's payout.
    const earner = await t.earningAgent({ USD: 10 });
    const w = await t.call<{ payoutId: string }>('POST', '/api/v1/agents/withdraw', {
      headers: { 'x-agent-key': earner.key, 'idempotency-key': `w-${earner.id}` },
      body: { amount: 1, currency: 'USD', walletAddress: 'success@example.com' },
    });
    expect(w.body.payoutId).toEqual(expect.any(String));
    const cursor = Buffer.from(JSON.stringify([w.body.payoutId, 20])).toString('base64url');
    const foreign = await t.call<{ payouts: unknown[] }>('GET', `/api/v1/agents/withdraw?cursor=${cursor}`, {
      headers: { 'x-agent-key': a.key },
    });
    expect([foreign.status, foreign.body.payouts]).toEqual([200, []]);
  });
});
