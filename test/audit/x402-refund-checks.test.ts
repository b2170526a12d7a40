/**
 * The ledger audit's checks of refunds of x402 payments (DESIGN §28), each on its own: a refund is a
 * payout with no fee and no lock, and each payment's refunds that did not fail add up to its
 * `refunded`, never past the payment. A balanced set passes; one change names the break.
 */
import { payoutLockProblems, payoutSplitProblems, x402RefundProblems } from '../../functions/audit/payout-checks';
import type { X402PaymentRow } from '../../functions/store/audit/ledger-rows.chain';
import type { PayoutRow } from '../../functions/store/audit/ledger-rows.payouts';

const refund = (payoutId: string, status: PayoutRow['status'], amount: number, over: Partial<PayoutRow> = {}): PayoutRow => ({
  kind: 'payout',
  payoutId,
  agentId: 'a1',
  status,
  currency: 'USDC',
  amount,
  fee: 0,
  accountCreationFee: 0,
  netAmount: amount,
  refundOf: 'x402_1',
  ...over,
});
const payment = (refunded?: number): X402PaymentRow => ({
  kind: 'x402Payment',
  agentId: 'a1',
  paymentId: 'x402_1',
  amount: 10_000,
  transaction: 'sig1',
  ...(refunded === undefined ? {} : { refunded }),
});

describe('the audit of x402 refunds', () => {
  it('passes refunds that add up to the payment’s refunded, FAILED ones left out, in flight without a lock', () => {
    const refunds = [refund('xr1', 'COMPLETED', 4_000), refund('xr2', 'PROCESSING', 3_000), refund('xr3', 'FAILED', 3_000)];
    expect(x402RefundProblems(refunds, [payment(7_000)])).toEqual([]);
    expect(payoutSplitProblems(refunds)).toEqual([]);
    expect(payoutLockProblems(refunds, [])).toEqual([]);
    expect(x402RefundProblems([], [payment()])).toEqual([]);
  });

  it('names a payment whose refunded disagrees with its refunds, or passes the payment', () => {
    expect(x402RefundProblems([refund('xr1', 'COMPLETED', 4_000)], [payment(3_000)])).toEqual([
      'x402 payment x402_1: refunded says 0.003, its refunds add up to 0.004',
    ]);
    expect(x402RefundProblems([refund('xr1', 'COMPLETED', 11_000)], [payment(11_000)])).toEqual([
      'x402 payment x402_1: refunded 0.011 of a 0.01 payment',
    ]);
  });

  it('names a refund of no payment of its agent, and a refund that took a fee', () => {
    expect(x402RefundProblems([refund('xr1', 'COMPLETED', 1_000, { agentId: 'a2' })], [payment()])).toEqual([
      'refund xr1 of agent a2 names payment x402_1, which is not one of its payments',
    ]);
    expect(payoutSplitProblems([refund('xr1', 'COMPLETED', 1_000, { fee: 30, netAmount: 970 })])).toEqual([
      'refund xr1: 0.001 USDC should pay all of it in USDC with no fee, found fee 0.00003 + net 0.00097',
    ]);
  });
});
