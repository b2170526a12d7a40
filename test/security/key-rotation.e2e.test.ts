/**
 * Issue 29, finding 6: rotating the account key (the documented answer to a leaked key) left every
 * grant and user webhook the thief made working, including a webhook that receives approval links.
 * The attacker holds the payer's leaked account key: it gives its own agent a grant and registers
 * a user webhook of its own; the payer (or, for a payer locked out, the operator) rotates the key.
 *
 * The property: rotation ends what the old key made — every active grant is revoked (its key
 * charges nothing: 401 `invalid user key`) and every user webhook endpoint deleted (no later event
 * reaches it) — and the rotate answer lists what it ended, so the payer can make again what was
 * theirs; a container that still has the old key cached cannot make new ones after the rotation.
 */
import { hashKey } from '../../functions/core/keys';
import { createWebhook } from '../../functions/use-cases/events/webhooks';
import { issueGrant } from '../../functions/use-cases/identity/grants';
import { auditAfterAll } from '../support/audit';
import { useTestStack } from '../support/stack';
import { eventOf, type Receiver, startReceiver } from '../webhooks/receiver';

const t = useTestStack({}, { webhooks: { visibilityTimeoutSeconds: 2, pollIntervalMs: 50 } });
let thiefRx: Receiver;
let payerRx: Receiver;
beforeAll(async () => {
  thiefRx = await startReceiver('/thief');
  payerRx = await startReceiver('/payer');
});
afterAll(async () => {
  await thiefRx?.stop();
  await payerRx?.stop();
});
auditAfterAll();

type Grant = { id: string; key: string; status: string; agent: { id: string } };
type Rotated = { userKey: string; revokedGrants: Grant[]; deletedWebhooks: { id: string; url: string; events: string[] }[] };
let n = 0;
const idem = () => `rotation-${Date.now()}-${++n}`;

/** A payer with a grant of their own, and what a thief with the leaked key made: a grant to its agent, a webhook. */
async function leakedAccount() {
  const user = await t.fundedUser({ USD: 50 });
  const payersAgent = await t.enabledAgent();
  const thiefAgent = await t.enabledAgent();
  const grant = async (agentId: string) => {
    const res = await t.call<Grant>('POST', '/api/v1/users/me/grants', {
      headers: { 'x-user-key': user.key },
      body: { agentId, currency: 'USD', limits: { total: 20 } },
    });
    expect(res.status).toBe(201);
    return res.body;
  };
  const own = await grant(payersAgent.id);
  const stolen = await grant(thiefAgent.id);
  const hook = await t.call<{ id: string }>('POST', '/api/v1/users/me/webhooks', {
    headers: { 'x-user-key': user.key },
    body: { url: thiefRx.url, events: ['charge.approval_requested'] },
  });
  expect(hook.status).toBe(201);
  // Both keys work before the rotation.
  const charged = await t.call('POST', '/api/v1/agents/charges', {
    headers: { 'x-agent-key': thiefAgent.key, 'x-user-key': stolen.key, 'idempotency-key': idem() },
    body: { amount: 1, currency: 'USD', description: 'before' },
  });
  expect(charged.status).toBe(201);
  return { user, payersAgent, thiefAgent, own, stolen, hook: hook.body };
}

