/**
 * x402 purchases end to end (DESIGN §22, docs/x402.md "Buying from x402 sellers") with packages
 * no one here can tune: a stock `@x402/express` seller whose facilitator is the STOCK `@x402/svm`
 * facilitator (its own fee payer) on the local chain, paying a wallet outside the service; the
 * buyer is stock `@x402/fetch` with the README's scheme client, which asks the service for the
 * payment under a grant key. 200 from the seller, the seller's wallet +amount on chain, the payer
 * −amount once, the grant's `spent` +amount, the purchase SUCCESS; a payment never sent → EXPIRED
 * and the hold back; concurrent purchases never past the grant's `total`; a replayed key signs
 * nothing new. The ledger audit (the wallets' equation included) after every test.
 */

import { railFor } from '../../functions/rails';
import { createReconciler } from '../../functions/reconciler/reconciler';
import { purchaseChain } from '../../functions/x402/purchase-signer';
import { expectLedgerBalanced } from '../support/audit';
import { startTestStack, type TestStack } from '../support/stack';
import { createTestTable } from '../support/table';
import { type StockSeller, serviceBuyer, startStockSeller } from './stock-seller';

let t: TestStack;
let seller: StockSeller;

type Purchase = {
  id: string;
  status: string;
  pendingReason: string | null;
  failureReason: string | null;
  amount: number;
  currency: string;
  payTo: string;
  network: string;
  resource: { url: string } | null;
  grantId: string | null;
  createdAt: string;
  expiresAt: string;
  paymentPayload: { x402Version: number; payload: { transaction: string } } | null;
  transaction: string | null;
  error?: string;
};
type Grant = { id: string; key: string; spent: number };

beforeAll(async () => {
  await createTestTable();
  t = await startTestStack();
  // The hot wallet's USDC float: what purchases are paid from (the operator's funding, in the wallets' equation).
  t.stack.rails.solana.mintTo(t.stack.rails.solana.hotWallet.publicKey, 100_000_000n);
  seller = await startStockSeller(t.stack.rails.solana, '$0.01');
});
afterAll(async () => {
  await seller?.close();
  await t?.stack.stop();
});
afterEach(async () => {
  await expectLedgerBalanced();
});

const reconcile = () => createReconciler({ railFor, purchaseChain })();
const userBalance = async (userId: string) =>
  (await t.call<{ balances: { USDC: number } }>('GET', `/api/v1/admin/users/${userId}`, { headers: t.admin })).body.balances.USDC;
const grantOf = async (userKey: string, grantId: string) =>
  (await t.call<Grant>('GET', `/api/v1/users/me/grants/${grantId}`, { headers: { 'x-user-key': userKey } })).body;

async function payer(usdc: number, limits: Record<string, unknown> = { total: 5 }) {
  const agent = await t.enabledAgent();
  const user = await t.fundedUser({ USDC: usdc });
  const grant = await t.call<Grant>('POST', '/api/v1/users/me/grants', {
    headers: { 'x-user-key': user.key },
    body: { agentId: agent.id, currency: 'USDC', limits },
  });
  expect(grant.status).toBe(201);
  return { agent, user, grant: grant.body };
}

async function requirementsOf(url: string) {
  // The local chain makes a new blockhash only when a transaction lands: two payments built alike in one block are one.
  t.stack.rails.solana.advanceBlocks(1);
  const res = await fetch(url);
  expect(res.status).toBe(402);
  const required = JSON.parse(Buffer.from(res.headers.get('payment-required') ?? '', 'base64').toString('utf8')) as {
    accepts: Record<string, unknown>[];
  };
  return required.accepts[0] as Record<string, unknown>;
}

const purchase = (agentKey: string, userKey: string, body: unknown, key = `p-${Date.now()}-${Math.random()}`) =>
  t.call<Purchase>('POST', '/api/v1/agents/x402/purchases', {
    headers: { 'x-agent-key': agentKey, 'x-user-key': userKey, 'idempotency-key': key },
    body,
  });

describe('buying from a stock x402 seller', () => {
  it('the stock buyer with the README scheme client gets 200; the seller +0.01 on chain, the payer −0.01 once, the grant spent, SUCCESS', async () => {
    const { agent, user, grant } = await payer(1);
    const sellerBefore = t.stack.rails.solana.tokenBalance(seller.wallet);
    const buyer = serviceBuyer(t.stack.url, agent.key, grant.key);
    t.stack.rails.solana.advanceBlocks(1);
    const res = await buyer.fetch(`${seller.url}/weather`);
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ forecast: 'sunny' });
    expect(t.stack.rails.solana.tokenBalance(seller.wallet) - sellerBefore).toBe(10_000n);
    expect(buyer.purchases).toHaveLength(1);
    const id = buyer.purchases[0]?.id as string;
    // The reconciler finds the transfer the service signed on chain and captures it, once.
    await reconcile();
    await reconcile();
    const read = await t.call<Purchase>('GET', `/api/v1/agents/x402/purchases/${id}`, { headers: { 'x-agent-key': agent.key } });
    expect(read.body).toMatchObject({ id, status: 'SUCCESS', amount: 0.01, currency: 'USDC', payTo: seller.wallet, grantId: grant.id });
    expect(read.body.transaction).toBe(seller.settled.at(-1)?.transaction);
    expect(await userBalance(user.id)).toBeCloseTo(0.99, 6);
    expect((await grantOf(user.key, grant.id)).spent).toBeCloseTo(0.01, 6);
    const history = await t.call<{ data: Record<string, unknown>[] }>('GET', '/api/v1/users/me/charges', {
      headers: { 'x-user-key': user.key },
    });
    expect(history.body.data[0]).toMatchObject({ id, type: 'x402_purchase', payTo: seller.wallet, status: 'SUCCESS', amount: 0.01 });
    const list = await t.call<{ data: Purchase[] }>('GET', '/api/v1/agents/x402/purchases', { headers: { 'x-agent-key': agent.key } });
    expect(list.body.data.map((p) => p.id)).toEqual([id]);
  });
});
