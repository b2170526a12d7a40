/**
 * Attack (or bad luck): the Solana RPC URL is a load balancer over several nodes and one lags. A
 * seller lands a purchase's transfer late in its blockhash's life; the reconciler reads the
 * finalized block height from an up-to-date node (past the payment's last valid height) and then
 * lists the hot wallet token account's signatures on the lagging node, which has not seen the block
 * holding the transfer. Before, the search took that listing as the whole history ("exhausted")
 * and released the hold: the payer got the USDC back while the hot wallet's USDC had gone to the
 * seller. The local chain's `lagNext` answers the next listings from a node far behind the tip.
 *
 * Property: a purchase whose transfer landed is never released, whichever node answers which call;
 * it waits while the listing comes from a node behind the finalized tip, and is captured once.
 */
import { reconcilePurchases } from '../../functions/use-cases/purchases';
import { purchaseChain } from '../../functions/x402/purchase-signer';
import { auditAfterAll } from '../support/audit';
import { useTestStack } from '../support/stack';
import { type StockSeller, startStockSeller } from '../x402/stock-seller';

const t = useTestStack({}, { payouts: { reconcileIntervalMs: 3_600_000 } });
let seller: StockSeller;
beforeAll(async () => {
  t.stack.rails.solana.mintTo(t.stack.rails.solana.hotWallet.publicKey, 10_000_000n);
  seller = await startStockSeller(t.stack.rails.solana, '$0.01');
});
afterAll(async () => seller?.close());
auditAfterAll();

type Purchase = { id: string; status: string; paymentPayload: Record<string, unknown> | null };

it('a landed transfer listed by a lagging node: never released, captured once the listing is current', async () => {
  const agent = await t.enabledAgent();
  const user = await t.fundedUser({ USDC: 1 });
  const solana = t.stack.rails.solana;
  solana.advanceBlocks(1);
  const res = await fetch(`${seller.url}/weather`);
  const accepted = JSON.parse(Buffer.from(res.headers.get('payment-required') ?? '', 'base64').toString('utf8')).accepts[0];
  const made = await t.call<Purchase>('POST', '/api/v1/agents/x402/purchases', {
    headers: { 'x-agent-key': agent.key, 'x-user-key': user.key, 'idempotency-key': `lag-${Date.now()}` },
    body: { x402Version: 2, paymentRequirements: accepted },
  });
  expect(made.status).toBe(201);
  const header = Buffer.from(
    JSON.stringify({ ...made.body.paymentPayload, resource: { url: `${seller.url}/weather` }, accepted }),
  ).toString('base64');
  expect((await fetch(`${seller.url}/weather`, { headers: { 'payment-signature': header } })).status).toBe(200);
  solana.expireBlockhash();
  const read = async () =>
    (await t.call<Purchase>('GET', `/api/v1/agents/x402/purchases/${made.body.id}`, { headers: { 'x-agent-key': agent.key } })).body;
  // The listing comes from a node 10,000 blocks behind: it has not seen the transfer.
  solana.lagNext('getSignaturesForAddress', 10_000, 1);
  const listed = await reconcilePurchases(await purchaseChain()).catch(() => undefined);
  expect(listed?.expired ?? 0).toBe(0);
  expect((await read()).status).toBe('PENDING');
  // The listing is current, but the transfer's own read reaches the lagging node: "unknown" proves nothing.
  solana.lagNext('getTransaction', 10_000, 1);
  const fetched = await reconcilePurchases(await purchaseChain()).catch(() => undefined);
  expect(fetched?.expired ?? 0).toBe(0);
  expect((await read()).status).toBe('PENDING');
  expect(await reconcilePurchases(await purchaseChain())).toMatchObject({ captured: 1, expired: 0 });
  expect((await read()).status).toBe('SUCCESS');
  const balances = await t.call<{ balances: { USDC: number } }>('GET', `/api/v1/admin/users/${user.id}`, { headers: t.admin });
  expect(balances.body.balances.USDC).toBeCloseTo(0.99, 6);
});
