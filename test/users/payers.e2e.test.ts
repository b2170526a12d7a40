/**
 * The payer in control (docs/design.md §11): spending policies enforced inside the charge's own
 * transaction, approvals (202 PENDING → SUCCESS, FAILED or EXPIRED) with money held meanwhile,
 * and the user's history as the authorization log.
 */
import { GetCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { config } from '../../functions/config';
import { db } from '../../functions/store/client';
import { keys } from '../../functions/store/table';
import { expireDueCharges } from '../../functions/use-cases/charges/expiry';
import { auditAfterAll } from '../support/audit';
import { useTestStack } from '../support/stack';

const t = useTestStack({}, { sweepIntervalMs: 0 });
auditAfterAll();

type Charge = {
  id: string;
  status: string;
  amount: number;
  failureReason: string | null;
  pendingReason: string | null;
  expiresAt: string | null;
  approvalUrl?: string;
};
type Me = { balances: { USD: number; USDC: number }; held: { USD: number; USDC: number } };

const charge = (agentKey: string, userKey: string, key: string, amount: number, currency = 'USD') =>
  t.call<Charge & { error?: string }>('POST', '/api/v1/agents/charges', {
    headers: { 'x-agent-key': agentKey, 'x-user-key': userKey, 'idempotency-key': key },
    body: { amount, currency, description: `charge ${key}` },
  });
const me = (userKey: string) => t.call<Me>('GET', '/api/v1/users/me', { headers: { 'x-user-key': userKey } });
const putPolicy = (userKey: string, policy: unknown) =>
  t.call<Record<string, unknown>>('PUT', '/api/v1/users/me/policy', { headers: { 'x-user-key': userKey }, body: policy });
const act = (userKey: string, chargeId: string, action: 'approve' | 'decline') =>
  t.call<Charge & { error?: string }>('POST', `/api/v1/users/me/charges/${chargeId}/${action}`, { headers: { 'x-user-key': userKey } });
const agentView = (agentKey: string, id: string) =>
  t.call<Charge>('GET', `/api/v1/agents/charge/${id}`, { headers: { 'x-agent-key': agentKey } });

describe('the user API', () => {
  it('shows balances, held money and the policy; 401 without a valid user key', async () => {
    const user = await t.fundedUser({ USD: 30 });
    const res = await me(user.key);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      id: user.id,
      balances: { USD: 30, USDC: 0 },
      held: { USD: 0, USDC: 0 },
      owed: { USD: 0, USDC: 0 },
      policy: {},
    });
    for (const key of ['uk_live_nope', (await t.enabledAgent()).key]) {
      const bad = await t.call('GET', '/api/v1/users/me', { headers: { 'x-user-key': key } });
      expect([bad.status, bad.body]).toEqual([401, { error: 'invalid user key' }]);
    }
    const none = await t.call('GET', '/api/v1/users/me');
    expect([none.status, none.body]).toEqual([401, { error: 'missing x-user-key header' }]);
  });

  it('stores a policy exactly and refuses bad ones with 400 naming the field, keeping the old one', async () => {
    const user = await t.fundedUser({ USD: 1 });
    const agent = await t.enabledAgent();
    const policy = {
      perCharge: { USD: 50, USDC: 50 },
      daily: { USD: 200 },
      monthly: { USD: 1000.5 },
      approvalAbove: { USD: 10 },
      approvalWindowSeconds: 900,
      agents: { [agent.id]: { daily: { USD: 5 }, approvalAbove: { USD: 1 } } },
    };
    const put = await putPolicy(user.key, policy);
    expect([put.status, put.body]).toEqual([200, policy]);
    expect((await t.call('GET', '/api/v1/users/me/policy', { headers: { 'x-user-key': user.key } })).body).toEqual(policy);
    for (const [bad, error] of [
      [{ daily: { USD: 1.001 } }, 'daily.USD has more than 2 decimal places for USD'],
      [{ daily: { EUR: 5 } }, 'unknown field: daily.EUR'],
      [{ dialy: { USD: 5 } }, 'unknown field: dialy'],
      [{ perCharge: { USD: -1 } }, 'perCharge.USD must be greater than 0'],
      [{ approvalWindowSeconds: 30 }, 'approvalWindowSeconds must be at least 60'],
      [{ agents: { a01m00000000000000000000000: { blocked: true } } }, 'agents.a01m00000000000000000000000 is not a registered agent'],
    ] as const) {
      const res = await putPolicy(user.key, bad);
      expect({ bad, status: res.status, body: res.body }).toEqual({ bad, status: 400, body: { error } });
    }
    expect((await me(user.key)).body).toMatchObject({ policy });
  });
});

