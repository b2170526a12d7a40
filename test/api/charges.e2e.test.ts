import { dynamoRequestCounts, resetDynamoRequestCounts } from '../../functions/store/client';
import { auditAfterAll } from '../support/audit';
import { injectFault } from '../support/faults';
import { useTestStack } from '../support/stack';

const t = useTestStack();

type Charge = {
  id: string;
  amount: number;
  currency: string;
  status: string;
  idempotencyKey: string;
  description: string;
  createdAt: string;
};
type Balances = { balances: { USD: number; USDC: number } };

const chargeHeaders = (agentKey: string, userKey: string, key: string) => ({
  'x-agent-key': agentKey,
  'x-user-key': userKey,
  'idempotency-key': key,
});

async function userBalance(id: string) {
  return (await t.call<Balances>('GET', `/api/v1/admin/users/${id}`, { headers: t.admin })).body.balances;
}
async function agentBalance(key: string) {
  return (await t.call<Balances>('GET', '/api/v1/agents/balance', { headers: { 'x-agent-key': key } })).body.balances;
}

describe('POST /api/v1/agents/charges', () => {
  it('charges exactly: 201 Charge, user debited, agent credited', async () => {
    const agent = await t.enabledAgent();
    const user = await t.fundedUser({ USD: '10.00', USDC: '5.5' });
    const res = await t.call<Charge>('POST', '/api/v1/agents/charges', {
      headers: chargeHeaders(agent.key, user.key, 'c-1'),
      raw: '{"amount":1.50,"currency":"USD","description":"forecast"}',
    });
    expect(res.status).toBe(201);
    expect(res.body).toEqual({
      id: expect.stringMatching(new RegExp(`^c[0-9a-z]{26}${agent.id}$`)),
      idempotencyKey: 'c-1',
      failureReason: null,
      pendingReason: null,
      expiresAt: null,
      authorizedAmount: null,
      refundedAmount: 0,
      amount: 1.5,
      currency: 'USD',
      description: 'forecast',
      status: 'SUCCESS',
      createdAt: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
      // Settled: its receipt, on the stage's public address (DESIGN §27).
      receiptUrl: `${t.stack.url}/api/v1/receipts/${res.body.id}`,
    });
    const usdc = await t.call<Charge>('POST', '/api/v1/agents/charges', {
      headers: chargeHeaders(agent.key, user.key, 'c-2'),
      raw: '{"amount":0.000001,"currency":"USDC"}',
    });
    expect(usdc.status).toBe(201);
    expect(usdc.text).toContain('"amount":0.000001');
    expect(await userBalance(user.id)).toEqual({ USD: 8.5, USDC: 5.499999 });
    expect(await agentBalance(agent.key)).toEqual({ USD: 1.5, USDC: 0.000001 });
  });

  it('a warm charge costs exactly one TransactWriteItems and no reads', async () => {
    const agent = await t.enabledAgent();
    const user = await t.fundedUser({ USD: 10 });
    await t.call('POST', '/api/v1/agents/charges', {
      headers: chargeHeaders(agent.key, user.key, 'warm-1'),
      body: { amount: 1, currency: 'USD' },
    });
    resetDynamoRequestCounts();
    const res = await t.call('POST', '/api/v1/agents/charges', {
      headers: chargeHeaders(agent.key, user.key, 'warm-2'),
      body: { amount: 1, currency: 'USD' },
    });
    expect(res.status).toBe(201);
    // The local webhook dispatcher and delivery worker (Lambdas of their own on AWS) run uncounted.
    expect(dynamoRequestCounts()).toEqual({ TransactWriteItemsCommand: 1 });
  });

  it('50 concurrent 1.00 charges against 20.00: exactly 20 succeed, 30 get 402, nothing lost', async () => {
    const agent = await t.enabledAgent();
    const user = await t.fundedUser({ USD: '20.00' });
    const replies = await Promise.all(
      Array.from({ length: 50 }, (_, i) =>
        t.call('POST', '/api/v1/agents/charges', {
          headers: chargeHeaders(agent.key, user.key, `race-${i}`),
          body: { amount: 1, currency: 'USD' },
        }),
      ),
    );
    const statuses = replies.map((r) => r.status);
    expect(statuses.filter((s) => s === 201)).toHaveLength(20);
    expect(statuses.filter((s) => s === 402)).toHaveLength(30);
    for (const r of replies.filter((x) => x.status === 402)) expect(r.body).toEqual({ error: 'insufficient balance' });
    expect(await userBalance(user.id)).toEqual({ USD: 0, USDC: 0 });
    expect(await agentBalance(agent.key)).toEqual({ USD: 20, USDC: 0 });
    const list = await t.call<{ data: Charge[]; pagination: { total: number } }>('GET', '/api/v1/agents/charges?limit=100', {
      headers: { 'x-agent-key': agent.key },
    });
    expect(list.body.pagination.total).toBe(50);
    expect(list.body.data.filter((c) => c.status === 'SUCCESS')).toHaveLength(20);
    expect(list.body.data.filter((c) => c.status === 'FAILED')).toHaveLength(30);
  });

  it('20 concurrent identical requests with one Idempotency-Key: one charge, one debit', async () => {
    const agent = await t.enabledAgent();
    const user = await t.fundedUser({ USD: 100 });
    const replies = await Promise.all(
      Array.from({ length: 20 }, () =>
        t.call<Charge>('POST', '/api/v1/agents/charges', {
          headers: chargeHeaders(agent.key, user.key, 'same-key'),
          body: { amount: 2.5, currency: 'USD' },
        }),
      ),
    );
    expect(replies.every((r) => r.status === 201)).toBe(true);
    expect(new Set(replies.map((r) => r.body.id)).size).toBe(1);
    expect(replies.filter((r) => r.headers.get('idempotent-replayed') === 'true')).toHaveLength(19);
    expect(await userBalance(user.id)).toEqual({ USD: 97.5, USDC: 0 });
    expect(await agentBalance(agent.key)).toEqual({ USD: 2.5, USDC: 0 });
  });

  it('replays the stored answer, including a 402, and refuses a different request with the same key', async () => {
    const agent = await t.enabledAgent();
    const user = await t.fundedUser({ USD: 1 });
    const first = await t.call('POST', '/api/v1/agents/charges', {
      headers: chargeHeaders(agent.key, user.key, 'k'),
      body: { amount: 1, currency: 'USD' },
    });
    const again = await t.call('POST', '/api/v1/agents/charges', {
      headers: chargeHeaders(agent.key, user.key, 'k'),
      raw: '{"amount":1.00,"currency":"USD"}',
    });
    expect(again.status).toBe(201);
    expect(again.text).toBe(first.text);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    const poor = await t.call('POST', '/api/v1/agents/charges', {
      headers: chargeHeaders(agent.key, user.key, 'p'),
      body: { amount: 5, currency: 'USD' },
    });
    expect(poor.status).toBe(402);
    await t.fundedUser(); // unrelated activity in between
    const poorAgain = await t.call('POST', '/api/v1/agents/charges', {
      headers: chargeHeaders(agent.key, user.key, 'p'),
      body: { amount: 5, currency: 'USD' },
    });
    expect(poorAgain.status).toBe(402);
    expect(poorAgain.headers.get('idempotent-replayed')).toBe('true');
    for (const body of [
      { amount: 2, currency: 'USD' },
      { amount: 1, currency: 'USDC' },
      { amount: 1, currency: 'USD', description: 'other' },
    ]) {
      const mismatch = await t.call('POST', '/api/v1/agents/charges', { headers: chargeHeaders(agent.key, user.key, 'k'), body });
      expect(mismatch.status).toBe(422);
      expect(mismatch.body).toEqual({ error: 'idempotency key reused with different request' });
    }
    const otherUser = await t.fundedUser({ USD: 10 });
    const otherUserSameKey = await t.call('POST', '/api/v1/agents/charges', {
      headers: chargeHeaders(agent.key, otherUser.key, 'k'),
      body: { amount: 1, currency: 'USD' },
    });
    expect(otherUserSameKey.status).toBe(422);
    expect(await userBalance(otherUser.id)).toEqual({ USD: 10, USDC: 0 });
  });

  it('scopes idempotency keys per agent', async () => {
    const a = await t.enabledAgent();
    const b = await t.enabledAgent();
    const user = await t.fundedUser({ USD: 10 });
    const ra = await t.call<Charge>('POST', '/api/v1/agents/charges', {
      headers: chargeHeaders(a.key, user.key, 'shared'),
      body: { amount: 1, currency: 'USD' },
    });
    const rb = await t.call<Charge>('POST', '/api/v1/agents/charges', {
      headers: chargeHeaders(b.key, user.key, 'shared'),
      body: { amount: 1, currency: 'USD' },
    });
    expect([ra.status, rb.status]).toEqual([201, 201]);
    expect(ra.body.id).not.toBe(rb.body.id);
    expect(rb.headers.get('idempotent-replayed')).toBeNull();
    expect(await userBalance(user.id)).toEqual({ USD: 8, USDC: 0 });
  });

  it('survives injected TransactionConflicts: retried, one debit', async () => {
    const agent = await t.enabledAgent();
    const user = await t.fundedUser({ USD: 10 });
    const fault = injectFault('TransactWriteItemsCommand', 'conflict', 2);
    try {
      const res = await t.call('POST', '/api/v1/agents/charges', {
        headers: chargeHeaders(agent.key, user.key, 'conflicted'),
        body: { amount: 3, currency: 'USD' },
      });
      expect(res.status).toBe(201);
    } finally {
      fault.remove();
    }
    expect(fault.hits()).toBe(2);
    expect(await userBalance(user.id)).toEqual({ USD: 7, USDC: 0 });
  });

  it('answers 409 with Retry-After when conflicts never clear, and moves nothing', async () => {
    const agent = await t.enabledAgent();
    const user = await t.fundedUser({ USD: 10 });
    const fault = injectFault('TransactWriteItemsCommand', 'conflict', 1000);
    let res: Awaited<ReturnType<typeof t.call>>;
    try {
      res = await t.call('POST', '/api/v1/agents/charges', {
        headers: chargeHeaders(agent.key, user.key, 'stuck'),
        body: { amount: 3, currency: 'USD' },
      });
    } finally {
      fault.remove();
    }
    expect(res.status).toBe(409);
    expect(res.body).toEqual({ error: 'request with this Idempotency-Key is in progress' });
    expect(res.headers.get('retry-after')).toBe('1');
    expect(await userBalance(user.id)).toEqual({ USD: 10, USDC: 0 });
    const retry = await t.call('POST', '/api/v1/agents/charges', {
      headers: chargeHeaders(agent.key, user.key, 'stuck'),
      body: { amount: 3, currency: 'USD' },
    });
    expect(retry.status).toBe(201);
  });

  it('answers 503 with Retry-After under sustained throttling, and moves nothing', async () => {
    const agent = await t.enabledAgent();
    const user = await t.fundedUser({ USD: 10 });
    const fault = injectFault('TransactWriteItemsCommand', 'throttle', 1000);
    let res: Awaited<ReturnType<typeof t.call>>;
    try {
      res = await t.call('POST', '/api/v1/agents/charges', {
        headers: chargeHeaders(agent.key, user.key, 'throttled'),
        body: { amount: 3, currency: 'USD' },
      });
    } finally {
      fault.remove();
    }
    expect(res.status).toBe(503);
    expect(res.body).toEqual({ error: 'service busy, retry later' });
    expect(res.headers.get('retry-after')).toBe('1');
    expect(await userBalance(user.id)).toEqual({ USD: 10, USDC: 0 });
  });
});

