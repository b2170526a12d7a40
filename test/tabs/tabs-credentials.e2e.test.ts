/**
 * Tabs and the payer's credentials ending (docs/tabs.md "Rotation and revocation"), over HTTP
 * against one local stack, the ledger audit after each case. A tab is money the payer authorised
 * once, with a grant key or the account key: when that authorisation ends — the account key is
 * rotated (a leak's remedy), or the grant is revoked — the tabs it opened close at what they used
 * (captured), the rest goes back, and every use after is refused 409 `tab is not open`. Raced with
 * uses, each use either landed before the close and is captured, or is refused; a close that fails
 * fails the rotation or the revocation, and retrying it finishes the job.
 */

import { inject, throttled } from '../faults/inject';
import { expectLedgerBalanced } from '../support/audit';
import { useTestStack } from '../support/stack';

const t = useTestStack({}, { sweepIntervalMs: 0 });
jest.setTimeout(180_000);
afterEach(async () => {
  await expectLedgerBalanced();
});

type Tab = { id: string; status: string; used: number; limit: number; chargeId: string; closedBy: string | null; error?: string };
type Use = { used: number; amount: number; usageId?: string; error?: string };
type Rotated = { userKey: string; releasedCharges: { id: string; status: string; failureReason: string | null }[] };
type Grant = { id: string; key: string };

let n = 0;
const key = () => `tc-${Date.now()}-${++n}`;
const open = async (agentKey: string, userKey: string, limit = 5) => {
  const res = await t.call<Tab>('POST', '/api/v1/agents/tabs', {
    headers: { 'x-agent-key': agentKey, 'x-user-key': userKey, 'idempotency-key': key() },
    body: { currency: 'USD', limit },
  });
  expect(res.status).toBe(201);
  return res.body;
};
const use = (agentKey: string, tabId: string, amount: number) =>
  t.call<Use>('POST', `/api/v1/agents/tabs/${tabId}/usage`, {
    headers: { 'x-agent-key': agentKey, 'idempotency-key': key() },
    body: { amount },
  });
const tabOf = async (agentKey: string, tabId: string) =>
  (await t.call<Tab>('GET', `/api/v1/agents/tabs/${tabId}`, { headers: { 'x-agent-key': agentKey } })).body;
const me = async (userKey: string) =>
  (await t.call<{ balances: { USD: number }; held: { USD: number } }>('GET', '/api/v1/users/me', { headers: { 'x-user-key': userKey } }))
    .body;
const earned = async (agentKey: string) =>
  (await t.call<{ balances: { USD: number } }>('GET', '/api/v1/agents/balance', { headers: { 'x-agent-key': agentKey } })).body.balances
    .USD;
const rotate = (userKey: string) => t.call<Rotated>('POST', '/api/v1/users/me/keys/rotate', { headers: { 'x-user-key': userKey } });
const grantFor = async (userKey: string, agentId: string) => {
  const res = await t.call<Grant>('POST', '/api/v1/users/me/grants', {
    headers: { 'x-user-key': userKey },
    body: { agentId, currency: 'USD', limits: { total: 50 } },
  });
  expect(res.status).toBe(201);
  return res.body;
};
const revoke = (userKey: string, grantId: string) =>
  t.call<{ id: string; status: string }>('DELETE', `/api/v1/users/me/grants/${grantId}`, { headers: { 'x-user-key': userKey } });
const cents = (amount: number) => Math.round(amount * 100);

type Items = { Update?: { Key?: { PK?: unknown }; UpdateExpression?: string } }[];
const updates = (input: Record<string, unknown>) => (input.TransactItems as Items | undefined) ?? [];
/** A close's capture of tab `tabId`: the transaction that sets its item CLOSED and credits the agent's shard. */
const capturesTab = (tabId: string) => (input: Record<string, unknown>) =>
  updates(input).some((i) => i.Update?.Key?.PK === `TAB#${tabId}` && String(i.Update?.UpdateExpression).includes('closedBy')) &&
  updates(input).some((i) => String(i.Update?.Key?.PK ?? '').startsWith('AGENTBAL#'));

