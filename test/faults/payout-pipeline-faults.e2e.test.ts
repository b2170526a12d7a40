/**
 * Faults in the payout pipeline, against the local stack's real pieces (local SQS with its DLQ,
 * the payout worker and reconciler handlers, the Solana and PayPal rails against their local
 * stand-ins): the queue send failing after the withdrawal committed, the worker dying at each
 * step (after claiming, after the rail paid but before recording it), sends lost on the way to
 * the chain, and duplicate deliveries. Every payout must end COMPLETED or FAILED, be paid on its
 * rail exactly once (never if FAILED), and the ledger audit must hold.
 */
import { sendPayoutMessage } from '../../functions/queue/payout-queue';
import { getPayout } from '../../functions/store/payouts/payout.repository';
import { auditAfterAll, expectLedgerBalanced } from '../support/audit';
import { solanaWallet } from '../support/payouts';
import { queueDrained } from '../support/queues';
import { useTestStack } from '../support/stack';
import { crash, inject, isPayoutFinalize, isRailCheckpoint } from './inject';
import { expectEachPayoutPaidOnce, paymentsByPayout, untilFinal } from './payout-checks';

const t = useTestStack(
  { RECONCILE_PENDING_AFTER_SECONDS: '1', RECONCILE_PROCESSING_AFTER_SECONDS: '1' },
  { payouts: { visibilityTimeoutSeconds: 2, reconcileIntervalMs: 200 } },
);

auditAfterAll();
afterAll(async () => {
  await expectEachPayoutPaidOnce(t);
});

type Money = { USD: number; USDC: number };

const withdraw = (agentKey: string, body: Record<string, unknown>, key = `wd-${Math.random().toString(36).slice(2)}`) =>
  t.call<{ payoutId: string; error?: string }>('POST', '/api/v1/agents/withdraw', {
    headers: { 'x-agent-key': agentKey, 'idempotency-key': key },
    body,
  });

async function agentBalances(key: string): Promise<Money> {
  return (await t.call<{ balances: Money }>('GET', '/api/v1/agents/balance', { headers: { 'x-agent-key': key } })).body.balances;
}

async function payout(agentKey: string, payoutId: string) {
  return (
    await t.call<{ status: string; attempts?: number }>('GET', `/api/v1/agents/withdraw?payoutId=${payoutId}`, {
      headers: { 'x-agent-key': agentKey },
    })
  ).body;
}

const destinations = {
  USD: () => 'success@example.com',
  USDC: () => walletWithTokenAccount(),
} as const;

/** A wallet with its USDC token account, which the rail never creates (docs/rails.md). */
function walletWithTokenAccount(): string {
  const wallet = solanaWallet();
  t.stack.rails.solana.createTokenAccount(wallet);
  return wallet;
}