describe('charge errors (every spec string), none changing state', () => {
  let agent: { key: string; id: string };
  let user: { key: string; id: string };
  beforeAll(async () => {
    agent = await t.enabledAgent();
    user = await t.fundedUser({ USD: 5 });
  });
  afterEach(async () => {
    expect(await userBalance(user.id)).toEqual({ USD: 5, USDC: 0 });
    expect(await agentBalance(agent.key)).toEqual({ USD: 0, USDC: 0 });
  });

  const post = (headers: Record<string, string>, raw?: string) =>
    t.call('POST', '/api/v1/agents/charges', { headers, ...(raw === undefined ? {} : { raw }) });

  it.each([
    ['no agent key', () => ({ 'x-user-key': user.key, 'idempotency-key': 'e' }), 401, 'missing x-agent-key header'],
    [
      'the agent key under another name',
      () => ({ 'x-api-key': agent.key, 'x-user-key': user.key, 'idempotency-key': 'e' }),
      401,
      'missing x-agent-key header',
    ],
    [
      'unknown agent key',
      () => ({ 'x-agent-key': 'ag_live_unknown', 'x-user-key': user.key, 'idempotency-key': 'e' }),
      401,
      'invalid or disabled agent key',
    ],
    [
      'a user key as agent key',
      () => ({ 'x-agent-key': user.key, 'x-user-key': user.key, 'idempotency-key': 'e' }),
      401,
      'invalid or disabled agent key',
    ],
    ['no user key', () => ({ 'x-agent-key': agent.key, 'idempotency-key': 'e' }), 401, 'missing x-user-key header'],
    ['an empty user key', () => ({ 'x-agent-key': agent.key, 'x-user-key': '', 'idempotency-key': 'e' }), 401, 'missing x-user-key header'],
    [
      'no user key, an unknown agent key (the agent is checked first)',
      () => ({ 'x-agent-key': 'ag_live_unknown', 'idempotency-key': 'e' }),
      401,
      'invalid or disabled agent key',
    ],
    [
      'unknown user key',
      () => ({ 'x-agent-key': agent.key, 'x-user-key': 'uk_live_nope', 'idempotency-key': 'e' }),
      401,
      'invalid user key',
    ],
    ['no Idempotency-Key', () => ({ 'x-agent-key': agent.key, 'x-user-key': user.key }), 400, 'missing Idempotency-key'],
    [
      'empty Idempotency-Key',
      () => ({ ...chargeHeaders(agent.key, user.key, '') }),
      400,
      'Idempotency-Key must be 1-255 printable ASCII characters',
    ],
    [
      'a 256-char Idempotency-Key',
      () => ({ ...chargeHeaders(agent.key, user.key, 'k'.repeat(256)) }),
      400,
      'Idempotency-Key must be 1-255 printable ASCII characters',
    ],
  ])('%s → %i %s', async (_, headers, status, error) => {
    const res = await post(headers(), '{"amount":1,"currency":"USD"}');
    expect(res.status).toBe(status);
    expect(res.body).toEqual({ error });
  });

  it.each([
    ['not json', 'amount=1', 'invalid json body'],
    ['empty', '', 'invalid json body'],
    ['an array', '[]', 'invalid json body'],
    ['a string amount', '{"amount":"1","currency":"USD"}', 'amount must be a number'],
    ['zero', '{"amount":0,"currency":"USD"}', 'amount must be greater than 0'],
    ['negative', '{"amount":-1,"currency":"USD"}', 'amount must be greater than 0'],
    ['too precise USD', '{"amount":0.001,"currency":"USD"}', 'amount has more than 2 decimal places for USD'],
    ['too precise USDC', '{"amount":0.0000001,"currency":"USDC"}', 'amount has more than 6 decimal places for USDC'],
    ['above the maximum', '{"amount":1000000.01,"currency":"USD"}', 'amount must not exceed 1000000'],
    ['huge exponent', '{"amount":1e400,"currency":"USD"}', 'amount must not exceed 1000000'],
    ['unknown currency', '{"amount":1,"currency":"EUR"}', 'currency must be one of USD, USDC'],
    ['lower-case currency', '{"amount":1,"currency":"usd"}', 'currency must be one of USD, USDC'],
    ['missing currency', '{"amount":1}', 'currency is required'],
    [
      'long description',
      JSON.stringify({ amount: 1, currency: 'USD', description: 'd'.repeat(256) }),
      'description must be at most 255 characters',
    ],
    ['unknown field', '{"amount":1,"currency":"USD","tip":5}', 'unknown field: tip'],
    ['a misspelt required field', '{"amont":1.50,"currency":"USD"}', 'unknown field: amont; amount is required'],
    [
      'a control character in the description',
      '{"amount":1,"currency":"USD","description":"a\\u001b[31mred"}',
      'description must not contain control characters',
    ],
    [
      'a bidi override in the description',
      '{"amount":1,"currency":"USD","description":"pay \\u202e01.0$"}',
      'description must not contain bidirectional control characters',
    ],
    [
      'a lone surrogate in the description',
      '{"amount":1,"currency":"USD","description":"x\\ud800"}',
      'description must be well-formed unicode text',
    ],
  ])('%s → 400', async (_, raw, error) => {
    const res = await post(chargeHeaders(agent.key, user.key, `bad-${Math.random()}`), raw);
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ error });
  });

  it('more than 5.00 of 5.00 → 402 insufficient balance (and a FAILED charge is kept)', async () => {
    const res = await post(chargeHeaders(agent.key, user.key, 'too-much'), '{"amount":5.01,"currency":"USD"}');
    expect(res.status).toBe(402);
    expect(res.body).toEqual({ error: 'insufficient balance' });
    const list = await t.call<{ data: Charge[] }>('GET', '/api/v1/agents/charges', { headers: { 'x-agent-key': agent.key } });
    expect(list.body.data.find((c) => c.idempotencyKey === 'too-much')?.status).toBe('FAILED');
  });

  it('a body declared as a form → 415 content-type must be application/json', async () => {
    const res = await t.call('POST', '/api/v1/agents/charges', {
      headers: { ...chargeHeaders(agent.key, user.key, 'form'), 'content-type': 'application/x-www-form-urlencoded' },
      raw: '{"amount":1,"currency":"USD"}',
    });
    expect(res.status).toBe(415);
    expect(res.body).toEqual({ error: 'content-type must be application/json' });
  });

  it('a body over 16 KB → 413', async () => {
    const res = await post(
      chargeHeaders(agent.key, user.key, 'big'),
      JSON.stringify({ amount: 1, currency: 'USD', description: 'x'.repeat(20_000) }),
    );
    expect(res.status).toBe(413);
    expect(res.body).toEqual({ error: 'request body too large' });
  });

  it('a USD balance does not pay a USDC charge', async () => {
    const res = await post(chargeHeaders(agent.key, user.key, 'wrong-currency'), '{"amount":1,"currency":"USDC"}');
    expect(res.status).toBe(402);
  });

  it('never echoes a key in an error', async () => {
    const res = await post({ 'x-agent-key': `${agent.key}x`, 'x-user-key': user.key, 'idempotency-key': 'e' }, '{}');
    expect(res.text).not.toContain(agent.key);
    expect(res.text).not.toContain(user.key);
  });
});

