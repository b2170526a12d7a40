/**
 * Checks shared by the fault tests: wait for a payout to settle, and prove from the rails' own
 * records (the LiteSVM chain's landed transactions, the PayPal stand-in's batches) that every
 * payout in the table moved money exactly once if COMPLETED and never if FAILED.
 */
import { scanLedgerItems } from '../../functions/store/audit/audit.repository';
import { eventually } from '../support/eventually';
import type { TestStack } from '../support/stack';

export type PayoutStatus = 'PENDING' | 'PROCESSING' | 'COMPLETED' | 'FAILED';

/** Polls `GET /withdraw?payoutId=` until COMPLETED or FAILED (the worker, then the reconciler). */
export async function untilFinal(t: TestStack, agentKey: string, payoutId: string, timeoutMs = 30_000): Promise<PayoutStatus> {
  return eventually(
    `payout ${payoutId} to be COMPLETED or FAILED`,
    async () => {
      const res = await t.call<{ status: PayoutStatus }>('GET', `/api/v1/agents/withdraw?payoutId=${payoutId}`, {
        headers: { 'x-agent-key': agentKey },
      });
      if (res.status !== 200) throw new Error(`payout ${payoutId}: ${res.status} ${res.text}`);
      if (res.body.status !== 'COMPLETED' && res.body.status !== 'FAILED') throw new Error(`payout ${payoutId} still ${res.body.status}`);
      return res.body.status;
    },
    { timeoutMs, intervalMs: 100 },
  );
}

/** Times each payout id moved money, from the rails' side. */
export function paymentsByPayout(t: TestStack): Map<string, number> {
  const moved = new Map<string, number>();
  for (const tx of t.stack.rails.solana.landed()) {
    // The Solana rail's memo names the payout; a failed transaction moved nothing.
    if (tx.err === null && tx.memo?.startsWith('payout:')) {
      const id = tx.memo.slice('payout:'.length);
      moved.set(id, (moved.get(id) ?? 0) + 1);
    }
  }
  for (const batch of t.stack.rails.paypal.batches()) {
    // The PayPal rail names each batch by the payout id (sender_batch_id).
    const paid = batch.items.filter((i) => i.status === 'SUCCESS').length;
    if (paid > 0) moved.set(batch.senderBatchId, (moved.get(batch.senderBatchId) ?? 0) + paid);
  }
  return moved;
}

/** Every payout in the table: COMPLETED → paid exactly once; FAILED → never; none in flight. */
export async function expectEachPayoutPaidOnce(t: TestStack): Promise<void> {
  const moved = paymentsByPayout(t);
  const { payouts } = await scanLedgerItems();
  const actual = payouts.map((p) => ({ id: String(p.SK), status: String(p.status), paid: moved.get(String(p.SK)) ?? 0 }));
  const expected = actual.map((p) => ({
    id: p.id,
    status: p.status === 'COMPLETED' ? 'COMPLETED' : 'FAILED',
    paid: p.status === 'COMPLETED' ? 1 : 0,
  }));
  expect(actual).toEqual(expected);
  // And nothing was paid for a payout the table does not know.
  const known = new Set(actual.map((p) => p.id));
  expect([...moved.keys()].filter((id) => !known.has(id))).toEqual([]);
}
