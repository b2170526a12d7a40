/**
 * The payer's statement (GET /api/v1/users/me/statement, DESIGN §26) against the local stack: the
 * movements of one payer (operator credits, charges, a hold captured in part, a hold released, a
 * refund) each make their row with its signed amount; the newest `balanceAfter` is the available
 * balance and each row's difference with the next older row is its amount, within a page and
 * across pages; filters and date bounds; bad parameters are 400 `{"error": ...}`; a page costs at
 * most 3 DynamoDB requests; a race of movements on one payer and faulted transactions (a conflict, a
 * lost answer) still leave exactly one row per movement. The ledger audit (statement sums included) runs after the file.
 */
import { db } from '../../functions/store/client';
import { inject, timedOut, transactionConflict } from '../faults/inject';
import { auditAfterAll } from '../support/audit';
import { useTestStack } from '../support/stack';

const t = useTestStack({}, { sweepIntervalMs: 0 });
auditAfterAll();

interface Row {
  id: string;
  createdAt: string;
  type: string;
  amount: number;
  currency: 'USD' | 'USDC';
  balanceAfter: number;
  status: string;
  description: string;
  counterparty: { kind: string; id: string; name: string };
  grantId: string | null;
  reference: string;
}
type Page = { data: Row[]; nextCursor: string | null; error?: string };

const SCALE = { USD: 100, USDC: 1_000_000 } as const;
const minor = (value: number, currency: 'USD' | 'USDC') => Math.round(value * SCALE[currency]);

const statement = (userKey: string, query = '') =>
  t.call<Page>('GET', `/api/v1/users/me/statement${query}`, { headers: { 'x-user-key': userKey } });

let seq = 0;
const charge = (agentKey: string, userKey: string, body: Record<string, unknown>) =>
  t.call<{ id: string; status: string }>('POST', '/api/v1/agents/charges', {
    headers: { 'x-agent-key': agentKey, 'x-user-key': userKey, 'idempotency-key': `st-${process.pid}-${++seq}` },
    body: { currency: 'USD', ...body },
  });
const agentPost = (agentKey: string, path: string, body: Record<string, unknown> = {}) =>
  t.call('POST', path, { headers: { 'x-agent-key': agentKey, 'idempotency-key': `st-${process.pid}-${++seq}` }, body });

/** Every row of the statement, following cursors; each page checked to chain onto the one before. */
async function allRows(userKey: string, query = ''): Promise<Row[]> {
  const rows: Row[] = [];
  let cursor: string | null = null;
  do {
    const sep = query ? '&' : '?';
    const res = await statement(userKey, cursor ? `${query}${sep}cursor=${cursor}` : query);
    expect(res.status).toBe(200);
    rows.push(...res.body.data);
    cursor = res.body.nextCursor;
  } while (cursor);
  return rows;
}

/** Rows (newest first, unfiltered) reconcile: the newest per currency is the balance, each older differs by the newer's amount. */
function expectReconciled(rows: readonly Row[], balances: Record<string, number>) {
  const after: Record<string, number | undefined> = {};
  for (const row of rows) {
    const expected = after[row.currency] ?? minor(balances[row.currency] ?? 0, row.currency);
    expect({ id: row.id, balanceAfter: minor(row.balanceAfter, row.currency) }).toEqual({ id: row.id, balanceAfter: expected });
    after[row.currency] = expected - minor(row.amount, row.currency);
  }
  return after;
}

const me = async (userKey: string) =>
  (await t.call<{ balances: Record<string, number> }>('GET', '/api/v1/users/me', { headers: { 'x-user-key': userKey } })).body;

