/**
 * The charge lifecycle for agents (docs/design.md §12, docs/lifecycle.md) over HTTP against the
 * local stack: holds and their capture or release, refunds, key rotation, and the kill switch on
 * all of them. Every answer is checked against docs/openapi.json; the ledger audit runs at the end.
 */
import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { config } from '../../functions/config';
import { getPendingCharge, listDuePending } from '../../functions/store/charges/charge-pending.repository';
import { db } from '../../functions/store/client';
import { setAgentEnabled } from '../../functions/store/identity/agent.repository';
import { keys } from '../../functions/store/table';
import { auditAfterAll } from '../support/audit';
import { useTestStack } from '../support/stack';

const t = useTestStack({}, { sweepIntervalMs: 0 });
auditAfterAll();

type Charge = {
  id: string;
  status: string;
  amount: number;
  currency: string;
  failureReason: string | null;
  pendingReason: string | null;
  expiresAt: string | null;
  authorizedAmount: number | null;
  refundedAmount: number;
  error?: string;
};
type Me = { balances: { USD: number; USDC: number }; held: { USD: number; USDC: number } };

let n = 0;
const key = () => `k-${Date.now()}-${++n}`;
const create = (agentKey: string, userKey: string, body: Record<string, unknown>, idem = key()) =>
  t.call<Charge>('POST', '/api/v1/agents/charges', {
    headers: { 'x-agent-key': agentKey, 'x-user-key': userKey, 'idempotency-key': idem },
    body: { currency: 'USD', description: 'metered work', ...body },
  });
const hold = (agentKey: string, userKey: string, amount: number, extra: Record<string, unknown> = {}) =>
  create(agentKey, userKey, { amount, capture: false, ...extra });
const act = (agentKey: string, id: string, action: 'capture' | 'release' | 'refund', body?: unknown, idem: string | null = key()) =>
  t.call<Charge>('POST', `/api/v1/agents/charge/${id}/${action}`, {
    headers: { 'x-agent-key': agentKey, ...(idem === null ? {} : { 'idempotency-key': idem }) },
    ...(body === undefined ? {} : { body }),
  });
const me = async (userKey: string) => (await t.call<Me>('GET', '/api/v1/users/me', { headers: { 'x-user-key': userKey } })).body;
const earned = async (agentKey: string) =>
  (await t.call<{ balances: { USD: number } }>('GET', '/api/v1/agents/balance', { headers: { 'x-agent-key': agentKey } })).body.balances
    .USD;
const getCharge = async (agentKey: string, id: string) =>
  (await t.call<Charge>('GET', `/api/v1/agents/charge/${id}`, { headers: { 'x-agent-key': agentKey } })).body;
const putPolicy = (userKey: string, policy: unknown) =>
  t.call('PUT', '/api/v1/users/me/policy', { headers: { 'x-user-key': userKey }, body: policy });

