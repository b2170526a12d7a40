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
import { reconcilePurchases } from '../../functions/use-cases/x402-purchases/purchase-reconcile';
import { purchaseChain } from '../../functions/x402/purchase-chain';
import { auditAfterAll } from '../support/audit';
import { useTestStack } from '../support/stack';
import { usePurchaseFixture } from '../support/x402';

const t = useTestStack({}, { payouts: { reconcileIntervalMs: 3_600_000 } });
const x402 = usePurchaseFixture(t);
auditAfterAll();

type Purchase = { id: string; status: string; paymentPayload: Record<string, unknown> | null };

it('a landed transfer listed by a lagging node: never released, captured once the listing is current', async () => {
  const buyer = await x402.buyer();
  const solana = t.stack.rails.solana;
  const accepted = await x402.requirements();
  const made = await x402.buy<Purchase>(buyer, accepted);
  expect(made.status).toBe(201);
  expect((await x402.pay(made.body.paymentPayload, accepted)).status).toBe(200);
  solana.expireBlockhash();
  const read = async () => (await x402.read<Purchase>(buyer.agent.key, made.body.id)).body;
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
  // Not reached this time, it waits a minute before it is due again (DESIGN §24): a run after that.
  const later = new Date(Date.now() + 2 * 60_000);
  expect(await reconcilePurchases(await purchaseChain(), { now: later })).toMatchObject({ captured: 1, expired: 0 });
  expect((await read()).status).toBe('SUCCESS');
  expect(await x402.usdcBalance(buyer.user.id)).toBeCloseTo(0.99, 6);
});
