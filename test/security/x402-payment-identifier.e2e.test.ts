/**
 * The facilitator's `payment-identifier` extension (issue 32, DESIGN §22), attacked. The identifier
 * is the buyer's idempotency key: the same identifier with the same payment answers the first
 * result, so a seller's middleware serves a buyer's retry without a second payment. What an attacker
 * tries with it:
 *   - the identifier of a payment that verified (or settled) with another payment, one that cannot
 *     pay (an unfunded wallet's), to be answered the first `isValid:true` / `success:true` and
 *     served for nothing: 409, nothing verified, sent or credited;
 *   - concurrent settles under one identifier, of the same payment and of two different ones: one
 *     payment credited, once, and one transfer on chain;
 *   - a `schema` in the extension whose pattern backtracks (the stock `validatePaymentIdentifier`
 *     compiles the payload's schema with ajv: `^(a|a)+$` on a 31-character id ran past a minute):
 *     answered at once.
 */
import { randomUUID } from 'node:crypto';
import { Keypair } from '@solana/web3.js';
import type { PaymentPayload } from '@x402/core/types';
import { PAYMENT_IDENTIFIER } from '@x402/extensions/payment-identifier';
import { expectLedgerBalanced } from '../support/audit';
import { useTestStack } from '../support/stack';
import { type FacilitatorSeller, useFacilitatorFixture } from '../support/x402';

const t = useTestStack();
const x402 = useFacilitatorFixture(t);
let seller: FacilitatorSeller;
let treasury: string;

beforeAll(async () => {
  seller = await x402.seller();
  treasury = x402.treasury;
});
afterEach(async () => {
  await expectLedgerBalanced();
});

const newId = () => `pay_redteam_${randomUUID().replaceAll('-', '')}`;

/**
 * A payment of `amount` micro-USDC from `from` (the chain's demo payer unless given) to the seller
 * carrying identifier `id`, under a fresh blockhash unless `sameBlockhash` (moving it on expires
 * every payment made before).
 */
async function payment(id: string, amount: bigint, from?: Keypair, sameBlockhash = false): Promise<PaymentPayload> {
  const payload = await x402.craftedPayment({ memo: seller.memo, amount, ...(from ? { from } : {}), sameBlockhash });
  return { ...payload, extensions: { [PAYMENT_IDENTIFIER]: { info: { required: false, id } } } };
}

const ask = (path: '/x402/verify' | '/x402/settle', payload: PaymentPayload) => x402.ask(path, seller, payload, payload.accepted, 'bearer');

const usdcBalance = () => x402.usdcBalance(seller);

describe('payment identifiers cannot be replayed onto another payment', () => {
  it("refuses a verified payment's identifier on a payment that cannot pay: 409, nothing verified, sent or credited", async () => {
    const id = newId();
    const paid = await payment(id, 10_000n);
    expect((await ask('/x402/verify', paid)).body).toMatchObject({ isValid: true });

    // An unfunded wallet's payment of the same price, under the identifier that verified.
    const unfunded = await payment(id, 10_000n, Keypair.generate());
    const verified = await ask('/x402/verify', unfunded);
    const treasuryBefore = t.stack.rails.solana.tokenBalance(treasury);
    const settled = await ask('/x402/settle', unfunded);

    expect(verified.status).toBe(409);
    expect(verified.body).toEqual({ error: 'this payment identifier was used with another payment' });
    expect(settled.status).toBe(409);
    expect(settled.body).toEqual({ error: 'this payment identifier was used with another payment' });
    expect(t.stack.rails.solana.tokenBalance(treasury)).toBe(treasuryBefore);
    expect(await usdcBalance()).toBe(0);
  });

  it("refuses a settled payment's identifier on another payment, and a larger one: nothing credited or sent again", async () => {
    const id = newId();
    const first = await ask('/x402/settle', await payment(id, 10_000n));
    expect(first.body).toMatchObject({ success: true });
    const balance = await usdcBalance();
    const treasuryBefore = t.stack.rails.solana.tokenBalance(treasury);

    for (const amount of [10_000n, 50_000n]) {
      const other = await payment(id, amount);
      expect((await ask('/x402/settle', other)).status).toBe(409);
      expect((await ask('/x402/verify', other)).status).toBe(409);
    }

    expect(t.stack.rails.solana.tokenBalance(treasury)).toBe(treasuryBefore);
    expect(await usdcBalance()).toBe(balance);
  });

  it('credits one payment once when settles under one identifier race, of the same payment and of another', async () => {
    const id = newId();
    const one = await payment(id, 10_000n);
    const two = await payment(id, 20_000n, undefined, true);
    const balance = await usdcBalance();
    const treasuryBefore = t.stack.rails.solana.tokenBalance(treasury);

    const answers = await Promise.all([one, two, one, two, one, two].map((p) => ask('/x402/settle', p)));

    const credited = BigInt(Math.round(((await usdcBalance()) - balance) * 1e6));
    // Whichever payment bound the identifier first is the one paid; the other is refused, whole.
    expect([10_000n, 20_000n]).toContain(credited);
    expect(t.stack.rails.solana.tokenBalance(treasury) - treasuryBefore).toBe(credited);
    const winner = credited === 10_000n ? [0, 2, 4] : [1, 3, 5];
    answers.forEach((answer, i) => {
      if (winner.includes(i)) expect([200, 409]).toContain(answer.status);
      else expect(answer.status).toBe(409);
    });
    // Asked again once the race is over, the winner is answered the one credit.
    const again = await ask('/x402/settle', credited === 10_000n ? one : two);
    expect(again.body).toMatchObject({ success: true });
    expect(BigInt(Math.round(((await usdcBalance()) - balance) * 1e6))).toBe(credited);
  });

  it("answers at once a payment whose extension carries a schema that backtracks (the buyer's schema is never compiled)", async () => {
    const payload = await payment('a'.repeat(30), 10_000n);
    const evil = {
      ...payload,
      extensions: {
        [PAYMENT_IDENTIFIER]: {
          info: { required: false, id: `${'a'.repeat(40)}_` },
          schema: { type: 'object', properties: { id: { type: 'string', pattern: '^(a|a)+$' } } },
        },
      },
    };
    const started = Date.now();
    const verified = await ask('/x402/verify', evil);
    expect(Date.now() - started).toBeLessThan(5_000);
    expect(verified.body).toMatchObject({ isValid: true });
  });
});