describe('holds: authorize, then capture or release', () => {
  it('metered billing: hold 1.00, capture 0.37 — the rest goes back to the user at once', async () => {
    const user = await t.fundedUser({ USD: 10 });
    const agent = await t.enabledAgent();
    const before = Date.now();
    const held = await hold(agent.key, user.key, 1);
    expect(held.status).toBe(201);
    expect(held.body).toMatchObject({ status: 'PENDING', pendingReason: 'capture', amount: 1, authorizedAmount: 1, refundedAmount: 0 });
    const expires = Date.parse(held.body.expiresAt ?? '');
    expect(expires - before).toBeGreaterThanOrEqual(3600_000 - 5_000);
    expect(expires - before).toBeLessThanOrEqual(3600_000 + 5_000);
    expect(await me(user.key)).toMatchObject({ balances: { USD: 9 }, held: { USD: 1 } });

    const idem = key();
    const captured = await act(agent.key, held.body.id, 'capture', { amount: 0.37 }, idem);
    expect(captured.status).toBe(200);
    expect(captured.body).toMatchObject({ id: held.body.id, status: 'SUCCESS', amount: 0.37, authorizedAmount: 1, pendingReason: null });
    expect(await me(user.key)).toMatchObject({ balances: { USD: 9.63 }, held: { USD: 0 } });
    expect(await earned(agent.key)).toBe(0.37);
    expect(await getCharge(agent.key, held.body.id)).toEqual(captured.body);

    // Replay: the first answer; the same key for another amount: 422. Neither moves money.
    const again = await act(agent.key, held.body.id, 'capture', { amount: 0.37 }, idem);
    expect([again.status, again.headers.get('idempotent-replayed'), again.body]).toEqual([200, 'true', captured.body]);
    const sameAmountOtherLiteral = await act(agent.key, held.body.id, 'capture', { amount: 0.37 }, idem);
    expect(sameAmountOtherLiteral.status).toBe(200);
    const different = await act(agent.key, held.body.id, 'capture', { amount: 0.5 }, idem);
    expect([different.status, different.body]).toEqual([422, { error: 'idempotency key reused with different request' }]);
    expect(await me(user.key)).toMatchObject({ balances: { USD: 9.63 }, held: { USD: 0 } });
  });

  it('captures everything by default, with holdSeconds setting the window', async () => {
    const user = await t.fundedUser({ USDC: 5 });
    const agent = await t.enabledAgent();
    const held = await create(agent.key, user.key, { amount: 2.5, currency: 'USDC', capture: false, holdSeconds: 60 });
    expect(Date.parse(held.body.expiresAt ?? '') - Date.now()).toBeLessThanOrEqual(60_000);
    const captured = await act(agent.key, held.body.id, 'capture');
    expect(captured.body).toMatchObject({ status: 'SUCCESS', amount: 2.5, authorizedAmount: 2.5 });
    expect(await me(user.key)).toMatchObject({ balances: { USDC: 2.5 }, held: { USDC: 0 } });
  });

  it('release: FAILED "released by agent", the whole hold back to the user', async () => {
    const user = await t.fundedUser({ USD: 10 });
    const agent = await t.enabledAgent();
    const held = await hold(agent.key, user.key, 4);
    const released = await act(agent.key, held.body.id, 'release');
    expect(released.status).toBe(200);
    expect(released.body).toMatchObject({ status: 'FAILED', failureReason: 'released by agent', pendingReason: null, amount: 4 });
    expect(await me(user.key)).toMatchObject({ balances: { USD: 10 }, held: { USD: 0 } });
    expect(await earned(agent.key)).toBe(0);
    const history = await t.call<{ data: Charge[] }>('GET', '/api/v1/users/me/charges', { headers: { 'x-user-key': user.key } });
    expect(history.body.data[0]).toMatchObject({ id: held.body.id, status: 'FAILED', failureReason: 'released by agent' });
  });

  it('a settled charge leaves its pending marker as a tombstone: out of the sweeper index, TTL set, read as absent, never settled twice', async () => {
    const user = await t.fundedUser({ USD: 10 });
    const agent = await t.enabledAgent();
    const held = await hold(agent.key, user.key, 3);
    const marker = async () =>
      (await db().send(new GetCommand({ TableName: config().TABLE_NAME, Key: keys.pendingCharge(held.body.id), ConsistentRead: true })))
        .Item;
    expect(await marker()).toMatchObject(keys.pendingExpiryIndex(held.body.expiresAt ?? '', held.body.id));
    expect(await getPendingCharge(held.body.id)).toMatchObject({ chargeId: held.body.id, pendingReason: 'capture' });
    expect((await act(agent.key, held.body.id, 'release')).status).toBe(200);
    // Kept, not deleted (no settling function holds DeleteItem): settled, out of GSI1, removed by TTL.
    const tombstone = await marker();
    expect(tombstone).toMatchObject({ settledAt: expect.any(String), ttl: expect.any(Number) });
    expect(tombstone?.GSI1PK).toBeUndefined();
    expect(tombstone?.GSI1SK).toBeUndefined();
    expect(await getPendingCharge(held.body.id)).toBeUndefined();
    expect((await listDuePending(new Date(Date.now() + 86_400_000), 1000)).map((p) => p.chargeId)).not.toContain(held.body.id);
    // The tombstone settles nothing again: a capture after the release is refused, no money moves.
    expect((await act(agent.key, held.body.id, 'capture')).status).toBe(409);
    expect(await me(user.key)).toMatchObject({ balances: { USD: 10 }, held: { USD: 0 } });
    expect(await earned(agent.key)).toBe(0);
  });

  it("above the user's threshold: 202 user_approval, capture refused until approved; approval restarts the hold window", async () => {
    const user = await t.fundedUser({ USD: 50 });
    const agent = await t.enabledAgent();
    await putPolicy(user.key, { approvalAbove: { USD: 10 }, approvalWindowSeconds: 60 });
    const held = await hold(agent.key, user.key, 20, { holdSeconds: 7200 });
    expect(held.status).toBe(202);
    expect(held.body).toMatchObject({ status: 'PENDING', pendingReason: 'user_approval', authorizedAmount: 20 });
    const early = await act(agent.key, held.body.id, 'capture');
    expect([early.status, early.body]).toEqual([409, { error: 'charge awaits user approval' }]);
    const approved = await t.call<Charge>('POST', `/api/v1/users/me/charges/${held.body.id}/approve`, {
      headers: { 'x-user-key': user.key },
    });
    expect(approved.body).toMatchObject({ status: 'PENDING', pendingReason: 'capture' });
    expect(Date.parse(approved.body.expiresAt ?? '') - Date.now()).toBeGreaterThan(7000_000);
    expect(await me(user.key)).toMatchObject({ balances: { USD: 30 }, held: { USD: 20 } });
    // The user's decision is made: approving or declining again is refused.
    const decline = await t.call('POST', `/api/v1/users/me/charges/${held.body.id}/decline`, { headers: { 'x-user-key': user.key } });
    expect([decline.status, decline.body]).toEqual([409, { error: 'charge is not pending' }]);
    const captured = await act(agent.key, held.body.id, 'capture', { amount: 12.5 });
    expect(captured.body).toMatchObject({ status: 'SUCCESS', amount: 12.5, authorizedAmount: 20 });
    expect(await me(user.key)).toMatchObject({ balances: { USD: 37.5 }, held: { USD: 0 } });
  });

  it('a hold approved on the approval page waits for its capture; the page shows it approved', async () => {
    const user = await t.fundedUser({ USD: 50 });
    const agent = await t.enabledAgent();
    await putPolicy(user.key, { approvalAbove: { USD: 10 } });
    const held = await hold(agent.key, user.key, 15);
    const url = new URL((held.body as Charge & { approvalUrl: string }).approvalUrl);
    const decided = await t.call('POST', url.pathname, {
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      raw: 'action=approve',
    });
    expect(decided.status).toBe(200);
    expect(decided.text).toContain('Approved');
    expect(await getCharge(agent.key, held.body.id)).toMatchObject({ status: 'PENDING', pendingReason: 'capture' });
    expect((await act(agent.key, held.body.id, 'capture', { amount: 9 })).body).toMatchObject({ status: 'SUCCESS', amount: 9 });
    expect(await me(user.key)).toMatchObject({ balances: { USD: 41 }, held: { USD: 0 } });
  });

  it('the uncaptured rest stops counting against the daily limit', async () => {
    const user = await t.fundedUser({ USD: 100 });
    const agent = await t.enabledAgent();
    await putPolicy(user.key, { daily: { USD: 10 } });
    const held = await hold(agent.key, user.key, 10);
    expect((await create(agent.key, user.key, { amount: 1 })).body).toEqual({ error: 'spending limit exceeded' });
    await act(agent.key, held.body.id, 'capture', { amount: 3 });
    expect((await create(agent.key, user.key, { amount: 7 })).status).toBe(201);
    expect((await create(agent.key, user.key, { amount: 0.01 })).body).toEqual({ error: 'spending limit exceeded' });
  });
});