describe('charges under a policy', () => {
  it('blocked agent → 403, over a limit → 402 spending limit exceeded; each kept as FAILED with its reason', async () => {
    const user = await t.fundedUser({ USD: 100 });
    const blocked = await t.enabledAgent();
    const limited = await t.enabledAgent();
    await putPolicy(user.key, { perCharge: { USD: 10 }, agents: { [blocked.id]: { blocked: true } } });
    const refusedByBlock = await charge(blocked.key, user.key, 'b1', 1);
    expect([refusedByBlock.status, refusedByBlock.body]).toEqual([403, { error: 'agent blocked by user' }]);
    const overLimit = await charge(limited.key, user.key, 'l1', 10.01);
    expect([overLimit.status, overLimit.body]).toEqual([402, { error: 'spending limit exceeded' }]);
    expect((await charge(limited.key, user.key, 'l2', 10)).status).toBe(201);
    const history = await t.call<{ data: (Charge & { agent: { id: string; name: string } })[] }>('GET', '/api/v1/users/me/charges', {
      headers: { 'x-user-key': user.key },
    });
    expect(history.body.data.map((c) => [c.status, c.failureReason, c.agent.id])).toEqual([
      ['SUCCESS', null, limited.id],
      ['FAILED', 'spending limit exceeded', limited.id],
      ['FAILED', 'agent blocked by user', blocked.id],
    ]);
    expect(history.body.data[0]?.agent.name).toEqual(expect.any(String));
    // A replay answers the stored refusal.
    const again = await charge(blocked.key, user.key, 'b1', 1);
    expect([again.status, again.headers.get('idempotent-replayed')]).toEqual([403, 'true']);
    expect((await me(user.key)).body.balances.USD).toBe(90);
  });

  it('50 concurrent charges against a daily limit of 20 × their amount: exactly 20 succeed, whatever the balance', async () => {
    const user = await t.fundedUser({ USD: 1000 });
    const agent = await t.enabledAgent();
    await putPolicy(user.key, { daily: { USD: 20 } });
    const results = await Promise.all(Array.from({ length: 50 }, (_, i) => charge(agent.key, user.key, `race-${i}`, 1)));
    const statuses = results.map((r) => r.status).sort();
    expect(statuses.filter((s) => s === 201)).toHaveLength(20);
    expect(statuses.filter((s) => s === 402)).toHaveLength(30);
    for (const r of results.filter((r) => r.status === 402)) expect(r.body).toEqual({ error: 'spending limit exceeded' });
    expect((await me(user.key)).body.balances.USD).toBe(980);
  });

  it("an agent's limit set while its hold was open: ending the hold (release, decline, expiry, a partial capture) never reopens the limit", async () => {
    for (const ending of ['release', 'decline', 'expiry', 'capture'] as const) {
      const user = await t.fundedUser({ USD: 200 });
      const agent = await t.enabledAgent();
      const asAgent = (path: string, body: unknown) =>
        t.call<Charge & { error?: string }>('POST', path, {
          headers: {
            'x-agent-key': agent.key,
            'x-user-key': user.key,
            'idempotency-key': `${ending}-${path}-${Date.now()}-${Math.random()}`,
          },
          body,
        });
      // A 50.00 hold made before the agent has a limit of its own: the agent's counter never counted it.
      const approval = ending === 'decline' ? { approvalAbove: { USD: 20 } } : {};
      await putPolicy(user.key, approval);
      const hold = await asAgent('/api/v1/agents/charges', {
        amount: 50,
        currency: 'USD',
        description: 'hold',
        ...(ending === 'decline' ? {} : { capture: false, holdSeconds: 60 }),
      });
      expect([ending, hold.status]).toEqual([ending, ending === 'decline' ? 202 : 201]);
      await putPolicy(user.key, { ...approval, agents: { [agent.id]: { daily: { USD: 10 } } } });
      const first = await asAgent('/api/v1/agents/charges', { amount: 5, currency: 'USD', description: 'first' });
      expect([ending, first.status]).toEqual([ending, 201]);
      if (ending === 'release') expect((await asAgent(`/api/v1/agents/charge/${hold.body.id}/release`, {})).status).toBe(200);
      if (ending === 'decline') expect((await act(user.key, hold.body.id, 'decline')).status).toBe(200);
      if (ending === 'expiry') expect((await expireDueCharges(new Date(Date.now() + 61_000))).expired).toBeGreaterThanOrEqual(1);
      // 45.00 captured, the uncaptured 5.00 goes back to the user.
      if (ending === 'capture') expect((await asAgent(`/api/v1/agents/charge/${hold.body.id}/capture`, { amount: 45 })).status).toBe(200);
      // The agent's day holds 5.00 of its 10.00: 5.00 more fits, then nothing.
      const second = await asAgent('/api/v1/agents/charges', { amount: 5, currency: 'USD', description: 'second' });
      expect([ending, second.status]).toEqual([ending, 201]);
      const third = await asAgent('/api/v1/agents/charges', { amount: 1, currency: 'USD', description: 'third' });
      expect([ending, third.status, third.body]).toEqual([ending, 402, { error: 'spending limit exceeded' }]);
    }
  });

  describe('what giving a hold back takes off the spend counters', () => {
    /** The user item's day counters: the user's USD and this agent's. */
    const dayCounters = async (userId: string, agentId: string) => {
      const item = (await db().send(new GetCommand({ TableName: config().TABLE_NAME, Key: keys.user(userId), ConsistentRead: true }))).Item;
      const day = item?.spendDay as Record<string, number>;
      return { user: day.USD, agent: day[`USD#${agentId}`] };
    };
    const setUp = async () => {
      const user = await t.fundedUser({ USD: 100 });
      const agent = await t.enabledAgent();
      await putPolicy(user.key, { agents: { [agent.id]: { daily: { USD: 50 } } } });
      const call = (path: string, body: unknown) =>
        t.call<Charge>('POST', path, {
          headers: { 'x-agent-key': agent.key, 'x-user-key': user.key, 'idempotency-key': `${path}-${Date.now()}-${Math.random()}` },
          body,
        });
      const hold = await call('/api/v1/agents/charges', { amount: 10, currency: 'USD', description: 'hold', capture: false });
      expect(hold.status).toBe(201);
      expect((await call('/api/v1/agents/charges', { amount: 5, currency: 'USD', description: 'since' })).status).toBe(201);
      expect(await dayCounters(user.id, agent.id)).toEqual({ user: 1500, agent: 1500 });
      return { user, agent, hold: hold.body, release: () => call(`/api/v1/agents/charge/${hold.body.id}/release`, {}) };
    };

    it("a hold from before charges recorded their counters: its release lowers the user's counter, never its agent's", async () => {
      const { user, agent, hold, release } = await setUp();
      // As a charge and marker written before the record existed.
      for (const key of [keys.charge(agent.id, hold.id), keys.pendingCharge(hold.id)]) {
        await db().send(new UpdateCommand({ TableName: config().TABLE_NAME, Key: key, UpdateExpression: 'REMOVE counted' }));
      }
      expect((await release()).status).toBe(200);
      expect(await dayCounters(user.id, agent.id)).toEqual({ user: 500, agent: 1500 });
      expect((await me(user.key)).body).toMatchObject({ balances: { USD: 95 }, held: { USD: 0 } });
    });

    it('a counter holding less than what goes back is left as it is, never taken below zero', async () => {
      const { user, agent, release } = await setUp();
      // An operator lowered the agent's counter by hand.
      await db().send(
        new UpdateCommand({
          TableName: config().TABLE_NAME,
          Key: keys.user(user.id),
          UpdateExpression: 'SET spendDay.#ag = :three',
          ExpressionAttributeNames: { '#ag': `USD#${agent.id}` },
          ExpressionAttributeValues: { ':three': 300 },
        }),
      );
      expect((await release()).status).toBe(200);
      expect(await dayCounters(user.id, agent.id)).toEqual({ user: 500, agent: 300 });
      expect((await me(user.key)).body).toMatchObject({ balances: { USD: 95 }, held: { USD: 0 } });
    });
  });

  it('a policy change applies to the very next charge, even in a container that judged by the old one', async () => {
    const user = await t.fundedUser({ USD: 100 });
    const agent = await t.enabledAgent();
    expect((await charge(agent.key, user.key, 'p0', 5)).status).toBe(201); // this container now knows "no policy"
    await putPolicy(user.key, { perCharge: { USD: 4 } });
    expect((await charge(agent.key, user.key, 'p1', 5)).body).toEqual({ error: 'spending limit exceeded' });
    await putPolicy(user.key, {});
    expect((await charge(agent.key, user.key, 'p2', 5)).status).toBe(201);
  });
});

