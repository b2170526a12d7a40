/**
 * Issue 29, finding 5: x402 payments were not bound to a seller. Every agent's `payTo` is the one
 * treasury, so a payment a buyer made for one seller verified for every seller (`isValid:true`)
 * and was credited to whichever agent settled it first.
 *
 * The attacker: another enabled agent (or a buyer colluding with one) presenting a payment made for
 * seller A, with A's requirements, with its own, or with none naming a seller. The property: a
 * payment names its seller (the memo the service gives each agent for its middleware's
 * `extra.memo`, which the stock client writes into the transaction and the stock scheme checks),
 * no other agent can verify or settle it, even before A does, and requirements that do not carry
 * the authenticated agent's memo are refused with a reason saying what to send.
 */
import { createKeyPairSignerFromBytes } from '@solana/kit';
import type { PaymentRequirements } from '@x402/core/types';
import { ExactSvmScheme as ExactSvmClient } from '@x402/svm/exact/client';
import bs58 from 'bs58';
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

/** A 0.01 USDC payment the stock client makes for `accepted` (its memo instruction is `accepted.extra.memo`, or a random nonce). */
async function payment(accepted: PaymentRequirements) {
  t.stack.rails.solana.expireBlockhash();
  const created = await buyer.createPaymentPayload(2, accepted);
  return payloadOf(String(created.payload.transaction), accepted);
}

const ask = (path: '/x402/verify' | '/x402/settle', who: Seller, payload: ReturnType<typeof payloadOf>, required: PaymentRequirements) =>
  t.call<Record<string, unknown>>('POST', path, {
    headers: { authorization: `Bearer ${who.key}` },
    body: { x402Version: 2, paymentPayload: payload, paymentRequirements: required },
  });

const usdcBalance = async (who: Seller) =>
  (await t.call<{ balances: { USDC: number } }>('GET', '/api/v1/agents/balance', { headers: { 'x-agent-key': who.key } })).body.balances
    .USDC;

describe('an x402 payment names its seller', () => {
  it('gives each agent a seller memo of its own for its middleware’s extra.memo', async () => {
    expect(a.memo).toEqual(expect.any(String));
    expect(b.memo).toEqual(expect.any(String));
    expect(a.memo).not.toBe(b.memo);
  });

  it('a payment made for seller A is refused to seller B, by verify and by settle, even before A settles; A is paid once', async () => {
    const { solana } = t.stack.rails;
    const forA = requirements(a.memo);
    const paid = await payment(forA);
    const treasuryBefore = solana.tokenBalance(treasury);
    // B presents it with A's requirements, with its own, and with requirements naming no seller.
    const { extra, ...bare } = forA;
    const attempts: PaymentRequirements[] = [
      forA,
      { ...forA, extra: { ...extra, memo: b.memo } },
      { ...bare, extra: { feePayer: treasury } },
    ];
    for (const required of attempts) {
      const verified = await ask('/x402/verify', b, paid, required);
      expect([verified.status, verified.body.isValid]).toEqual([200, false]);
      const settled = await ask('/x402/settle', b, paid, required);
      expect([settled.status, settled.body.success, settled.body.transaction]).toEqual([200, false, '']);
    }
    expect(solana.tokenBalance(treasury)).toBe(treasuryBefore);
    expect(await usdcBalance(b)).toBe(0);

    // A, whose payment it is, settles it.
    expect((await ask('/x402/verify', a, paid, forA)).body).toMatchObject({ isValid: true });
    expect((await ask('/x402/settle', a, paid, forA)).body).toMatchObject({ success: true });
    expect(solana.tokenBalance(treasury) - treasuryBefore).toBe(10_000n);
    expect(await usdcBalance(a)).toBeCloseTo(0.01, 6);
    // And B, asking again afterwards, still gets nothing.
    expect((await ask('/x402/settle', b, paid, { ...forA, extra: { ...extra, memo: b.memo } })).body).toMatchObject({ success: false });
    expect(await usdcBalance(b)).toBe(0);
  });

  it("refuses requirements that do not carry the authenticated agent's memo, saying what to send", async () => {
    const unnamed = requirements(undefined);
    const paid = await payment(unnamed);
    const before = await usdcBalance(a);
    const reason = { invalidReason: 'invalid_seller_memo', invalidMessage: expect.stringContaining(String(a.memo)) };
    expect((await ask('/x402/verify', a, paid, unnamed)).body).toMatchObject({ isValid: false, ...reason });
    expect((await ask('/x402/settle', a, paid, unnamed)).body).toMatchObject({
      success: false,
      errorReason: reason.invalidReason,
      errorMessage: reason.invalidMessage,
      transaction: '',
    });
    // B's memo in A's request is refused the same way.
    const otherMemo = requirements(b.memo);
    expect((await ask('/x402/verify', a, await payment(otherMemo), otherMemo)).body).toMatchObject({ isValid: false, ...reason });
    expect(await usdcBalance(a)).toBe(before);
  });
});