describe('listing and reading charges', () => {
  it('pages newest first with total, totalPages, a cursor, and an empty page past the end', async () => {
    const agent = await t.enabledAgent();
    const user = await t.fundedUser({ USD: 100 });
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) {
      const res = await t.call<Charge>('POST', '/api/v1/agents/charges', {
        headers: chargeHeaders(agent.key, user.key, `l-${i}`),
        body: { amount: 1, currency: 'USD' },
      });
      ids.unshift(res.body.id);
    }
    const h = { 'x-agent-key': agent.key };
    type Page = {
      data: Charge[];
      pagination: { total: number; page: number; limit: number; totalPages: number };
      nextCursor: string | null;
    };
    const p1 = await t.call<Page>('GET', '/api/v1/agents/charges?limit=2', { headers: h });
    expect(p1.body.data.map((c) => c.id)).toEqual(ids.slice(0, 2));
    expect(p1.body.pagination).toEqual({ total: 5, page: 1, limit: 2, totalPages: 3 });
    const p3 = await t.call<Page>('GET', '/api/v1/agents/charges?limit=2&page=3', { headers: h });
    expect(p3.body.data.map((c) => c.id)).toEqual(ids.slice(4));
    expect(p3.body.nextCursor).toBeNull();
    const past = await t.call<Page>('GET', '/api/v1/agents/charges?limit=2&page=9', { headers: h });
    expect(past.status).toBe(200);
    expect(past.body.data).toEqual([]);
    expect(past.body.pagination).toEqual({ total: 5, page: 9, limit: 2, totalPages: 3 });
    // Walk the cursor to the end: every charge once, in order.
    const seen: string[] = [];
    let cursor: string | null = null;
    let pageNo = 1;
    do {
      const path: string = `/api/v1/agents/charges?limit=2${cursor ? `&cursor=${cursor}` : ''}`;
      const res: Awaited<ReturnType<typeof t.call<Page>>> = await t.call<Page>('GET', path, { headers: h });
      expect(res.body.pagination.page).toBe(pageNo++);
      seen.push(...res.body.data.map((c) => c.id));
      cursor = res.body.nextCursor;
    } while (cursor);
    expect(seen).toEqual(ids);
    const defaults = await t.call<Page>('GET', '/api/v1/agents/charges', { headers: h });
    expect(defaults.body.pagination).toMatchObject({ page: 1, limit: 20 });
  });

  it('a cursor keeps the limit it was made with: none given continues with it, a different one is 400', async () => {
    const agent = await t.enabledAgent();
    const user = await t.fundedUser({ USD: 10 });
    for (let i = 0; i < 3; i++) {
      await t.call('POST', '/api/v1/agents/charges', {
        headers: chargeHeaders(agent.key, user.key, `cl-${i}`),
        body: { amount: 1, currency: 'USD' },
      });
    }
    const h = { 'x-agent-key': agent.key };
    type Page = { data: Charge[]; pagination: { page: number; limit: number }; nextCursor: string | null };
    const first = await t.call<Page>('GET', '/api/v1/agents/charges?limit=2', { headers: h });
    const next = await t.call<Page>('GET', `/api/v1/agents/charges?cursor=${first.body.nextCursor}`, { headers: h });
    expect(next.body.pagination).toMatchObject({ page: 2, limit: 2 });
    expect(next.body.data).toHaveLength(1);
    const resized = await t.call('GET', `/api/v1/agents/charges?limit=50&cursor=${first.body.nextCursor}`, { headers: h });
    expect([resized.status, resized.body]).toEqual([400, { error: 'cursor is invalid' }]);
  });

  it('refuses a page number past 10,000 items with 400 pointing at nextCursor; exactly 10,000 is served', async () => {
    const h = { 'x-agent-key': (await t.enabledAgent()).key };
    expect((await t.call('GET', '/api/v1/agents/charges?page=100&limit=100', { headers: h })).status).toBe(200);
    for (const query of ['page=101&limit=100', 'page=501', 'page=10001&limit=1']) {
      const res = await t.call('GET', `/api/v1/agents/charges?${query}`, { headers: h });
      expect([query, res.status, res.body]).toEqual([
        query,
        400,
        { error: 'page × limit must be at most 10000: follow nextCursor to read further' },
      ]);
    }
  });

  it.each([
    ['page=0', 'page must be a positive integer'],
    ['page=abc', 'page must be a positive integer'],
    ['limit=101', 'limit must be at most 100'],
    ['limit=-5', 'limit must be a positive integer'],
    ['cursor=garbage', 'cursor is invalid'],
    ['foo=bar', 'unknown field: foo'],
  ])('GET ?%s → 400 %s', async (query, error) => {
    const agent = await t.enabledAgent();
    const res = await t.call('GET', `/api/v1/agents/charges?${query}`, { headers: { 'x-agent-key': agent.key } });
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ error });
  });

  it('gets a charge for its agent or the admin, and is 404 for anyone else', async () => {
    const owner = await t.enabledAgent();
    const other = await t.enabledAgent();
    const user = await t.fundedUser({ USD: 5 });
    const made = await t.call<Charge>('POST', '/api/v1/agents/charges', {
      headers: chargeHeaders(owner.key, user.key, 'g'),
      body: { amount: 1, currency: 'USD' },
    });
    const mine = await t.call<Charge>('GET', `/api/v1/agents/charge/${made.body.id}`, { headers: { 'x-agent-key': owner.key } });
    expect(mine.status).toBe(200);
    expect(mine.body).toEqual(made.body);
    const theirs = await t.call('GET', `/api/v1/agents/charge/${made.body.id}`, { headers: { 'x-agent-key': other.key } });
    expect(theirs.status).toBe(404);
    expect(theirs.body).toEqual({ error: 'charge not found' });
    const missing = await t.call('GET', '/api/v1/agents/charge/c01aaaaaaaaaaaaaaaaaaaaaaaa', { headers: { 'x-agent-key': owner.key } });
    expect(missing.body).toEqual({ error: 'charge not found' });
    const garbage = await t.call('GET', '/api/v1/agents/charge/%27%20OR%201=1', { headers: { 'x-agent-key': owner.key } });
    expect(garbage.status).toBe(404);
    const admin = await t.call<Charge>('GET', `/api/v1/agents/charge/${made.body.id}`, { headers: t.admin });
    expect(admin.body).toEqual(made.body);
    const badAdmin = await t.call('GET', `/api/v1/agents/charge/${made.body.id}`, { headers: { 'x-admin-key': 'wrong-admin-key-123' } });
    expect(badAdmin.status).toBe(401);
    const nobody = await t.call('GET', `/api/v1/agents/charge/${made.body.id}`);
    expect(nobody.status).toBe(401);
    expect(nobody.body).toEqual({ error: 'missing x-agent-key header' });
  });
});

// Every end-to-end suite ends by proving the ledger invariant over its table.
auditAfterAll();
