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
import { railFor } from '../../functions/rails';
import { createReconciler } from '../../functions/reconciler/reconciler';
import { purchaseChain } from '../../functions/x402/purchase-chain';
import { auditAfterAll } from '../support/audit';
import { useTestStack } from '../support/stack';
import { usePurchaseFixture } from '../support/x402';

const t = useTestStack();
const x402 = usePurchaseFixture(t);
auditAfterAll();

type Purchase = { id: string; status: string; paymentPayload: { x402Version: number; payload: { transaction: string } } | null };

const buy = (b: Awaited<ReturnType<typeof x402.buyer>>, paymentRequirements: unknown) => x402.buy<Purchase>(b, paymentRequirements);
const read = (agentKey: string, id: string) => x402.read<Purchase>(agentKey, id);
const balance = (userId: string) => x402.usdcBalance(userId);

it('two purchases of one fixed-memo requirement in one slot: two messages, and one transfer captures only its own', async () => {
  const requirements = await x402.requirements();
  const fixedMemo = { ...requirements, extra: { ...(requirements.extra as object), memo: 'order-42' } };
  const alice = await x402.buyer();
  const bob = await x402.buyer();
  // The local chain's finalized blockhash moves only when a transaction lands: both are signed in one "slot".
  const a = await buy(alice, fixedMemo);
  const b = await buy(bob, fixedMemo);
  expect([a.status, b.status]).toEqual([201, 201]);
  const bPayment = b.body.paymentPayload ?? (await read(bob.agent.key, b.body.id)).body.paymentPayload;
  expect(a.body.paymentPayload).not.toBeNull();
  // Never the same signed message (the same hot wallet signature) for two purchases.
  expect(bPayment?.payload.transaction).not.toBe(a.body.paymentPayload?.payload.transaction);

  // Alice's payment lands (the seller settles it); Bob's is never sent.
  expect((await x402.pay(a.body.paymentPayload, requirements)).status).toBe(200);
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