describe('approvals', () => {
  it('above the threshold: 202 PENDING with an approval link, the money held; approve → SUCCESS, the agent paid', async () => {
    const user = await t.fundedUser({ USD: 50 });
    const agent = await t.enabledAgent();
    await putPolicy(user.key, { approvalAbove: { USD: 10 } });
    const res = await charge(agent.key, user.key, 'big', 15);
    expect(res.status).toBe(202);
    expect(res.body).toMatchObject({ status: 'PENDING', pendingReason: 'user_approval', failureReason: null, amount: 15 });
    expect(res.body.approvalUrl).toMatch(new RegExp(`^${t.stack.url}/approve/${res.body.id}\\.[A-Za-z0-9_-]{43}$`));
    expect(Date.parse(res.body.expiresAt ?? '') - Date.now()).toBeGreaterThan(890_000);
    expect((await me(user.key)).body).toMatchObject({ balances: { USD: 35 }, held: { USD: 15 } });
    // A replay answers the same 202, approval link included (the token is derived, never stored).
    const replay = await charge(agent.key, user.key, 'big', 15);
    expect([replay.status, replay.text]).toEqual([202, res.text]);

    const approved = await act(user.key, res.body.id, 'approve');
    expect([approved.status, approved.body.status, approved.body.pendingReason]).toEqual([200, 'SUCCESS', null]);
    expect((await agentView(agent.key, res.body.id)).body.status).toBe('SUCCESS');
    expect((await me(user.key)).body).toMatchObject({ balances: { USD: 35 }, held: { USD: 0 } });
    const earned = await t.call<{ balances: { USD: number } }>('GET', '/api/v1/agents/balance', { headers: { 'x-agent-key': agent.key } });
    expect(earned.body.balances.USD).toBe(15);
    expect((await act(user.key, res.body.id, 'approve')).body).toEqual({ error: 'charge is not pending' });
    expect((await act(user.key, res.body.id, 'decline')).body).toEqual({ error: 'charge is not pending' });
  });

  it('decline → FAILED "declined by user", the hold back; another user gets 404', async () => {
    const user = await t.fundedUser({ USD: 50 });
    const other = await t.fundedUser({ USD: 1 });
    const agent = await t.enabledAgent();
    await putPolicy(user.key, { approvalAbove: { USD: 10 } });
    const res = await charge(agent.key, user.key, 'decline-me', 20);
    expect((await act(other.key, res.body.id, 'decline')).body).toEqual({ error: 'charge not found' });
    expect((await act(user.key, 'c_not_an_id', 'approve')).status).toBe(404);
    const declined = await act(user.key, res.body.id, 'decline');
    expect(declined.body).toMatchObject({ status: 'FAILED', failureReason: 'declined by user' });
    expect((await me(user.key)).body).toMatchObject({ balances: { USD: 50 }, held: { USD: 0 } });
  });

  it('nothing before expiresAt → EXPIRED by the sweeper, the hold back; approving then is 409 charge expired', async () => {
    const user = await t.fundedUser({ USD: 50 });
    const agent = await t.enabledAgent();
    await putPolicy(user.key, { approvalAbove: { USD: 10 }, approvalWindowSeconds: 60 });
    const res = await charge(agent.key, user.key, 'expire-me', 20);
    const report = await expireDueCharges(new Date(Date.now() + 61_000));
    expect(report.expired).toBeGreaterThanOrEqual(1);
    expect((await agentView(agent.key, res.body.id)).body).toMatchObject({ status: 'EXPIRED' });
    expect((await me(user.key)).body).toMatchObject({ balances: { USD: 50 }, held: { USD: 0 } });
    expect((await act(user.key, res.body.id, 'approve')).body).toEqual({ error: 'charge expired' });
  });

  it('approve, decline and the sweeper racing: exactly one wins, the money moves once', async () => {
    const user = await t.fundedUser({ USD: 100 });
    const agent = await t.enabledAgent();
    await putPolicy(user.key, { approvalAbove: { USD: 1 }, approvalWindowSeconds: 60 });
    for (let i = 0; i < 5; i++) {
      const res = await charge(agent.key, user.key, `race-approval-${i}`, 10);
      // The sweeper runs as if the window had passed: its expiry races the user's answers.
      const [swept, ...outcomes] = await Promise.all([
        expireDueCharges(new Date(Date.now() + 61_000)),
        act(user.key, res.body.id, 'approve'),
        act(user.key, res.body.id, 'decline'),
        act(user.key, res.body.id, 'approve'),
      ]);
      const winners = outcomes.filter((o) => o.status === 200).length + swept.expired;
      expect(winners).toBe(1);
      for (const o of outcomes.filter((o) => o.status !== 200)) expect(o.status).toBe(409);
      expect(swept.failed).toBe(0);
    }
    const after = await me(user.key);
    expect(after.body.held.USD).toBe(0);
    const earned = await t.call<{ balances: { USD: number } }>('GET', '/api/v1/agents/balance', { headers: { 'x-agent-key': agent.key } });
    expect(after.body.balances.USD + earned.body.balances.USD).toBe(100);
  });
});

describe('key rotation', () => {
  it('a rotated user key stops charging at once; the new one works', async () => {
    const user = await t.fundedUser({ USD: 10 });
    const agent = await t.enabledAgent();
    expect((await charge(agent.key, user.key, 'r0', 1)).status).toBe(201);
    const rotated = await t.call<{ userKey: string }>('POST', '/api/v1/users/me/keys/rotate', { headers: { 'x-user-key': user.key } });
    expect(rotated.status).toBe(200);
    expect(rotated.body.userKey).toMatch(/^uk_live_/);
    const old = await charge(agent.key, user.key, 'r1', 1);
    expect([old.status, old.body]).toEqual([401, { error: 'invalid user key' }]);
    expect((await charge(agent.key, rotated.body.userKey, 'r2', 1)).status).toBe(201);
    expect((await me(rotated.body.userKey)).body.balances.USD).toBe(8);
  });
});