describe('rotating the account key', () => {
  it('closes every open tab of the payer at what it used, the rest released; uses after are refused', async () => {
    const payer = await t.fundedUser({ USD: 30 });
    const thief = await t.enabledAgent();
    const other = await t.enabledAgent();
    // With the (leaked) account key: a tab metered twice, and one not used yet; and a grant's tab.
    const used = await open(thief.key, payer.key, 5);
    expect((await use(thief.key, used.id, 1.25)).status).toBe(200);
    expect((await use(thief.key, used.id, 0.5)).status).toBe(200);
    const unused = await open(thief.key, payer.key, 3);
    const grant = await grantFor(payer.key, other.id);
    const granted = await open(other.key, grant.key, 4);
    expect((await use(other.key, granted.id, 2)).status).toBe(200);
    expect(await me(payer.key)).toMatchObject({ balances: { USD: 18 }, held: { USD: 12 } });

    const rotated = await rotate(payer.key);
    expect(rotated.status).toBe(200);
    const newKey = rotated.body.userKey;
    // The unused account-key tab's hold is released as every open account-key charge is (as before).
    expect(rotated.body.releasedCharges.map((c) => [c.id, c.status, c.failureReason])).toEqual([
      [unused.chargeId, 'FAILED', 'account key rotated'],
    ]);

    expect(await tabOf(thief.key, used.id)).toMatchObject({ status: 'CLOSED', used: 1.75, closedBy: 'payer' });
    expect(await tabOf(thief.key, unused.id)).toMatchObject({ status: 'CLOSED', used: 0 });
    expect(await tabOf(other.key, granted.id)).toMatchObject({ status: 'CLOSED', used: 2, closedBy: 'payer' });
    for (const [agent, tab] of [
      [thief, used],
      [thief, unused],
      [other, granted],
    ] as const) {
      const late = await use(agent.key, tab.id, 0.25);
      expect([late.status, late.body.error]).toEqual([409, 'tab is not open']);
    }
    expect(await me(newKey)).toMatchObject({ balances: { USD: 26.25 }, held: { USD: 0 } });
    expect([await earned(thief.key), await earned(other.key)]).toEqual([1.75, 2]);
  });

  it('the operator’s rotation closes them too', async () => {
    const payer = await t.fundedUser({ USD: 10 });
    const agent = await t.enabledAgent();
    const tab = await open(agent.key, payer.key, 5);
    expect((await use(agent.key, tab.id, 1)).status).toBe(200);
    const operator = await t.call<Rotated>('POST', `/api/v1/admin/users/${payer.id}/keys/rotate`, { headers: t.admin });
    expect(operator.status).toBe(200);
    expect(await tabOf(agent.key, tab.id)).toMatchObject({ status: 'CLOSED', used: 1 });
    expect((await use(agent.key, tab.id, 1)).status).toBe(409);
    expect(await me(operator.body.userKey)).toMatchObject({ balances: { USD: 9 }, held: { USD: 0 } });
  });
});

describe('revoking a grant', () => {
  it('closes the tabs opened under it at what they used; another grant’s tab stays open; revoking again changes nothing', async () => {
    const payer = await t.fundedUser({ USD: 30 });
    const agent = await t.enabledAgent();
    const grant = await grantFor(payer.key, agent.id);
    const kept = await grantFor(payer.key, agent.id);
    const a = await open(agent.key, grant.key, 5);
    const b = await open(agent.key, grant.key, 2);
    const c = await open(agent.key, kept.key, 3);
    const mine = await open(agent.key, payer.key, 1);
    expect((await use(agent.key, a.id, 1.5)).status).toBe(200);
    expect((await use(agent.key, c.id, 1)).status).toBe(200);

    const revoked = await revoke(payer.key, grant.id);
    expect([revoked.status, revoked.body.status]).toEqual([200, 'revoked']);
    expect(await tabOf(agent.key, a.id)).toMatchObject({ status: 'CLOSED', used: 1.5, closedBy: 'payer' });
    expect(await tabOf(agent.key, b.id)).toMatchObject({ status: 'CLOSED', used: 0, closedBy: 'payer' });
    expect(await tabOf(agent.key, c.id)).toMatchObject({ status: 'OPEN', used: 1 });
    expect(await tabOf(agent.key, mine.id)).toMatchObject({ status: 'OPEN', used: 0 });
    const late = await use(agent.key, a.id, 0.5);
    expect([late.status, late.body.error]).toEqual([409, 'tab is not open']);
    expect((await use(agent.key, c.id, 0.5)).status).toBe(200);
    expect(await me(payer.key)).toMatchObject({ balances: { USD: 24.5 }, held: { USD: 4 } });
    expect(await earned(agent.key)).toBe(1.5);

    const again = await revoke(payer.key, grant.id);
    expect([again.status, again.body.status]).toEqual([200, 'revoked']);
    expect(await me(payer.key)).toMatchObject({ balances: { USD: 24.5 }, held: { USD: 4 } });
  });
});

describe('raced with uses', () => {
  it.each(['rotation', 'revocation'] as const)('%s: each use lands before the close and is captured, or is refused', async (how) => {
    const payer = await t.fundedUser({ USD: 20 });
    const agent = await t.enabledAgent();
    const grant = how === 'revocation' ? await grantFor(payer.key, agent.id) : undefined;
    const tab = await open(agent.key, grant?.key ?? payer.key, 10);
    expect((await use(agent.key, tab.id, 0.1)).status).toBe(200);
    const ending = how === 'rotation' ? rotate(payer.key) : revoke(payer.key, grant?.id ?? '');
    const answers = await Promise.all(Array.from({ length: 12 }, () => use(agent.key, tab.id, 0.1)));
    const ended = await ending;
    expect(ended.status).toBe(200);
    const payerKey = how === 'rotation' ? (ended.body as Rotated).userKey : payer.key;
    for (const a of answers)
      expect([a.status, a.status === 409 ? a.body.error : 'ok']).toEqual(a.status === 200 ? [200, 'ok'] : [409, 'tab is not open']);
    const accepted = 1 + answers.filter((a) => a.status === 200).length;
    const closed = await tabOf(agent.key, tab.id);
    expect(closed).toMatchObject({ status: 'CLOSED' });
    expect(cents(closed.used)).toBe(accepted * 10);
    expect(cents(await earned(agent.key))).toBe(accepted * 10);
    expect(await me(payerKey)).toMatchObject({ held: { USD: 0 } });
    expect(cents((await me(payerKey)).balances.USD)).toBe(2000 - accepted * 10);
    // After the close, nothing more is taken.
    expect((await use(agent.key, tab.id, 0.1)).status).toBe(409);
  });
});