describe('refunds', () => {
  it('partial then full, cumulative, from the agent to the user, visible in the user history; then nothing is left', async () => {
    const user = await t.fundedUser({ USD: 10 });
    const agent = await t.enabledAgent();
    const charged = await create(agent.key, user.key, { amount: 6 });
    const idem = key();
    const first = await act(agent.key, charged.body.id, 'refund', { amount: 2.5 }, idem);
    expect(first.status).toBe(200);
    expect(first.body).toMatchObject({ status: 'SUCCESS', amount: 6, refundedAmount: 2.5 });
    const replay = await act(agent.key, charged.body.id, 'refund', { amount: 2.5 }, idem);
    expect([replay.status, replay.headers.get('idempotent-replayed'), replay.body]).toEqual([200, 'true', first.body]);
    expect(await me(user.key)).toMatchObject({ balances: { USD: 6.5 } });
    expect(await earned(agent.key)).toBe(3.5);
    const over = await act(agent.key, charged.body.id, 'refund', { amount: 3.51 });
    expect([over.status, over.body]).toEqual([400, { error: 'amount exceeds refundable amount' }]);
    const rest = await act(agent.key, charged.body.id, 'refund');
    expect(rest.body).toMatchObject({ status: 'SUCCESS', refundedAmount: 6 });
    expect(await me(user.key)).toMatchObject({ balances: { USD: 10 } });
    expect(await earned(agent.key)).toBe(0);
    const none = await act(agent.key, charged.body.id, 'refund');
    expect([none.status, none.body]).toEqual([400, { error: 'amount exceeds refundable amount' }]);
    const history = await t.call<{ data: Charge[] }>('GET', '/api/v1/users/me/charges', { headers: { 'x-user-key': user.key } });
    expect(history.body.data[0]).toMatchObject({ id: charged.body.id, status: 'SUCCESS', amount: 6, refundedAmount: 6 });
  });

  it('a captured hold refunds up to what was captured', async () => {
    const user = await t.fundedUser({ USD: 10 });
    const agent = await t.enabledAgent();
    const held = await hold(agent.key, user.key, 1);
    await act(agent.key, held.body.id, 'capture', { amount: 0.37 });
    const over = await act(agent.key, held.body.id, 'refund', { amount: 0.38 });
    expect(over.body).toEqual({ error: 'amount exceeds refundable amount' });
    expect((await act(agent.key, held.body.id, 'refund')).body).toMatchObject({ refundedAmount: 0.37, authorizedAmount: 1 });
    expect(await me(user.key)).toMatchObject({ balances: { USD: 10 } });
  });

  it('402 insufficient balance once the earnings were withdrawn', async () => {
    const user = await t.fundedUser({ USD: 10 });
    const agent = await t.enabledAgent();
    const charged = await create(agent.key, user.key, { amount: 10 });
    const w = await t.call('POST', '/api/v1/agents/withdraw', {
      headers: { 'x-agent-key': agent.key, 'idempotency-key': key() },
      body: { amount: 9, currency: 'USD', walletAddress: 'payee@example.com' },
    });
    expect(w.status).toBe(200);
    const refund = await act(agent.key, charged.body.id, 'refund', { amount: 2 });
    expect([refund.status, refund.body]).toEqual([402, { error: 'insufficient balance' }]);
    expect((await act(agent.key, charged.body.id, 'refund', { amount: 1 })).body).toMatchObject({ refundedAmount: 1 });
    expect(await me(user.key)).toMatchObject({ balances: { USD: 1 } });
  });
});

