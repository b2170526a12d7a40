/**
 * Left after issue 29, finding 6: the payer rotates a leaked account key, and the rotation commits
 * in one container. Another container has the old key in its auth cache (up to
 * `AUTH_CACHE_TTL_MS`, 30 s) and, until that entry runs out, lets the old key into the `/users/me`
 * routes whose own writes are not conditioned on the key (grants and webhook creation are).
 *
 * The attacker holds the old key and reaches the warm container: it raises the payer's limits,
 * approves its own agent's PENDING charge, releases a hold, opens a top-up, deletes the payer's
 * webhook, revokes a grant, and rotates the key to one of its own.
 *
 * The property: a rotated key is refused at once (401 `invalid user key`) by every route that moves
 * money or changes settings, whatever the container's cache says, and nothing changes.
 */
import { generateKey, hashKey, USER_KEY_PREFIX } from '../../functions/core/keys';
import { rotateUserKey } from '../../functions/store/identity/user.repository';
import { auditAfterAll } from '../support/audit';
import { startTestStack, type TestStack } from '../support/stack';
import { createTestTable } from '../support/table';
import { type Receiver, startReceiver } from '../webhooks/receiver';

let t: TestStack;
let rx: Receiver;
beforeAll(async () => {
  await createTestTable();
  t = await startTestStack();
  rx = await startReceiver('/payer');
});
afterAll(async () => {
  await rx?.stop();
  await t?.stack.stop();
});
auditAfterAll();

type Charge = { id: string; status: string };
let n = 0;
const idem = () => `rotated-cache-${Date.now()}-${++n}`;

describe('a rotated account key is refused at once by every route that moves money or changes settings', () => {
  it('refuses the old key in a container whose cache still holds it, and changes nothing', async () => {
    const payer = await t.fundedUser({ USD: 20 });
    const agent = await t.enabledAgent();
    const old = { 'x-user-key': payer.key };
    const policy = await t.call('PUT', '/api/v1/users/me/policy', { headers: old, body: { approvalAbove: { USD: 3 } } });
    expect(policy.status).toBe(200);
    const charge = (body: Record<string, unknown>) =>
      t.call<Charge>('POST', '/api/v1/agents/charges', {
        headers: { 'x-agent-key': agent.key, 'x-user-key': payer.key, 'idempotency-key': idem() },
        body: { currency: 'USD', description: 'work', ...body },
      });
    const pending = await charge({ amount: 5 });
    expect(pending.status).toBe(202);
    const declinable = await charge({ amount: 4 });
    expect(declinable.status).toBe(202);
    const hold = await charge({ amount: 2, capture: false });
    expect(hold.status).toBe(201);
    const grant = await t.call<{ id: string }>('POST', '/api/v1/users/me/grants', {
      headers: old,
      body: { agentId: agent.id, currency: 'USD', limits: { total: 5 } },
    });
    expect(grant.status).toBe(201);
    const hook = await t.call<{ id: string }>('POST', '/api/v1/users/me/webhooks', { headers: old, body: { url: rx.url } });
    expect(hook.status).toBe(201);
    // This container now has the old key in its auth cache.
    expect((await t.call('GET', '/api/v1/users/me', { headers: old })).status).toBe(200);

    // Another container commits the rotation: the user item's keyHash and the key items change; this
    // container's cache is not told (its own rotation would forget the key here too).
    const newKey = generateKey(USER_KEY_PREFIX);
    await rotateUserKey(payer.id, hashKey(payer.key), hashKey(newKey));

    const refused = { status: 401, body: { error: 'invalid user key' } };
    const attempts: [string, string, Record<string, unknown> | undefined][] = [
      ['PUT', '/api/v1/users/me/policy', { approvalAbove: { USD: 1000 } }],
      ['POST', `/api/v1/users/me/charges/${pending.body.id}/approve`, undefined],
      ['POST', `/api/v1/users/me/charges/${declinable.body.id}/decline`, undefined],
      ['POST', `/api/v1/users/me/charges/${hold.body.id}/release`, undefined],
      ['POST', '/api/v1/users/me/topups', { currency: 'USDC' }],
      ['DELETE', `/api/v1/users/me/grants/${grant.body.id}`, undefined],
      ['POST', `/api/v1/users/me/webhooks/${hook.body.id}/test`, undefined],
      ['DELETE', `/api/v1/users/me/webhooks/${hook.body.id}`, undefined],
      ['POST', '/api/v1/users/me/grants', { agentId: agent.id, currency: 'USD' }],
      ['POST', '/api/v1/users/me/webhooks', { url: rx.url }],
      ['POST', '/api/v1/users/me/keys/rotate', undefined],
    ];
    const answers = [];
    for (const [method, path, body] of attempts) {
      const res = await t.call(method, path, { headers: { ...old, 'idempotency-key': idem() }, ...(body ? { body } : {}) });
      answers.push([method, path, res.status, res.body]);
    }
    expect(answers).toEqual(attempts.map(([method, path]) => [method, path, refused.status, refused.body]));

    // Nothing changed: the new key sees the limits, charges, grant, endpoint and no top-up as they were.
    const mine = { 'x-user-key': newKey };
    const after = await t.call<{ approvalAbove?: Record<string, number> }>('GET', '/api/v1/users/me/policy', { headers: mine });
    expect(after.body.approvalAbove).toEqual({ USD: 3 });
    const charges = await t.call<{ data: Charge[] }>('GET', '/api/v1/users/me/charges', { headers: mine });
    const statusOf = (id: string) => charges.body.data.find((c) => c.id === id)?.status;
    expect([statusOf(pending.body.id), statusOf(declinable.body.id), statusOf(hold.body.id)]).toEqual(['PENDING', 'PENDING', 'PENDING']);
    const grants = await t.call<{ data: { id: string; status: string }[] }>('GET', '/api/v1/users/me/grants', { headers: mine });
    expect(grants.body.data.map((g) => [g.id, g.status])).toEqual([[grant.body.id, 'active']]);
    const hooks = await t.call<{ webhooks: { id: string }[] }>('GET', '/api/v1/users/me/webhooks', { headers: mine });
    expect(hooks.body.webhooks.map((h) => h.id)).toEqual([hook.body.id]);
    const topups = await t.call<{ data: unknown[] }>('GET', '/api/v1/users/me/topups', { headers: mine });
    expect(topups.body.data).toEqual([]);
    const me = await t.call<{ balances: { USD: number } }>('GET', '/api/v1/users/me', { headers: mine });
    expect(me.body.balances.USD).toBe(9);
    // The payer's new key works where the old one was refused.
    expect((await t.call('POST', '/api/v1/users/me/keys/rotate', { headers: mine })).status).toBe(200);
  });
});