/** What the rotation must have ended, and that the payer's new key works. */
async function expectEnded(setup: Awaited<ReturnType<typeof leakedAccount>>, rotated: { status: number; body: Rotated }): Promise<void> {
  const { payersAgent, thiefAgent, own, stolen, hook } = setup;
  expect(rotated.status).toBe(200);
  expect(rotated.body.userKey).toMatch(/^uk_live_/);
  for (const [agent, grant] of [
    [thiefAgent, stolen],
    [payersAgent, own],
  ] as const) {
    const res = await t.call('POST', '/api/v1/agents/charges', {
      headers: { 'x-agent-key': agent.key, 'x-user-key': grant.key, 'idempotency-key': idem() },
      body: { amount: 1, currency: 'USD', description: 'after' },
    });
    expect([res.status, res.body]).toEqual([401, { error: 'invalid user key' }]);
  }
  const newKey = { 'x-user-key': rotated.body.userKey };
  const grants = await t.call<{ data: Grant[] }>('GET', '/api/v1/users/me/grants?status=active', { headers: newKey });
  expect(grants.body.data).toEqual([]);
  const hooks = await t.call<{ webhooks: unknown[] }>('GET', '/api/v1/users/me/webhooks', { headers: newKey });
  expect(hooks.body.webhooks).toEqual([]);

  // No approval link reaches the thief's endpoint after the rotation: the payer's new one gets it, the thief's nothing.
  const mine = await t.call('POST', '/api/v1/users/me/webhooks', { headers: newKey, body: { url: payerRx.url } });
  expect(mine.status).toBe(201);
  const regrant = await t.call<Grant>('POST', '/api/v1/users/me/grants', {
    headers: newKey,
    body: { agentId: payersAgent.id, currency: 'USD', approvalAbove: 1 },
  });
  expect(regrant.status).toBe(201);
  const asked = await t.call<{ id: string }>('POST', '/api/v1/agents/charges', {
    headers: { 'x-agent-key': payersAgent.key, 'x-user-key': regrant.body.key, 'idempotency-key': idem() },
    body: { amount: 2, currency: 'USD', description: 'needs approval' },
  });
  expect(asked.status).toBe(202);
  await payerRx.waitFor((r) => eventOf(r).type === 'charge.approval_requested' && eventOf(r).data.id === asked.body.id, 10_000);
  expect(thiefRx.received.filter((r) => eventOf(r).data.id === asked.body.id)).toEqual([]);

  // The answer lists what it ended (never a key), so the payer can make again what was theirs.
  expect(rotated.body.revokedGrants?.map((g) => [g.id, g.status]).sort()).toEqual(
    [
      [own.id, 'revoked'],
      [stolen.id, 'revoked'],
    ].sort(),
  );
  expect(JSON.stringify(rotated.body.revokedGrants)).not.toContain('ug_live_');
  expect(rotated.body.deletedWebhooks).toEqual([expect.objectContaining({ id: hook.id, url: thiefRx.url })]);
}

describe('finding 6: rotating the account key ends what the old key made', () => {
  it("the payer's rotation revokes every active grant and deletes every user webhook, and lists them", async () => {
    const setup = await leakedAccount();
    const rotated = await t.call<Rotated>('POST', '/api/v1/users/me/keys/rotate', { headers: { 'x-user-key': setup.user.key } });
    await expectEnded(setup, rotated);
  });

  it("the operator's rotation (a payer locked out) does the same", async () => {
    const setup = await leakedAccount();
    const rotated = await t.call<Rotated>('POST', `/api/v1/admin/users/${setup.user.id}/keys/rotate`, { headers: t.admin });
    await expectEnded(setup, rotated);
  });

  it('a container that still has the old key cached makes no grant and no webhook after the rotation', async () => {
    const setup = await leakedAccount();
    const rotated = await t.call<Rotated>('POST', '/api/v1/users/me/keys/rotate', { headers: { 'x-user-key': setup.user.key } });
    expect(rotated.status).toBe(200);
    // What the grant and webhook routes run once their (stale) auth cache has let the old key through.
    const oldKey = { userId: setup.user.id, accountKeyHash: hashKey(setup.user.key) };
    await expect(issueGrant(oldKey, setup.thiefAgent.id, { currency: 'USD', limits: {}, description: '' })).rejects.toMatchObject({
      code: 'invalidUserKey',
    });
    await expect(createWebhook({ kind: 'user', id: setup.user.id }, { url: thiefRx.url }, oldKey.accountKeyHash)).rejects.toMatchObject({
      code: 'invalidUserKey',
    });
    const newKey = { 'x-user-key': rotated.body.userKey };
    const grants = await t.call<{ data: Grant[] }>('GET', '/api/v1/users/me/grants?status=active', { headers: newKey });
    expect(grants.body.data).toEqual([]);
    const hooks = await t.call<{ webhooks: unknown[] }>('GET', '/api/v1/users/me/webhooks', { headers: newKey });
    expect(hooks.body.webhooks).toEqual([]);
  });
});