describe('every §12 error, and bad input changes nothing', () => {
  it('answers each error string exactly', async () => {
    const user = await t.fundedUser({ USD: 20 });
    const agent = await t.enabledAgent();
    const other = await t.enabledAgent();
    const held = await hold(agent.key, user.key, 5);
    const charged = await create(agent.key, user.key, { amount: 1 });
    const refused = await create(agent.key, user.key, { amount: 1000 });
    expect(refused.status).toBe(402);
    const failedId = (
      await t.call<{ data: Charge[] }>('GET', '/api/v1/agents/charges', { headers: { 'x-agent-key': agent.key } })
    ).body.data.find((c) => c.status === 'FAILED')?.id as string;

    const cases: [Promise<{ status: number; body: unknown }>, number, string][] = [
      [act(agent.key, held.body.id, 'capture', { amount: 5.01 }), 400, 'amount exceeds authorized amount'],
      [act(agent.key, charged.body.id, 'capture'), 409, 'charge is not pending'],
      [act(agent.key, charged.body.id, 'release'), 409, 'charge is not pending'],
      [act(agent.key, held.body.id, 'refund'), 409, 'charge is not refundable'],
      [act(agent.key, failedId, 'refund'), 409, 'charge is not refundable'],
      [act(agent.key, charged.body.id, 'refund', { amount: 1.01 }), 400, 'amount exceeds refundable amount'],
      [act(other.key, held.body.id, 'capture'), 404, 'charge not found'],
      [act(other.key, held.body.id, 'release'), 404, 'charge not found'],
      [act(other.key, charged.body.id, 'refund'), 404, 'charge not found'],
      [act(agent.key, 'c01jhx3k6v1f8q2n7c9m4p5r6s7', 'capture'), 404, 'charge not found'],
      [act(agent.key, 'nope', 'refund'), 404, 'charge not found'],
      [act('ag_live_nope', held.body.id, 'capture'), 401, 'invalid or disabled agent key'],
      [act(agent.key, held.body.id, 'capture', {}, null), 400, 'missing Idempotency-key'],
      [act(agent.key, held.body.id, 'capture', { amount: 0 }), 400, 'amount must be greater than 0'],
      [act(agent.key, held.body.id, 'capture', { amount: -1 }), 400, 'amount must be greater than 0'],
      [act(agent.key, held.body.id, 'capture', { amount: 1.001 }), 400, 'amount has more than 2 decimal places for USD'],
      [act(agent.key, held.body.id, 'capture', { amount: '1' }), 400, 'amount must be a number'],
      [act(agent.key, held.body.id, 'capture', { amount: 1, extra: 1 }), 400, 'unknown field: extra'],
      [act(agent.key, held.body.id, 'release', { amount: 1 }), 400, 'unknown field: amount'],
      [act(agent.key, charged.body.id, 'refund', { amount: 0.001 }), 400, 'amount has more than 2 decimal places for USD'],
      [create(agent.key, user.key, { amount: 1, holdSeconds: 60 }), 400, 'holdSeconds applies only with capture: false'],
      [create(agent.key, user.key, { amount: 1, capture: false, holdSeconds: 59 }), 400, 'holdSeconds must be at least 60'],
      [create(agent.key, user.key, { amount: 1, capture: false, holdSeconds: 604801 }), 400, 'holdSeconds must be at most 604800'],
      [create(agent.key, user.key, { amount: 1, capture: 'no' }), 400, 'capture must be a boolean'],
    ];
    for (const [call, status, error] of cases) {
      const res = await call;
      expect({ error, got: [res.status, res.body] }).toEqual({ error, got: [status, { error }] });
    }
    const raw = await t.call('POST', `/api/v1/agents/charge/${held.body.id}/capture`, {
      headers: { 'x-agent-key': agent.key, 'idempotency-key': key() },
      raw: '{not json',
    });
    expect([raw.status, raw.body]).toEqual([400, { error: 'invalid json body' }]);
    // Nothing moved: the hold is still whole, the charge unrefunded.
    expect(await me(user.key)).toMatchObject({ balances: { USD: 14 }, held: { USD: 5 } });
    expect(await getCharge(agent.key, held.body.id)).toMatchObject({ status: 'PENDING', amount: 5 });
    expect(await getCharge(agent.key, charged.body.id)).toMatchObject({ refundedAmount: 0 });
    expect(await earned(agent.key)).toBe(1);
  });

  it('409 charge expired for a hold past expiresAt, before the sweeper ran', async () => {
    const user = await t.fundedUser({ USD: 5 });
    const agent = await t.enabledAgent();
    const held = await hold(agent.key, user.key, 1, { holdSeconds: 60 });
    // Only the clock moves (timers and I/O stay real): a minute and a second later.
    jest.useFakeTimers({
      now: Date.now() + 61_000,
      advanceTimers: true,
      doNotFake: [
        'setTimeout',
        'setInterval',
        'setImmediate',
        'clearTimeout',
        'clearInterval',
        'clearImmediate',
        'nextTick',
        'queueMicrotask',
        'hrtime',
        'performance',
      ],
    });
    try {
      for (const action of ['capture', 'release'] as const) {
        const res = await act(agent.key, held.body.id, action);
        expect([res.status, res.body]).toEqual([409, { error: 'charge expired' }]);
      }
    } finally {
      jest.useRealTimers();
    }
  });
});

