/**
 * Attacker: an x402 seller whose requirements carry a fixed `extra.memo` (an "order id" it never
 * changes), and agents buying from it. The transaction a purchase signs is then built from nothing
 * but the requirements and the service's latest finalized blockhash: two purchases of the same
 * requirements in the same slot (two agents of two payers, or one agent twice) are the very same
 * message, and the hot wallet's ed25519 signature of it the very same bytes. The service finds a
 * purchase's transfer by that signature, so one transfer landed for the one message captured BOTH
 * purchases: each payer charged, the hot wallet paying once — a payer charged for a payment that
 * was never made (the seller's second settle is refused by the chain as a duplicate).
 *
 * Property: no two purchases ever hold the same hot wallet signature; one transfer on chain
 * captures exactly one purchase, and the payer pays exactly once for it.
 */
import { randomUUID } from 'node:crypto';
import { railFor } from '../../functions/rails';
import { createReconciler } from '../../functions/reconciler/reconciler';
import { purchaseChain } from '../../functions/x402/purchase-signer';
import { auditAfterAll } from '../support/audit';
import { useTestStack } from '../support/stack';
import { type StockSeller, startStockSeller } from '../x402/stock-seller';

const t = useTestStack();
let seller: StockSeller;
beforeAll(async () => {
  t.stack.rails.solana.mintTo(t.stack.rails.solana.hotWallet.publicKey, 10_000_000n);
  seller = await startStockSeller(t.stack.rails.solana, '$0.01');
});
afterAll(async () => seller?.close());
auditAfterAll();

type Purchase = { id: string; status: string; paymentPayload: { x402Version: number; payload: { transaction: string } } | null };

async function buyer() {
  const agent = await t.enabledAgent();
  const user = await t.fundedUser({ USDC: 1 });
  const grant = await t.call<{ key: string }>('POST', '/api/v1/users/me/grants', {
    headers: { 'x-user-key': user.key },
    body: { agentId: agent.id, currency: 'USDC', limits: { total: 5 } },
  });
  expect(grant.status).toBe(201);
  return { agent, user, grantKey: grant.body.key };
}

const buy = (b: Awaited<ReturnType<typeof buyer>>, paymentRequirements: unknown) =>
  t.call<Purchase>('POST', '/api/v1/agents/x402/purchases', {
    headers: { 'x-agent-key': b.agent.key, 'x-user-key': b.grantKey, 'idempotency-key': randomUUID() },
    body: { x402Version: 2, paymentRequirements },
  });
const read = (agentKey: string, id: string) =>
  t.call<Purchase>('GET', `/api/v1/agents/x402/purchases/${id}`, { headers: { 'x-agent-key': agentKey } });
const balance = async (userId: string) =>
  (await t.call<{ balances: { USDC: number } }>('GET', `/api/v1/admin/users/${userId}`, { headers: t.admin })).body.balances.USDC;

it('two purchases of one fixed-memo requirement in one slot: two messages, and one transfer captures only its own', async () => {
  t.stack.rails.solana.advanceBlocks(1);
  const res = await fetch(`${seller.url}/weather`);
  const requirements = JSON.parse(Buffer.from(res.headers.get('payment-required') ?? '', 'base64').toString('utf8')).accepts[0];
  const fixedMemo = { ...requirements, extra: { ...requirements.extra, memo: 'order-42' } };
  const alice = await buyer();
  const bob = await buyer();
  // The local chain's finalized blockhash moves only when a transaction lands: both are signed in one "slot".
  const a = await buy(alice, fixedMemo);
  const b = await buy(bob, fixedMemo);
  expect([a.status, b.status]).toEqual([201, 201]);
  const bPayment = b.body.paymentPayload ?? (await read(bob.agent.key, b.body.id)).body.paymentPayload;
  expect(a.body.paymentPayload).not.toBeNull();
  // Never the same signed message (the same hot wallet signature) for two purchases.
  expect(bPayment?.payload.transaction).not.toBe(a.body.paymentPayload?.payload.transaction);

  // Alice's payment lands (the seller settles it); Bob's is never sent.
  const header = Buffer.from(
    JSON.stringify({ ...a.body.paymentPayload, resource: { url: `${seller.url}/weather` }, accepted: requirements }),
  ).toString('base64');
  expect((await fetch(`${seller.url}/weather`, { headers: { 'payment-signature': header } })).status).toBe(200);
  await createReconciler({ railFor, purchaseChain })();
  expect((await read(alice.agent.key, a.body.id)).body.status).toBe('SUCCESS');
  expect((await read(bob.agent.key, b.body.id)).body.status).not.toBe('SUCCESS');
  expect(await balance(alice.user.id)).toBeCloseTo(0.99, 6);
  // Bob's purchase gets its own payment on a later blockhash; never sent, it expires and his hold comes back.
  const bobs = (await read(bob.agent.key, b.body.id)).body.paymentPayload;
  expect(bobs).not.toBeNull();
  expect(bobs?.payload.transaction).not.toBe(a.body.paymentPayload?.payload.transaction);
  t.stack.rails.solana.expireBlockhash();
  await createReconciler({ railFor, purchaseChain })();
  expect((await read(bob.agent.key, b.body.id)).body.status).toBe('EXPIRED');
  expect(await balance(bob.user.id)).toBe(1);
});