describe('a close that fails', () => {
  it('fails the rotation before the key changes, after closing the tabs it could; the retry closes the rest', async () => {
    const payer = await t.fundedUser({ USD: 10 });
    const agent = await t.enabledAgent();
    const stuck = await open(agent.key, payer.key, 5);
    const fine = await open(agent.key, payer.key, 2);
    expect((await use(agent.key, stuck.id, 2)).status).toBe(200);
    expect((await use(agent.key, fine.id, 0.5)).status).toBe(200);
    const fault = inject({ command: 'TransactWriteItemsCommand', match: capturesTab(stuck.id), times: 1000, error: throttled });
    let failed: Awaited<ReturnType<typeof rotate>>;
    try {
      failed = await rotate(payer.key);
    } finally {
      fault.remove();
    }
    expect(fault.hits()).toBeGreaterThan(0);
    expect([failed.status, failed.body]).toEqual([503, { error: 'service busy, retry later' }]);
    // Not rotated (the old key still answers; the payer was told it failed); the other tab closed.
    expect(await tabOf(agent.key, stuck.id)).toMatchObject({ status: 'OPEN', used: 2 });
    expect(await tabOf(agent.key, fine.id)).toMatchObject({ status: 'CLOSED', used: 0.5 });
    expect(await me(payer.key)).toMatchObject({ balances: { USD: 4.5 }, held: { USD: 5 } });
    const retried = await rotate(payer.key);
    expect(retried.status).toBe(200);
    expect(await tabOf(agent.key, stuck.id)).toMatchObject({ status: 'CLOSED', used: 2 });
    expect((await use(agent.key, stuck.id, 1)).status).toBe(409);
    expect(await me(retried.body.userKey)).toMatchObject({ balances: { USD: 7.5 }, held: { USD: 0 } });
    expect(await earned(agent.key)).toBe(2.5);
  });

  it('fails the revocation; revoking again closes the tab', async () => {
    const payer = await t.fundedUser({ USD: 10 });
    const agent = await t.enabledAgent();
    const grant = await grantFor(payer.key, agent.id);
    const tab = await open(agent.key, grant.key, 5);
    expect((await use(agent.key, tab.id, 1.5)).status).toBe(200);
    const fault = inject({ command: 'TransactWriteItemsCommand', match: capturesTab(tab.id), times: 1000, error: throttled });
    let failed: Awaited<ReturnType<typeof revoke>>;
    try {
      failed = await revoke(payer.key, grant.id);
    } finally {
      fault.remove();
    }
    expect(fault.hits()).toBeGreaterThan(0);
    expect(failed.status).toBe(503);
    expect(await tabOf(agent.key, tab.id)).toMatchObject({ status: 'OPEN', used: 1.5 });
    const again = await revoke(payer.key, grant.id);
    expect(again.status).toBe(200);
    expect(await tabOf(agent.key, tab.id)).toMatchObject({ status: 'CLOSED', used: 1.5 });
    expect((await use(agent.key, tab.id, 1)).status).toBe(409);
    expect(await me(payer.key)).toMatchObject({ balances: { USD: 8.5 }, held: { USD: 0 } });
  });

  it('fails the block (the policy is stored); sending the policy again closes the tab', async () => {
    const payer = await t.fundedUser({ USD: 10 });
    const agent = await t.enabledAgent();
    const tab = await open(agent.key, payer.key, 5);
    expect((await use(agent.key, tab.id, 1.25)).status).toBe(200);
    const block = () =>
      t.call('PUT', '/api/v1/users/me/policy', {
        headers: { 'x-user-key': payer.key },
        body: { agents: { [agent.id]: { blocked: true } } },
      });
    const fault = inject({ command: 'TransactWriteItemsCommand', match: capturesTab(tab.id), times: 1000, error: throttled });
    let failed: Awaited<ReturnType<typeof block>>;
    try {
      failed = await block();
    } finally {
      fault.remove();
    }
    expect(fault.hits()).toBeGreaterThan(0);
    // Told it failed, never 200 with the blocked agent's tab still taking uses.
    expect([failed.status, failed.body]).toEqual([503, { error: 'service busy, retry later' }]);
    expect(await tabOf(agent.key, tab.id)).toMatchObject({ status: 'OPEN', used: 1.25 });
    expect((await block()).status).toBe(200);
    expect(await tabOf(agent.key, tab.id)).toMatchObject({ status: 'CLOSED', used: 1.25, closedBy: 'agent blocked' });
    expect((await use(agent.key, tab.id, 1)).status).toBe(409);
    expect(await me(payer.key)).toMatchObject({ balances: { USD: 8.75 }, held: { USD: 0 } });
  });
});