describe('the statement', () => {
  let user: { key: string; id: string };
  let agent: { key: string; id: string };
  let rows: Row[];

  beforeAll(async () => {
    user = await t.fundedUser({ USD: 100, USDC: 5 });
    agent = await t.enabledAgent('statement-bot');
    const paid = await charge(agent.key, user.key, { amount: 5, description: 'forecast for Lisbon' });
    expect(paid.status).toBe(201);
    const held = await charge(agent.key, user.key, { amount: 10, capture: false, description: 'a room' });
    expect(held.status).toBe(201);
    expect((await agentPost(agent.key, `/api/v1/agents/charge/${held.body.id}/capture`, { amount: 4 })).status).toBe(200);
    const released = await charge(agent.key, user.key, { amount: 3, capture: false, description: 'a taxi' });
    expect((await agentPost(agent.key, `/api/v1/agents/charge/${released.body.id}/release`)).status).toBe(200);
    expect((await agentPost(agent.key, `/api/v1/agents/charge/${paid.body.id}/refund`, { amount: 2 })).status).toBe(200);
    const usdc = await charge(agent.key, user.key, { amount: 1.25, currency: 'USDC', description: 'tokens' });
    expect(usdc.status).toBe(201);
    rows = await allRows(user.key);
  });

  it('has one row per movement, newest first, with signed amounts and who was paid', async () => {
    expect(rows.map((r) => [r.type, r.amount, r.currency])).toEqual([
      ['charge', -1.25, 'USDC'],
      ['refund', 2, 'USD'],
      ['hold_release', 3, 'USD'],
      ['hold', -3, 'USD'],
      ['hold_release', 6, 'USD'],
      ['hold', -10, 'USD'],
      ['charge', -5, 'USD'],
      ['credit', 5, 'USDC'],
      ['credit', 100, 'USD'],
    ]);
    expect(rows[6]).toMatchObject({
      status: 'SUCCESS',
      description: 'forecast for Lisbon',
      counterparty: { kind: 'agent', id: agent.id, name: 'statement-bot' },
      grantId: null,
    });
    expect(rows[6]?.reference).toMatch(/^c/);
    expect(rows[8]?.counterparty).toEqual({ kind: 'operator', id: 'operator', name: 'Operator' });
    const ids = rows.map((r) => r.id);
    expect(new Set(ids).size).toBe(ids.length);
    for (const r of rows) expect(r.id).toMatch(/^st[0-9a-z]{26}$/);
  });

  it('reconciles with the available balance, and starts at 0 for a payer made since', async () => {
    const { balances } = await me(user.key);
    expect(balances).toEqual({ USD: 93, USDC: 3.75 });
    const before = expectReconciled(rows, balances);
    expect(before).toEqual({ USD: 0, USDC: 0 });
  });

  it('reconciles across pages of every size', async () => {
    const { balances } = await me(user.key);
    for (const limit of [1, 2, 4]) {
      const paged = await allRows(user.key, `?limit=${limit}`);
      expect(paged).toEqual(rows);
      expectReconciled(paged, balances);
    }
  });

  it('filters rows and keeps their balanceAfter as the whole statement says', async () => {
    const byId = new Map(rows.map((r) => [r.id, r]));
    const cases: [string, (r: Row) => boolean][] = [
      ['?type=hold', (r) => r.type === 'hold'],
      ['?currency=USDC', (r) => r.currency === 'USDC'],
      [`?agentId=${agent.id}`, (r) => r.counterparty.kind === 'agent'],
      ['?q=LISBON', (r) => r.description.includes('Lisbon')],
      ['?type=hold_release&limit=1', (r) => r.type === 'hold_release'],
      [
        `?from=${rows[3]?.createdAt}&to=${rows[1]?.createdAt}`,
        (r) => r.createdAt >= (rows[3]?.createdAt ?? '') && r.createdAt <= (rows[1]?.createdAt ?? ''),
      ],
    ];
    for (const [query, keep] of cases) {
      const filtered = await allRows(user.key, query);
      expect({ query, rows: filtered }).toEqual({ query, rows: rows.filter(keep) });
      for (const r of filtered) expect(r).toEqual(byId.get(r.id));
    }
    const today = new Date().toISOString().slice(0, 10);
    expect(await allRows(user.key, `?from=${today}&to=${today}`)).toEqual(rows);
    expect(await allRows(user.key, '?to=2020-01-01')).toEqual([]);
  });

  it('a page costs at most 3 DynamoDB requests', async () => {
    for (const query of ['?limit=2', '?type=credit&limit=1', '?q=nothing-matches']) {
      const { requests } = await countRequests(() => statement(user.key, query));
      expect({ query, requests: requests.length <= 3 }).toEqual({ query, requests: true });
    }
  });

  it('refuses bad parameters with 400 and an error', async () => {
    for (const query of [
      '?type=x',
      '?currency=EUR',
      '?agentId=nope',
      '?from=yesterday',
      '?to=2026-02-30',
      '?from=2026-02-01&to=2026-01-01',
      '?limit=0',
      '?limit=101',
      '?cursor=garbage',
      '?color=red',
      `?q=${'x'.repeat(101)}`,
    ]) {
      const res = await statement(user.key, query);
      expect({ query, status: res.status, error: typeof res.body.error }).toEqual({ query, status: 400, error: 'string' });
    }
    const first = await statement(user.key, '?limit=2');
    const mismatched = await statement(user.key, `?limit=3&cursor=${first.body.nextCursor}`);
    expect([mismatched.status, mismatched.body]).toEqual([400, { error: 'cursor is invalid' }]);
    expect((await t.call('GET', '/api/v1/users/me/statement')).status).toBe(401);
  });
});

