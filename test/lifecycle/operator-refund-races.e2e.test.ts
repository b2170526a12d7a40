/**
 * The operator's refund of an agent's charge (docs/lifecycle.md, "The operator returns a disabled
 * agent's earnings") under races, over HTTP against the local stack, the ledger audit after each:
 * concurrent returns of one charge never pass its amount; the operator's refund racing the agent's
 * own refund, or the agent's own withdrawal of the same earned money, never takes the balance below
 * zero (one of them is refused); a return racing the cancel of a held payout that holds the money.
 */
import { getPayout } from '../../functions/store/payouts/payout.repository';
import { inject } from '../faults/inject';
import { expectLedgerBalanced } from '../support/audit';
import { eventually } from '../support/eventually';
import { useTestStack } from '../support/stack';

const t = useTestStack(
  { RECONCILE_PENDING_AFTER_SECONDS: '1', RECONCILE_PROCESSING_AFTER_SECONDS: '1', AUTH_CACHE_TTL_MS: '0' },
  { payouts: { visibilityTimeoutSeconds: 2, reconcileIntervalMs: 200 } },
);
afterEach(async () => {
  await expectLedgerBalanced();
});

type Charge = { id: string; status: string; refundedAmount: number; error?: string };
let n = 0;
const key = () => `op-race-${Date.now()}-${++n}`;

async function charged(amount: number): Promise<{ agent: { key: string; id: string }; user: { key: string; id: string }; id: string }> {
  const user = await t.fundedUser({ USD: 10 });
  const agent = await t.enabledAgent();
  const res = await t.call<Charge>('POST', '/api/v1/agents/charges', {
    headers: { 'x-agent-key': agent.key, 'x-user-key': user.key, 'idempotency-key': key() },
    body: { amount, currency: 'USD', description: 'race' },
  });
  expect(res.status).toBe(201);
  return { agent, user, id: res.body.id };
}

const operatorRefund = (agentId: string, chargeId: string, body: unknown = {}, idem = key()) =>
  t.call<Charge>('POST', `/api/v1/admin/agents/${agentId}/charges/${chargeId}/refund`, {
    headers: { ...t.admin, 'idempotency-key': idem },
    body,
  });
const agentRefund = (agentKey: string, chargeId: string, body: unknown = {}) =>
  t.call<Charge>('POST', `/api/v1/agents/charge/${chargeId}/refund`, {
    headers: { 'x-agent-key': agentKey, 'idempotency-key': key() },
    body,
  });
const withdraw = (agentKey: string, amount: number) =>
  t.call<{ payoutId: string }>('POST', '/api/v1/agents/withdraw', {
    headers: { 'x-agent-key': agentKey, 'idempotency-key': key() },
    body: { amount, currency: 'USD', walletAddress: 'success@example.com' },
  });
const userBalance = async (userId: string) =>
  (await t.call<{ balances: { USD: number } }>('GET', `/api/v1/admin/users/${userId}`, { headers: t.admin })).body.balances.USD;
const earned = async (agentId: string) =>
  (await t.call<{ balances: { USD: number } }>('GET', `/api/v1/admin/agents/${agentId}`, { headers: t.admin })).body.balances.USD;

it('ten concurrent returns of all of one charge: one 200, the rest 400; the payer credited once', async () => {
  const { agent, user, id } = await charged(10);
  const results = await Promise.all(Array.from({ length: 10 }, () => operatorRefund(agent.id, id)));
  expect(results.filter((r) => r.status === 200)).toHaveLength(1);
  for (const r of results.filter((r) => r.status !== 200)) {
    expect([r.status, r.body]).toEqual([400, { error: 'amount exceeds refundable amount' }]);
  }
  expect(await userBalance(user.id)).toBe(10);
  expect(await earned(agent.id)).toBe(0);
});

