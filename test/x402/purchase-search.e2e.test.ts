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
import { reconcilePurchases } from '../../functions/use-cases/purchases';
import { purchaseChain } from '../../functions/x402/purchase-signer';
import { expectLedgerBalanced } from '../support/audit';
import { startTestStack, type TestStack } from '../support/stack';
import { createTestTable } from '../support/table';
import { type StockSeller, startStockSeller } from './stock-seller';

let t: TestStack;
let seller: StockSeller;

beforeAll(async () => {
  await createTestTable();
  // No reconciler on an interval: each run here is the test's own, with the search it sets.
  t = await startTestStack({}, { payouts: { reconcileIntervalMs: 3_600_000 } });
  seller = await startStockSeller(t.stack.rails.solana, '$0.01');
});
afterAll(async () => {
  await seller?.close();
  await t?.stack.stop();
});
afterEach(async () => {
  await expectLedgerBalanced();
});

type Purchase = { id: string; status: string; paymentPayload: Record<string, unknown> | null };

async function requirements(): Promise<Record<string, unknown>> {
  t.stack.rails.solana.advanceBlocks(1);
  const res = await fetch(`${seller.url}/weather`);
  const required = JSON.parse(Buffer.from(res.headers.get('payment-required') ?? '', 'base64').toString('utf8'));
  return required.accepts[0];
}

async function purchased() {
  const agent = await t.enabledAgent();
  const user = await t.fundedUser({ USDC: 1 });
  const accepted = await requirements();
  const made = await t.call<Purchase>('POST', '/api/v1/agents/x402/purchases', {
    headers: { 'x-agent-key': agent.key, 'x-user-key': user.key, 'idempotency-key': `search-${Date.now()}-${Math.random()}` },
    body: { x402Version: 2, paymentRequirements: accepted },
  });
  expect(made.status).toBe(201);
  return { agent, user, accepted, purchase: made.body };
}

const read = async (agentKey: string, id: string) =>
  (await t.call<Purchase>('GET', `/api/v1/agents/x402/purchases/${id}`, { headers: { 'x-agent-key': agentKey } })).body;

/** The chain as the reconciler reads it, with pages of 2 and at most `maxSignatures` read. */
async function searching(maxSignatures?: number) {
  const chain = await purchaseChain();
  return {
    ...chain,
    findLanded: (signed: Parameters<typeof chain.findLanded>[0]) =>
      chain.findLanded(signed, { pageSize: 2, ...(maxSignatures !== undefined ? { maxSignatures } : {}) }),
  };
}

describe("the reconciler's search for a purchase's transfer", () => {
  it('a transfer under newer transactions: not released while the search does not reach it, captured once it pages back to it', async () => {
    const { agent, accepted, purchase } = await purchased();
    const header = Buffer.from(
      JSON.stringify({ ...purchase.paymentPayload, resource: { url: `${seller.url}/weather` }, accepted }),
    ).toString('base64');
    expect((await fetch(`${seller.url}/weather`, { headers: { 'payment-signature': header } })).status).toBe(200);
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
      expect(short.purchases).toMatchObject({ checked: 1, captured: 0, expired: 0, unsearched: 1 });
      expect(unsearched()).toEqual([1]);
      expect((await read(agent.key, purchase.id)).status).toBe('PENDING');
      // Paging on with `before`: found, captured once; the gauge back at 0, so the alarm clears.
      const found = await createReconciler({ railFor, purchaseChain: () => searching() })();
      expect(found.purchases).toMatchObject({ checked: 1, captured: 1, expired: 0, unsearched: 0 });
      expect(unsearched()).toEqual([1, 0]);
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
    const balances = await t.call<{ balances: { USDC: number } }>('GET', `/api/v1/admin/users/${user.id}`, { headers: t.admin });
    expect(balances.body.balances.USDC).toBe(1);
  });
});
