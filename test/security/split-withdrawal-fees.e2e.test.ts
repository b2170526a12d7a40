/**
 * Attack: an agent splits a withdrawal to pay less than the 3% platform fee. With the fee rounded
 * half up on each withdrawal alone, five withdrawals of 1.16 USD paid 0.03 each (0.15, about
 * 2.59%), where one withdrawal of 5.80 pays 0.17. The property: whatever the split, the fees an
 * agent's payouts carry in a currency are never below the fee of one withdrawal of their sum
 * (docs/payouts.md, "The platform fee").
 */
import { agentBalanceBody } from '../../functions/contracts/responses/accounts';
import { payoutBody, payoutListBody, withdrawalBody } from '../../functions/contracts/responses/payouts';
import { auditAfterAll, expectLedgerBalanced } from '../support/audit';
import { expectBody } from '../support/bodies';
import { eventually } from '../support/eventually';
import { useTestStack } from '../support/stack';

const t = useTestStack(
  { RECONCILE_PENDING_AFTER_SECONDS: '1', RECONCILE_PROCESSING_AFTER_SECONDS: '1' },
  { payouts: { visibilityTimeoutSeconds: 1, reconcileIntervalMs: 250 } },
);
auditAfterAll();

async function withdrawAndWait(agentKey: string, amount: string, n: number): Promise<{ fee: number }> {
  const res = expectBody(
    await t.call('POST', '/api/v1/agents/withdraw', {
      headers: { 'x-agent-key': agentKey, 'idempotency-key': `split-${n}-${Date.now()}` },
      raw: `{"amount":${amount},"currency":"USD","walletAddress":"success@example.com"}`,
    }),
    withdrawalBody,
    200,
  );
  // One payout in flight per agent and currency: the next split waits for this one to finish.
  await eventually(
    `payout ${res.payoutId} to complete`,
    async () => {
      const p = expectBody(
        await t.call('GET', `/api/v1/agents/withdraw?payoutId=${res.payoutId}`, { headers: { 'x-agent-key': agentKey } }),
        payoutBody,
      );
      return p.status === 'COMPLETED';
    },
    { timeoutMs: 20_000 },
  );
  return { fee: res.breakdown.platformFee };
}

describe('splitting a withdrawal never undercuts the 3% platform fee', () => {
  it('five withdrawals of 1.16 USD pay at least what one of 5.80 pays (0.17)', async () => {
    const agent = await t.earningAgent({ USD: '5.80' });
    const fees: number[] = [];
    for (let i = 0; i < 5; i++) fees.push((await withdrawAndWait(agent.key, '1.16', i)).fee);
    const cents = fees.map((f) => Math.round(f * 100));
    const total = cents.reduce((a, b) => a + b, 0);
    // One withdrawal of 5.80 pays round-half-up(17.4) = 17 cents; the split must not pay less.
    expect(total).toBeGreaterThanOrEqual(17);
    expect(total).toBe(17);
    // The payouts agree with the answers, and the whole balance went out.
    const listed = expectBody(await t.call('GET', '/api/v1/agents/withdraw', { headers: { 'x-agent-key': agent.key } }), payoutListBody);
    expect(listed.payouts.map((p) => Math.round(p.fee * 100)).reduce((a, b) => a + b, 0)).toBe(17);
    const balance = expectBody(await t.call('GET', '/api/v1/agents/balance', { headers: { 'x-agent-key': agent.key } }), agentBalanceBody);
    expect(balance.balances.USD).toBe(0);
    await expectLedgerBalanced();
  });

  it('a single withdrawal still pays exactly DESIGN §2’s fee: 10.01 → 0.30 (net 9.71), then 1.00 → 0.03', async () => {
    const agent = await t.earningAgent({ USD: '11.01' });
    const first = expectBody(
      await t.call('POST', '/api/v1/agents/withdraw', {
        headers: { 'x-agent-key': agent.key, 'idempotency-key': `single-${Date.now()}` },
        raw: '{"amount":10.01,"currency":"USD","walletAddress":"success@example.com"}',
      }),
      withdrawalBody,
      200,
    );
    expect(first.breakdown).toMatchObject({ platformFee: 0.3, netAmount: 9.71 });
    await eventually('the first payout to complete', async () => {
      const p = expectBody(
        await t.call('GET', `/api/v1/agents/withdraw?payoutId=${first.payoutId}`, { headers: { 'x-agent-key': agent.key } }),
        payoutBody,
      );
      return p.status === 'COMPLETED';
    });
    // 3% of 11.01 in all is 0.3303 → 0.33: the second pays 0.03, as a lone 1.00 would.
    expect((await withdrawAndWait(agent.key, '1.00', 99)).fee).toBe(0.03);
  });
});
