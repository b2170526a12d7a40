/**
 * Attack: an agent whose key an attacker holds (or an agent that turned rogue) withdraws while its
 * payout rail is down; the operator disables it. Before the fix the payout worker never looked at
 * the agent: once the rail recovered the withdrawal made before the disable was paid anyway.
 *
 * The property: a disabled agent's queued payout is never paid on the worker's own initiative. It
 * is held (status HELD, its money still debited, its lock kept) until the operator releases it
 * (then it is paid, once) or cancels it (then its gross, fee included, goes back to the agent's
 * balance in one transaction with its idempotency record). docs/payouts.md, "Held payouts".
 */
import { getPayout } from '../../functions/store/payouts/payout.repository';
import { inject } from '../faults/inject';
import { paymentsByPayout } from '../faults/payout-checks';
import { auditAfterAll, expectLedgerBalanced } from '../support/audit';
import { eventually } from '../support/eventually';
import { solanaWallet } from '../support/payouts';
import { useTestStack } from '../support/stack';

const t = useTestStack(
  { RECONCILE_PENDING_AFTER_SECONDS: '1', RECONCILE_PROCESSING_AFTER_SECONDS: '1', AUTH_CACHE_TTL_MS: '0' },
  { payouts: { visibilityTimeoutSeconds: 2, reconcileIntervalMs: 200 } },
);

auditAfterAll();

const withdraw = (agentKey: string, body: Record<string, unknown>) =>
  t.call<{ payoutId: string }>('POST', '/api/v1/agents/withdraw', {
    headers: { 'x-agent-key': agentKey, 'idempotency-key': `wd-${Math.random().toString(36).slice(2)}` },
    body,
  });

const setEnabled = async (agentId: string, enabled: boolean) => {
  const res = await t.call('PATCH', `/api/v1/admin/agents/${agentId}`, { headers: t.admin, body: { enabled } });
  expect(res.status).toBe(200);
};

/** The payout's status as stored, once it is one of `want` (fails naming what it became otherwise). */
function until(agentId: string, payoutId: string, want: string[], timeoutMs = 20_000): Promise<string> {
  return eventually(
    `payout ${payoutId} to be ${want.join('/')}`,
    async () => {
      const status = (await getPayout(agentId, payoutId))?.status ?? 'missing';
      if (!want.includes(status)) throw new Error(`payout ${payoutId} is ${status}`);
      return status;
    },
    { timeoutMs },
  );
}

const adminBalance = async (agentId: string) =>
  (await t.call<{ balances: { USD: number; USDC: number } }>('GET', `/api/v1/admin/agents/${agentId}`, { headers: t.admin })).body.balances;