describe('the kill switch and key rotation', () => {
  it('a disabled agent (console flip, its cache still warm) captures, releases and refunds nothing: 401 at once', async () => {
    const user = await t.fundedUser({ USD: 20 });
    const agent = await t.enabledAgent();
    const held = await hold(agent.key, user.key, 5);
    const charged = await create(agent.key, user.key, { amount: 3 });
    // The operator's console flow: the one agent item found by agentId, `enabled` set to false.
    await setAgentEnabled(agent.id, false);
    for (const [id, action] of [
      [held.body.id, 'capture'],
      [held.body.id, 'release'],
      [charged.body.id, 'refund'],
    ] as const) {
      const res = await act(agent.key, id, action);
      expect([action, res.status, res.body]).toEqual([action, 401, { error: 'invalid or disabled agent key' }]);
    }
    expect(await me(user.key)).toMatchObject({ balances: { USD: 12 }, held: { USD: 5 } });
    // Enabled again through the admin API (which also drops this container's cached "disabled").
    await t.call('PATCH', `/api/v1/admin/agents/${agent.id}`, { headers: t.admin, body: { enabled: true } });
    expect((await act(agent.key, charged.body.id, 'refund')).status).toBe(200);
    expect((await act(agent.key, held.body.id, 'release')).status).toBe(200);
  });

  it('rotation: the old key moves no money at once, the new one does; enabled carried over; the console flow still works', async () => {
    const user = await t.fundedUser({ USD: 20 });
    const agent = await t.enabledAgent();
    expect((await create(agent.key, user.key, { amount: 1 })).status).toBe(201); // the old key is cached as enabled
    const rotated = await t.call<{ apiKey: string; agentId: string; enabled: boolean }>('POST', '/api/v1/agents/keys/rotate', {
      headers: { 'x-agent-key': agent.key },
    });
    expect(rotated.status).toBe(200);
    expect(rotated.body).toMatchObject({ agentId: agent.id, enabled: true });
    expect(rotated.body.apiKey).toMatch(/^ag_live_/);
    const old = await create(agent.key, user.key, { amount: 1 });
    expect([old.status, old.body]).toEqual([401, { error: 'invalid or disabled agent key' }]);
    const again = await t.call('POST', '/api/v1/agents/keys/rotate', { headers: { 'x-agent-key': agent.key } });
    expect([again.status, again.body]).toEqual([401, { error: 'invalid agent key' }]);
    const fresh = await create(rotated.body.apiKey, user.key, { amount: 2 });
    expect(fresh.status).toBe(201);
    expect(await earned(rotated.body.apiKey)).toBe(3);
    // The operator still finds one item by agentId and flips it: the new key stops at once.
    const disabled = await t.call<{ enabled: boolean }>('PATCH', `/api/v1/admin/agents/${agent.id}`, {
      headers: t.admin,
      body: { enabled: false },
    });
    expect(disabled.body.enabled).toBe(false);
    expect((await create(rotated.body.apiKey, user.key, { amount: 1 })).status).toBe(401);
    // A disabled agent may rotate (a leaked key) and stays disabled.
    const whileDisabled = await t.call<{ apiKey: string; enabled: boolean }>('POST', '/api/v1/agents/keys/rotate', {
      headers: { 'x-agent-key': rotated.body.apiKey },
    });
    expect(whileDisabled.body.enabled).toBe(false);
    expect((await create(whileDisabled.body.apiKey, user.key, { amount: 1 })).status).toBe(401);
    expect(await me(user.key)).toMatchObject({ balances: { USD: 17 } });
  });
});