it('twenty concurrent partial returns that together exceed the charge: the refunded sum never passes it', async () => {
  const { agent, user, id } = await charged(10);
  const results = await Promise.all(Array.from({ length: 20 }, () => operatorRefund(agent.id, id, { amount: 0.75 })));
  const ok = results.filter((r) => r.status === 200);
  expect(ok).toHaveLength(13);
  expect(ok.map((r) => r.body.refundedAmount).sort((a, b) => a - b)).toEqual(Array.from({ length: 13 }, (_, i) => (i + 1) * 0.75));
  expect(await userBalance(user.id)).toBe(9.75);
  expect(await earned(agent.id)).toBe(0.25);
});

it('the operator and the agent refunding the same charge at once: together never more than it', async () => {
  for (let round = 0; round < 4; round++) {
    const { agent, user, id } = await charged(10);
    const [op, own] = await Promise.all([operatorRefund(agent.id, id, { amount: 6 }), agentRefund(agent.key, id, { amount: 6 })]);
    expect([op.status, own.status].filter((s) => s === 200)).toHaveLength(1);
    const loser = op.status === 200 ? own : op;
    expect([loser.status, loser.body]).toEqual([400, { error: 'amount exceeds refundable amount' }]);
    expect(await userBalance(user.id)).toBe(6);
    expect(await earned(agent.id)).toBe(4);
  }
});

it("the operator's return against the agent's own withdrawal of the same money: one gets it, never below zero", async () => {
  for (let round = 0; round < 5; round++) {
    const { agent, user, id } = await charged(10);
    const [refund, withdrawal] = await Promise.all([operatorRefund(agent.id, id), withdraw(agent.key, 10)]);
    expect([refund.status === 200, withdrawal.status === 200].filter(Boolean)).toHaveLength(1);
    if (refund.status !== 200) expect([refund.status, refund.body]).toEqual([402, { error: 'insufficient balance' }]);
    if (withdrawal.status !== 200) expect([withdrawal.status, withdrawal.body]).toEqual([400, { error: 'insufficient balance' }]);
    expect(await earned(agent.id)).toBe(0);
    expect(await userBalance(user.id)).toBe(refund.status === 200 ? 10 : 0);
    if (withdrawal.status === 200) {
      await eventually('the payout to finish', async () => (await getPayout(agent.id, withdrawal.body.payoutId))?.status === 'COMPLETED');
    }
  }
});

it("a return racing the cancel of the held payout that holds the agent's money: the balance never goes below zero", async () => {
  for (let round = 0; round < 3; round++) {
    const { agent, user, id } = await charged(10);
    // A withdrawal of it all whose message is lost, the agent disabled: the re-sent payout is held.
    const lost = inject({ client: 'sqs', command: 'SendMessageCommand', times: 1, error: () => new Error('injected: SQS unreachable') });
    let payoutId: string;
    try {
      const res = await withdraw(agent.key, 10);
      expect(res.status).toBe(200);
      payoutId = res.body.payoutId;
    } finally {
      lost.remove();
    }
    await t.call('PATCH', `/api/v1/admin/agents/${agent.id}`, { headers: t.admin, body: { enabled: false } });
    await eventually('the payout held', async () => (await getPayout(agent.id, payoutId))?.status === 'HELD');
    const [cancel, refund] = await Promise.all([
      t.call('POST', `/api/v1/admin/agents/${agent.id}/payouts/${payoutId}/cancel`, { headers: { ...t.admin, 'idempotency-key': key() } }),
      operatorRefund(agent.id, id),
    ]);
    expect(cancel.status).toBe(200);
    // Before the cancel the balance was 0 (402); after it, the refund took it all back to the payer.
    if (refund.status === 200) {
      expect([await earned(agent.id), await userBalance(user.id)]).toEqual([0, 10]);
    } else {
      expect([refund.status, refund.body]).toEqual([402, { error: 'insufficient balance' }]);
      expect([await earned(agent.id), await userBalance(user.id)]).toEqual([10, 0]);
      expect((await operatorRefund(agent.id, id)).status).toBe(200);
    }
    expect(await earned(agent.id)).toBe(0);
  }
});
