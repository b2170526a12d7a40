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
import { createKeyPairSignerFromBytes } from '@solana/kit';
import type { PaymentRequirements } from '@x402/core/types';
import { ExactSvmScheme as ExactSvmClient } from '@x402/svm/exact/client';
import bs58 from 'bs58';
import { resetForTests } from '../../functions/config';
import { expectLedgerBalanced } from '../support/audit';
import { useTestStack } from '../support/stack';
import { payloadOf, requirementsFor } from '../x402/attacker';

interface Seller {
  key: string;
  id: string;
  memo: string | undefined;
}

const t = useTestStack();
let a: Seller;
let b: Seller;
let buyer: ExactSvmClient;
let treasury: string;

async function seller(): Promise<Seller> {
  const agent = await t.enabledAgent();
  const settings = await t.call<{ extra?: { memo?: string } }>('GET', '/api/v1/agents/x402', { headers: { 'x-agent-key': agent.key } });
  return { ...agent, memo: settings.body.extra?.memo };
}

beforeAll(async () => {
  const { solana } = t.stack.rails;
  treasury = solana.hotWallet.publicKey;
  a = await seller();
  b = await seller();
  buyer = new ExactSvmClient(await createKeyPairSignerFromBytes(bs58.decode(solana.demoPayer.secretKey)), { rpcUrl: solana.url });
});
afterEach(async () => {
  await expectLedgerBalanced();
});

const requirements = (memo: string | undefined) => {
  const { solana } = t.stack.rails;
  return requirementsFor({ network: solana.network, mint: solana.mint, treasury, feePayer: treasury, amount: 10_000n, memo });
};

async function payment(accepted: PaymentRequirements) {
  t.stack.rails.solana.expireBlockhash();
  const created = await buyer.createPaymentPayload(2, accepted);
  return payloadOf(String(created.payload.transaction), accepted);
}

const ask = (path: '/x402/verify' | '/x402/settle', who: Seller, payload: ReturnType<typeof payloadOf>, required: PaymentRequirements) =>
  t.call<Record<string, unknown>>('POST', path, {
    headers: { 'x-agent-key': who.key },
    body: { x402Version: 2, paymentPayload: payload, paymentRequirements: required },
  });

const usdcBalance = async (who: Seller) =>
  (await t.call<{ balances: { USDC: number } }>('GET', '/api/v1/agents/balance', { headers: { 'x-agent-key': who.key } })).body.balances
    .USDC;

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
