/**
 * The reconciler's search for a purchase's transfer (docs/x402.md "Settlement, exactly once, by the
 * chain"): it pages back through the hot wallet token account's signatures with `before` until the
 * transfer is found or the pages are older than any slot it could have landed in, and releases a
 * purchase past its blockhash only when the search got that far. A transfer buried under newer
 * transactions is captured, never released: released, the payer would get back USDC that left.
 * Pages of 2 stand for the RPC's 1,000, so a few transactions bury it.
 */

import { X402_PURCHASES_UNSEARCHED_METRIC } from '../../functions/observability/metric-names';
import { metrics } from '../../functions/observability/metrics';
import { railFor } from '../../functions/rails';
import { createReconciler } from '../../functions/reconciler/reconciler';
import { reconcilePurchases } from '../../functions/use-cases/x402-purchases/purchase-reconcile';
import { purchaseChain } from '../../functions/x402/purchase-chain';
import { expectLedgerBalanced } from '../support/audit';
import { useTestStack } from '../support/stack';
import { usePurchaseFixture } from '../support/x402';

// No reconciler on an interval: each run here is the test's own, with the search it sets.
const t = useTestStack({}, { payouts: { reconcileIntervalMs: 3_600_000 } });
const x402 = usePurchaseFixture(t);
afterEach(async () => {
  await expectLedgerBalanced();
});

type Purchase = { id: string; status: string; paymentPayload: Record<string, unknown> | null };

async function purchased() {
  const buyer = await x402.buyer();
  const accepted = await x402.requirements();
  const made = await x402.buy<Purchase>(buyer, accepted);
  expect(made.status).toBe(201);
  return { ...buyer, accepted, purchase: made.body };
}

const read = async (agentKey: string, id: string) => (await x402.read<Purchase>(agentKey, id)).body;

/** The chain as the reconciler reads it, with pages of 2 and at most `maxSignatures` read. */
async function searching(maxSignatures?: number) {
  const chain = await purchaseChain();
  return {
    ...chain,
    findLanded: (signed: Parameters<typeof chain.findLanded>[0], opts: Parameters<typeof chain.findLanded>[1]) =>
      chain.findLanded(signed, { ...opts, pageSize: 2, ...(maxSignatures !== undefined ? { maxSignatures } : {}) }),
  };
}

describe("the reconciler's search for a purchase's transfer", () => {
  it('a transfer under newer transactions: not released while the search does not reach it, captured once it pages back to it', async () => {
    const { agent, accepted, purchase } = await purchased();
    expect((await x402.pay(purchase.paymentPayload, accepted)).status).toBe(200);
    const { solana } = t.stack.rails;
    // Newer transactions of the hot wallet's token account bury the transfer.
    for (let i = 0; i < 5; i++) solana.mintTo(solana.hotWallet.publicKey, 1n);
    solana.expireBlockhash();
    // A search that stops after 4 signatures never reads the transfer: past its blockhash, the
    // purchase still waits, and the reconciler's run says so in the gauge X402PurchasesUnsearched alarms on.
    const recorded = jest.spyOn(metrics(), 'addMetric');
    const unsearched = () => recorded.mock.calls.filter(([name]) => name === X402_PURCHASES_UNSEARCHED_METRIC).map(([, , value]) => value);
    try {
      const short = await createReconciler({ railFor, purchaseChain: () => searching(4) })();
      expect(short.purchases).toMatchObject({ checked: 1, captured: 0, expired: 0, unsearched: 1, deferred: 1 });
      expect(unsearched()).toEqual([1]);
      expect((await read(agent.key, purchase.id)).status).toBe('PENDING');
      // It waits a minute before it is searched for again (DESIGN §24): a run before that does not
      // read it, and the gauge still counts it.
      const waiting = await createReconciler({ railFor, purchaseChain: () => searching() })();
      expect(waiting.purchases).toMatchObject({ checked: 0, captured: 0, unsearched: 1 });
      // Its wait over, paging on with `before`: found, captured once; the gauge back at 0, so the alarm clears.
      const later = new Date(Date.now() + 2 * 60_000);
      const found = await createReconciler({ railFor, clock: () => later, purchaseChain: () => searching() })();
      expect(found.purchases).toMatchObject({ checked: 1, captured: 1, expired: 0, unsearched: 0 });
      expect(unsearched()).toEqual([1, 1, 0]);
    } finally {
      recorded.mockRestore();
    }
    expect((await read(agent.key, purchase.id)).status).toBe('SUCCESS');
  });

  it("a payment never sent: released once the search has read the account's whole history back to before its blockhash", async () => {
    const { agent, user, purchase } = await purchased();
    t.stack.rails.solana.expireBlockhash();
    expect(await reconcilePurchases(await searching())).toMatchObject({ checked: 1, captured: 0, expired: 1, unsearched: 0 });
    expect((await read(agent.key, purchase.id)).status).toBe('EXPIRED');
    expect(await x402.usdcBalance(user.id)).toBe(1);
  });
});