describe('a disabled agent’s queued payouts are held, not paid', () => {
  it('USD: PayPal down when the agent withdrew; disabled; PayPal back: the payout is held, then cancelled with its gross back', async () => {
    const agent = await t.earningAgent({ USD: 12 });
    // PayPal's token endpoint is down: every attempt fails before any payout is sent to PayPal.
    t.stack.rails.paypal.failNext('token', 1_000, 503);
    let payoutId: string;
    try {
      const res = await withdraw(agent.key, { amount: 10, currency: 'USD', walletAddress: 'success@example.com' });
      expect(res.status).toBe(200);
      payoutId = res.body.payoutId;
      await eventually('a first attempt that failed on the rail', async () => {
        const p = await getPayout(agent.id, payoutId);
        return p?.status === 'PROCESSING' && p.attempts >= 1;
      });
      await setEnabled(agent.id, false);
    } finally {
      t.stack.rails.paypal.failNext('token', 0, 503); // PayPal recovers
    }
    // Attempts go on (SQS redelivers, the reconciler drives it): none may pay a disabled agent.
    expect(await until(agent.id, payoutId, ['HELD'])).toBe('HELD');
    expect(paymentsByPayout(t).get(payoutId)).toBeUndefined();
    expect(t.stack.rails.paypal.batchBySenderId(payoutId)).toBeUndefined();
    await expectLedgerBalanced();

    // The operator lists what waits for it, and cancels: the gross, fee included, back to the agent.
    const held = await t.call<{ payouts: { id: string; status: string; agentId: string }[] }>('GET', '/api/v1/admin/payouts?status=HELD', {
      headers: t.admin,
    });
    expect(held.status).toBe(200);
    expect(held.body.payouts).toContainEqual(expect.objectContaining({ id: payoutId, agentId: agent.id, status: 'HELD' }));
    expect(await adminBalance(agent.id)).toMatchObject({ USD: 2 });
    const cancel = () =>
      t.call<{ status: string; failureReason: string; amount: number }>(
        'POST',
        `/api/v1/admin/agents/${agent.id}/payouts/${payoutId}/cancel`,
        {
          headers: { ...t.admin, 'idempotency-key': `cancel-${payoutId}` },
        },
      );
    const cancelled = await cancel();
    expect([cancelled.status, cancelled.body.status, cancelled.body.failureReason]).toEqual([200, 'FAILED', 'cancelled by operator']);
    expect(await adminBalance(agent.id)).toMatchObject({ USD: 12 });
    // The same key again: the same answer, nothing moved twice.
    const again = await cancel();
    expect([again.status, again.text, again.headers.get('idempotent-replayed')]).toEqual([200, cancelled.text, 'true']);
    expect(await adminBalance(agent.id)).toMatchObject({ USD: 12 });
    expect(paymentsByPayout(t).get(payoutId)).toBeUndefined();
    await expectLedgerBalanced();
  });

  it('USDC: the queue message lost, the agent disabled meanwhile: held when re-sent; released by the operator, paid once', async () => {
    const agent = await t.earningAgent({ USDC: 12 });
    const wallet = solanaWallet();
    t.stack.rails.solana.createTokenAccount(wallet);
    const lost = inject({ client: 'sqs', command: 'SendMessageCommand', times: 1, error: () => new Error('injected: SQS unreachable') });
    let payoutId: string;
    try {
      const res = await withdraw(agent.key, { amount: 10, currency: 'USDC', walletAddress: wallet });
      expect(res.status).toBe(200);
      payoutId = res.body.payoutId;
    } finally {
      lost.remove();
    }
    expect(lost.hits()).toBe(1);
    await setEnabled(agent.id, false);
    // The reconciler re-sends the PENDING payout; the worker claims it and finds the agent disabled.
    expect(await until(agent.id, payoutId, ['HELD'])).toBe('HELD');
    expect(paymentsByPayout(t).get(payoutId)).toBeUndefined();
    expect(t.stack.rails.solana.tokenBalance(wallet)).toBe(0n);

    // The operator decides it is owed: released, it is paid though the agent stays disabled.
    const released = await t.call<{ status: string }>('POST', `/api/v1/admin/agents/${agent.id}/payouts/${payoutId}/release`, {
      headers: t.admin,
    });
    expect([released.status, released.body.status]).toEqual([200, 'PENDING']);
    expect(await until(agent.id, payoutId, ['COMPLETED'], 30_000)).toBe('COMPLETED');
    expect(paymentsByPayout(t).get(payoutId)).toBe(1);
    expect(t.stack.rails.solana.tokenBalance(wallet)).toBe(9_700_000n);
    // Released twice: the same payout, not a second payment; a cancel of a payout no longer held is refused.
    const twice = await t.call<{ status: string }>('POST', `/api/v1/admin/agents/${agent.id}/payouts/${payoutId}/release`, {
      headers: t.admin,
    });
    expect([twice.status, twice.body.status]).toEqual([200, 'COMPLETED']);
    const late = await t.call('POST', `/api/v1/admin/agents/${agent.id}/payouts/${payoutId}/cancel`, {
      headers: { ...t.admin, 'idempotency-key': `cancel-late-${payoutId}` },
    });
    expect([late.status, late.body]).toEqual([409, { error: 'payout is not held' }]);
    await expectLedgerBalanced();
  });
});