describe('payout pipeline faults', () => {
  it('still pays once when the queue send fails after the withdrawal committed (the reconciler re-sends it)', async () => {
    const agent = await t.earningAgent({ USD: 20 });
    const lost = inject({ client: 'sqs', command: 'SendMessageCommand', times: 1, error: () => new Error('injected: SQS unreachable') });
    let payoutId: string;
    try {
      const res = await withdraw(agent.key, { amount: 10, currency: 'USD', walletAddress: 'success@example.com' });
      // Committed is committed: the agent gets its 200 even though the message was lost.
      expect(res.status).toBe(200);
      payoutId = res.body.payoutId;
    } finally {
      lost.remove();
    }
    expect(lost.hits()).toBe(1);
    expect(await untilFinal(t, agent.key, payoutId)).toBe('COMPLETED');
    expect(paymentsByPayout(t).get(payoutId)).toBe(1);
    expect((await agentBalances(agent.key)).USD).toBe(10);
    await expectLedgerBalanced();
  });

  it.each([
    'USD',
    'USDC',
  ] as const)('pays a %s payout once when the worker dies after the rail paid but before recording it', async (currency) => {
    const agent = await t.earningAgent({ [currency]: 20 });
    const died = inject({ command: 'TransactWriteItemsCommand', match: isPayoutFinalize, times: 1, error: crash });
    let payoutId: string;
    try {
      const res = await withdraw(agent.key, { amount: 10, currency, walletAddress: destinations[currency]() });
      expect(res.status).toBe(200);
      payoutId = res.body.payoutId;
      expect(await untilFinal(t, agent.key, payoutId)).toBe('COMPLETED');
    } finally {
      died.remove();
    }
    expect(died.hits()).toBe(1);
    // The next attempt found the first one's payment instead of making another.
    expect(paymentsByPayout(t).get(payoutId)).toBe(1);
    expect((await payout(agent.key, payoutId)).status).toBe('COMPLETED');
    expect((await agentBalances(agent.key))[currency]).toBe(10);
    await expectLedgerBalanced();
  });

  it.each([
    'USD',
    'USDC',
  ] as const)('pays a %s payout once when the worker dies after claiming it, before the rail acted', async (currency) => {
    const agent = await t.earningAgent({ [currency]: 20 });
    const died = inject({ command: 'UpdateItemCommand', match: isRailCheckpoint, times: 1, error: crash });
    try {
      const res = await withdraw(agent.key, { amount: 10, currency, walletAddress: destinations[currency]() });
      expect(res.status).toBe(200);
      expect(await untilFinal(t, agent.key, res.body.payoutId)).toBe('COMPLETED');
      expect(paymentsByPayout(t).get(res.body.payoutId)).toBe(1);
    } finally {
      died.remove();
    }
    expect(died.hits()).toBe(1);
    await expectLedgerBalanced();
  });

  it('pays a USDC payout once when its first transaction never reached the chain', async () => {
    const agent = await t.earningAgent({ USDC: 20 });
    t.stack.rails.solana.dropNextSends(1);
    const res = await withdraw(agent.key, { amount: 10, currency: 'USDC', walletAddress: walletWithTokenAccount() });
    expect(res.status).toBe(200);
    expect(await untilFinal(t, agent.key, res.body.payoutId, 60_000)).toBe('COMPLETED');
    expect(paymentsByPayout(t).get(res.body.payoutId)).toBe(1);
    await expectLedgerBalanced();
  });

  it('ignores duplicate deliveries, while in flight and after completion: one payment', async () => {
    const agent = await t.earningAgent({ USD: 20, USDC: 20 });
    for (const currency of ['USD', 'USDC'] as const) {
      const res = await withdraw(agent.key, { amount: 10, currency, walletAddress: destinations[currency]() });
      expect(res.status).toBe(200);
      const message = { payoutId: res.body.payoutId, agentId: agent.id };
      // The same message twice more at once, while the first delivery is being worked on …
      await Promise.all([sendPayoutMessage(message), sendPayoutMessage(message)]);
      expect(await untilFinal(t, agent.key, res.body.payoutId)).toBe('COMPLETED');
      // … and again once it is final. Handled, not waited for: once the payout queue holds nothing
      // (visible, in flight or delayed) every message sent, this one too, was received and deleted,
      // and a worker deletes a message only after acting on it. A final payout is never claimed
      // again and nothing reaches the rail without a claim: its attempts stay as they were.
      const final = await getPayout(agent.id, res.body.payoutId);
      expect(final).toMatchObject({ status: 'COMPLETED', attempts: expect.any(Number) });
      await sendPayoutMessage(message);
      await queueDrained(t.stack.sqs.queueUrl, 'payout queue');
      expect(await getPayout(agent.id, res.body.payoutId)).toMatchObject({ status: 'COMPLETED', attempts: final?.attempts });
      expect(paymentsByPayout(t).get(res.body.payoutId)).toBe(1);
    }
    expect(await agentBalances(agent.key)).toEqual({ USD: 10, USDC: 10 });
    await expectLedgerBalanced();
  });

  it('refunds a refused payout once when the worker dies before recording the refusal', async () => {
    const agent = await t.earningAgent({ USD: 20 });
    const died = inject({ command: 'TransactWriteItemsCommand', match: isPayoutFinalize, times: 2, error: crash });
    try {
      const res = await withdraw(agent.key, { amount: 10, currency: 'USD', walletAddress: 'fail@example.com' });
      expect(res.status).toBe(200);
      expect(await untilFinal(t, agent.key, res.body.payoutId)).toBe('FAILED');
    } finally {
      died.remove();
    }
    expect(died.hits()).toBe(2);
    expect((await agentBalances(agent.key)).USD).toBe(20);
    await expectLedgerBalanced();
  });
});
