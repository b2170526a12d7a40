/**
 * Issue 29: `/x402/verify` said `isValid:true` for a payment that was already settled (and for one
 * being settled), so a seller's middleware served the resource again for a payment that could not
 * pay it again: a buyer replaying a `PAYMENT-SIGNATURE`, or showing one payment to several sellers.
 *
 * The attacker: a buyer presenting a payment after it was claimed. The property: verify refuses a
 * payment already claimed (PENDING or CREDITED), found without any key by the transaction's message,
 * for its own seller and for any other; a claim whose transaction has not landed yet is still
 * finished once by its settle.
 */
import type { PaymentRequirements } from '@x402/core/types';
import { resetForTests } from '../../functions/config';
import { expectLedgerBalanced } from '../support/audit';
import { useTestStack } from '../support/stack';
import { type FacilitatorSeller as Seller, useFacilitatorFixture } from '../support/x402';

const t = useTestStack();
const x402 = useFacilitatorFixture(t);
let a: Seller;
let b: Seller;
let treasury: string;

beforeAll(async () => {
  treasury = x402.treasury;
  a = await x402.seller();
  b = await x402.seller();
});
afterEach(async () => {
  await expectLedgerBalanced();
});

const requirements = (memo: string | undefined) => x402.requirements(memo);
const payment = (accepted: PaymentRequirements) => x402.payment(accepted);
const ask = (
  path: '/x402/verify' | '/x402/settle',
  who: Seller,
  payload: Awaited<ReturnType<typeof payment>>,
  required: PaymentRequirements,
) => x402.ask(path, who, payload, required, 'x-agent-key');
const usdcBalance = (who: Seller) => x402.usdcBalance(who);

describe('verify refuses a payment already claimed', () => {
  it('once it is settled: for its seller (a replayed PAYMENT-SIGNATURE) and for any other agent', async () => {
    const forA = requirements(a.memo);
    const paid = await payment(forA);
    expect((await ask('/x402/verify', a, paid, forA)).body).toMatchObject({ isValid: true });
    expect((await ask('/x402/settle', a, paid, forA)).body).toMatchObject({ success: true });

    expect((await ask('/x402/verify', a, paid, forA)).body).toMatchObject({ isValid: false, invalidReason: 'duplicate_settlement' });
    const forB = { ...forA, extra: { ...forA.extra, memo: b.memo } };
    expect((await ask('/x402/verify', b, paid, forB)).body).toMatchObject({ isValid: false });
    expect(await usdcBalance(a)).toBeCloseTo(0.01, 6);
    expect(await usdcBalance(b)).toBe(0);
  });

  it('while its settle is in flight (claimed, not on chain yet); the settle then finishes it once', async () => {
    const { solana } = t.stack.rails;
    const forA = requirements(a.memo);
    const paid = await payment(forA);
    const before = await usdcBalance(a);
    const treasuryBefore = solana.tokenBalance(treasury);
    // The RPC refuses the send: the claim is written, the transaction is not on chain.
    solana.failNext('sendTransaction');
    const first = await ask('/x402/settle', a, paid, forA);
    const verified = await ask('/x402/verify', a, paid, forA);
    expect(verified.body).toMatchObject({ isValid: false, invalidReason: 'duplicate_settlement' });
    // The seller is told to ask again (its payment is claimed), not that it failed.
    expect(first.body).toMatchObject({ success: false, errorReason: 'settlement_pending', transaction: '' });
    expect(solana.tokenBalance(treasury)).toBe(treasuryBefore);

    // The seller asks again, and the retry lands in another container (the facilitators rebuilt:
    // nothing admitted to the signing gate there): checked again, sent, confirmed, credited once.
    resetForTests();
    expect((await ask('/x402/settle', a, paid, forA)).body).toMatchObject({ success: true });
    expect((await ask('/x402/settle', a, paid, forA)).body).toMatchObject({ success: true });
    expect(solana.tokenBalance(treasury) - treasuryBefore).toBe(10_000n);
    expect(await usdcBalance(a)).toBeCloseTo(before + 0.01, 6);
  });
});