describe('the statement under races', () => {
  it('stays exact while charges, holds, captures, releases and refunds of one payer run at once', async () => {
    const user = await t.fundedUser({ USD: 1000 });
    const agent = await t.enabledAgent();
    const paid = await Promise.all(Array.from({ length: 6 }, () => charge(agent.key, user.key, { amount: 7, description: 'paid' })));
    const holds = await Promise.all(
      Array.from({ length: 8 }, () => charge(agent.key, user.key, { amount: 9, capture: false, description: 'held' })),
    );
    for (const r of [...paid, ...holds]) expect(r.status).toBe(201);
    const results = await Promise.all([
      ...Array.from({ length: 10 }, () => charge(agent.key, user.key, { amount: 3, description: 'racing' })),
      ...Array.from({ length: 4 }, () => charge(agent.key, user.key, { amount: 4, capture: false, description: 'racing hold' })),
      ...holds.slice(0, 4).map((h) => agentPost(agent.key, `/api/v1/agents/charge/${h.body.id}/capture`, { amount: 5 })),
      ...holds.slice(4).map((h) => agentPost(agent.key, `/api/v1/agents/charge/${h.body.id}/release`)),
      ...paid.map((p) => agentPost(agent.key, `/api/v1/agents/charge/${p.body.id}/refund`, { amount: 2 })),
      // A second refund of the same charges at once: some lose to the first (409) or pass; either way the rows say so.
      ...paid.slice(0, 3).map((p) => agentPost(agent.key, `/api/v1/agents/charge/${p.body.id}/refund`, { amount: 1 })),
      // Reads while money moves: each page chains within itself whatever commits meanwhile.
      ...Array.from({ length: 3 }, () => statement(user.key, '?limit=5')),
    ]);
    for (const r of results) expect([200, 201, 409]).toContain(r.status);

    const rows = await allRows(user.key);
    const { balances } = await me(user.key);
    // The newest balanceAfter is the balance, each row's difference its amount, and the entries sum to the balance.
    expect(expectReconciled(rows, balances)).toEqual({ USD: 0 });
    const count = (type: string) => rows.filter((r) => r.type === type).length;
    expect([count('credit'), count('charge'), count('hold'), count('hold_release')]).toEqual([1, 16, 12, 8]);
    const refunds = rows.filter((r) => r.type === 'refund').reduce((sum, r) => sum + minor(r.amount, 'USD'), 0);
    expect(refunds).toBeGreaterThanOrEqual(6 * 200);
    for (const limit of [3, 7]) expect(await allRows(user.key, `?limit=${limit}`)).toEqual(rows);
  });
});

describe('the statement under faults', () => {
  const hasEntry = (input: Record<string, unknown>) =>
    ((input.TransactItems as { Put?: { Item?: { PK?: unknown } } }[] | undefined) ?? []).some((i) =>
      String(i.Put?.Item?.PK ?? '').startsWith('STMT#'),
    );

  it('writes one row per movement when a transaction conflicts or its answer is lost, and the retry replays', async () => {
    const user = await t.fundedUser({ USD: 100 });
    const agent = await t.enabledAgent();
    const post = (path: string, headers: Record<string, string>, body: Record<string, unknown>) =>
      t.call<{ id: string }>('POST', path, { headers, body });
    const chargeHeaders = { 'x-agent-key': agent.key, 'x-user-key': user.key, 'idempotency-key': `fault-charge-${process.pid}` };
    const chargeBody = { amount: 10, currency: 'USD', capture: false, description: 'faulted hold' };

    // The hold's transaction conflicts past the SDK's retries: nothing is written; the retry makes it once.
    const conflict = inject({ command: 'TransactWriteItemsCommand', match: hasEntry, times: 1, error: transactionConflict });
    const first = await post('/api/v1/agents/charges', chargeHeaders, chargeBody);
    conflict.remove();
    const held = first.status === 201 ? first : await post('/api/v1/agents/charges', chargeHeaders, chargeBody);
    expect(held.status).toBe(201);

    // The capture's answer is lost after it committed: the retry with its key replays, no second row.
    const captureHeaders = { 'x-agent-key': agent.key, 'idempotency-key': `fault-capture-${process.pid}` };
    const lost = inject({ command: 'TransactWriteItemsCommand', match: hasEntry, times: 1, error: timedOut, where: 'after-response' });
    const answer = await post(`/api/v1/agents/charge/${held.body.id}/capture`, captureHeaders, { amount: 4 });
    lost.remove();
    expect(answer.status).not.toBe(200);
    const again = await post(`/api/v1/agents/charge/${held.body.id}/capture`, captureHeaders, { amount: 4 });
    expect(again.status).toBe(200);

    const rows = await allRows(user.key);
    expect(rows.map((r) => [r.type, r.amount])).toEqual([
      ['hold_release', 6],
      ['hold', -10],
      ['credit', 100],
    ]);
    expect(expectReconciled(rows, (await me(user.key)).balances)).toEqual({ USD: 0 });
  });
});

/** The DynamoDB requests the stack's functions send while `work` runs (they share this process's client). */
async function countRequests<T>(work: () => Promise<T>): Promise<{ result: T; requests: string[] }> {
  const requests: string[] = [];
  const name = `count-statement-${Date.now()}`;
  db().middlewareStack.add(
    (next, context) => async (args) => {
      const input = args.input as { Key?: { PK?: string }; ExpressionAttributeValues?: Record<string, unknown> };
      const pk = String(input.Key?.PK ?? input.ExpressionAttributeValues?.[':pk'] ?? '');
      // The credentials' lookup is the route's, not the statement's (cached warm; a BatchGetItem cold).
      if (pk.startsWith('STMT#') || pk.startsWith('USER#')) requests.push(`${context.commandName} ${pk}`);
      return next(args);
    },
    { step: 'initialize', name },
  );
  try {
    return { result: await work(), requests };
  } finally {
    db().middlewareStack.remove(name);
  }
}
