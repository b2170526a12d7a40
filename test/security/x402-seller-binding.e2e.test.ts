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
import type { PaymentRequirements } from '@x402/core/types';
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
// This file's seller sends its key as the stock middleware does: `Authorization: Bearer`.
const ask = (
  path: '/x402/verify' | '/x402/settle',
  who: Seller,
  payload: Awaited<ReturnType<typeof payment>>,
  required: PaymentRequirements,
) => x402.ask(path, who, payload, required, 'bearer');
const usdcBalance = (who: Seller) => x402.usdcBalance(who);

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
