/**
 * Faults in the payout of an x402 refund (DESIGN §28), against the local stack's real pieces (local
 * SQS, the payout worker and reconciler, the Solana rail and signer against the LiteSVM chain): the
 * worker dies after its signed transfer was saved and before it was sent or confirmed, after the
 * transfer landed and before it was recorded, and the transfer is lost on its way to the chain. Each
 * refund ends COMPLETED with one transfer to the payer, never two (counted on the chain itself), and
 * the ledger audit, the wallets' transfers included, holds.
 */
import { auditAfterAll, expectLedgerBalanced } from '../support/audit';
import { useTestStack } from '../support/stack';
import { useRefundFixture } from '../support/x402-refunds';
import { crash, inject, isRefundFinalize, isRefundRailCheckpoint } from './inject';
import { expectEachPayoutPaidOnce, paymentsByPayout } from './payout-checks';

const t = useTestStack(
  { RECONCILE_PENDING_AFTER_SECONDS: '1', RECONCILE_PROCESSING_AFTER_SECONDS: '1' },
  { payouts: { visibilityTimeoutSeconds: 2, reconcileIntervalMs: 200 } },
);
const f = useRefundFixture(t);

auditAfterAll();
afterAll(async () => {
  // Every payout and refund in the table: COMPLETED → exactly one transfer on chain; FAILED → none.
  await expectEachPayoutPaidOnce(t);
});

describe('x402 refund payout faults', () => {
  it.each([
    [
      'after its signed transfer was saved, before it was sent and confirmed',
      'UpdateItemCommand',
      isRefundRailCheckpoint,
      'after-response',
    ],
    ['after the transfer landed, before it was recorded', 'TransactWriteItemsCommand', isRefundFinalize, 'past-sdk-retries'],
  ] as const)('pays once when the worker dies %s', async (_when, command, match, where) => {
    const seller = await f.seller();
    const paymentId = await f.pay(seller);
    const before = f.payerUsdc();
    const died = inject({ command, match, times: 1, error: crash, where });
    try {
      const res = await f.refund(seller.key, paymentId, { body: { amount: 0.007 } });
      expect(res.status).toBe(202);
      const done = await f.untilFinal(seller.key, res.body.id);
      expect(done.status).toBe('COMPLETED');
      expect(died.hits()).toBe(1);
      // One transfer, never two: the chain's own record, and the payer's token account.
      expect(paymentsByPayout(t).get(res.body.id)).toBe(1);
      expect(f.payerUsdc() - before).toBe(7_000n);
    } finally {
      died.remove();
    }
    expect(await f.usdcBalance(seller.key)).toBe(0.003);
    await expectLedgerBalanced();
  });

  it('pays once when its first transfer never reached the chain', async () => {
    const seller = await f.seller();
    const paymentId = await f.pay(seller);
    const before = f.payerUsdc();
    t.stack.rails.solana.dropNextSends(1);
    const res = await f.refund(seller.key, paymentId);
    expect(res.status).toBe(202);
    expect((await f.untilFinal(seller.key, res.body.id, 60_000)).status).toBe('COMPLETED');
    expect(paymentsByPayout(t).get(res.body.id)).toBe(1);
    expect(f.payerUsdc() - before).toBe(10_000n);
    await expectLedgerBalanced();
  });
});
