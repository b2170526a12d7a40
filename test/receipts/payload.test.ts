/**
 * What each settled record signs to (core/receipts.ts): the payload fields of DESIGN §27 exactly,
 * amounts as decimal strings, and nothing for a record that has not settled.
 */
import { receiptUrlOf } from '../../functions/contracts/responses/receipts';
import type { Charge } from '../../functions/core/charges';
import type { Payout } from '../../functions/core/payouts';
import {
  chargeIdOfRefundReceipt,
  chargeReceiptFacts,
  payoutReceiptFacts,
  refundReceiptFacts,
  refundReceiptId,
  topupReceiptFacts,
  x402PaymentReceiptFacts,
  x402RefundReceiptFacts,
} from '../../functions/core/receipts';
import type { Topup } from '../../functions/core/topups';

const CHARGE: Charge = {
  id: 'c01jabcdefghjkmnpqrstvwxyz0a01jabcdefghjkmnpqrstvwxyz0',
  agentId: 'a01jabcdefghjkmnpqrstvwxyz0',
  userId: 'u01jabcdefghjkmnpqrstvwxyz0',
  idempotencyKey: 'k',
  amount: 1050,
  currency: 'USD',
  description: 'd',
  status: 'SUCCESS',
  createdAt: '2026-11-29T10:00:00.000Z',
};

describe('receipt payloads', () => {
  it('a charge: the payer paid the agent, its captured amount as a decimal string, settled when captured', () => {
    expect(chargeReceiptFacts({ charge: { ...CHARGE, grantId: 'g1' }, settledAt: '2026-11-29T10:01:00.000Z' }, CHARGE.id)).toEqual({
      v: 1,
      type: 'charge',
      id: CHARGE.id,
      amount: '10.5',
      currency: 'USD',
      payer: { kind: 'user', id: CHARGE.userId },
      payee: { kind: 'agent', id: CHARGE.agentId },
      status: 'SUCCESS',
      settledAt: '2026-11-29T10:01:00.000Z',
      grantId: 'g1',
    });
    expect(chargeReceiptFacts({ charge: CHARGE }, CHARGE.id)?.settledAt).toBe(CHARGE.createdAt);
  });

  it('nothing for a charge that is not captured', () => {
    for (const status of ['PENDING', 'FAILED', 'EXPIRED'] as const)
      expect(chargeReceiptFacts({ charge: { ...CHARGE, status } }, CHARGE.id)).toBeUndefined();
  });

  it('an x402 purchase: the payer paid the seller’s address, with the transaction and the resource', () => {
    const purchase: Charge = {
      ...CHARGE,
      currency: 'USDC',
      amount: 10_000,
      purchase: {
        requirements: {
          scheme: 'exact',
          network: 'solana:x',
          asset: 'm',
          amount: '10000',
          payTo: 'Seller111',
          maxTimeoutSeconds: 60,
          extra: { feePayer: 'f' },
        },
        resource: { url: 'https://api.example.com/x' },
        transaction: 'sig1',
      },
    };
    expect(chargeReceiptFacts({ charge: purchase, settledAt: 't' }, 'xp1')).toMatchObject({
      type: 'x402_purchase',
      id: 'xp1',
      amount: '0.01',
      payee: { kind: 'solana', id: 'Seller111' },
      transaction: 'sig1',
      resource: 'https://api.example.com/x',
    });
  });

  it('a refund: the total refunded, from the agent to the payer, under the charge id with .refund', () => {
    expect(refundReceiptFacts({ charge: CHARGE })).toBeUndefined();
    expect(refundReceiptFacts({ charge: { ...CHARGE, refundedAmount: 250 }, refundedAt: 'r' })).toEqual({
      v: 1,
      type: 'refund',
      id: `${CHARGE.id}.refund`,
      amount: '2.5',
      currency: 'USD',
      payer: { kind: 'agent', id: CHARGE.agentId },
      payee: { kind: 'user', id: CHARGE.userId },
      status: 'COMPLETED',
      settledAt: 'r',
    });
    expect(chargeIdOfRefundReceipt(refundReceiptId(CHARGE.id))).toBe(CHARGE.id);
    expect(chargeIdOfRefundReceipt(CHARGE.id)).toBeUndefined();
  });

  it('an x402 payment credited, a completed payout and a completed top-up', () => {
    expect(
      x402PaymentReceiptFacts({
        id: 'x402_1',
        agentId: 'a1',
        amount: 1_500_000,
        payer: 'Buyer',
        transaction: 'tx',
        network: 'n',
        resource: null,
        createdAt: 'c',
      }),
    ).toEqual({
      v: 1,
      type: 'x402_payment',
      id: 'x402_1',
      amount: '1.5',
      currency: 'USDC',
      payer: { kind: 'solana', id: 'Buyer' },
      payee: { kind: 'agent', id: 'a1' },
      status: 'CREDITED',
      settledAt: 'c',
      transaction: 'tx',
    });
    const payout = {
      id: 'p1',
      agentId: 'a1',
      currency: 'USD',
      status: 'COMPLETED',
      network: 'PAYPAL',
      walletAddress: 'a@b.c',
      amount: 1000,
      processedAt: 'done',
      externalId: 'pp1',
    } as Payout;
    expect(payoutReceiptFacts(payout)).toMatchObject({
      type: 'payout',
      amount: '10',
      payee: { kind: 'paypal', id: 'a@b.c' },
      settledAt: 'done',
      transaction: 'pp1',
    });
    expect(payoutReceiptFacts({ ...payout, status: 'PROCESSING' })).toBeUndefined();
    const topup = {
      id: 't1',
      userId: 'u1',
      currency: 'USD',
      status: 'COMPLETED',
      amount: 500,
      completedAt: 'w',
      externalId: 'cap',
    } as Topup;
    expect(topupReceiptFacts(topup)).toMatchObject({
      type: 'topup',
      amount: '5',
      payer: { kind: 'user', id: 'u1' },
      payee: { kind: 'balance', id: 'u1' },
      settledAt: 'w',
    });
    expect(topupReceiptFacts({ ...topup, status: 'PENDING' } as Topup)).toBeUndefined();
  });

  it('a refund of an x402 payment: the payment’s receipt reversed, under its own xr id, once COMPLETED', () => {
    const refund = {
      id: 'xr01jabcdefghjkmnpqrstvwxyz',
      agentId: 'a1',
      currency: 'USDC',
      status: 'COMPLETED',
      network: 'SOL',
      walletAddress: 'Buyer',
      amount: 4_000,
      fee: 0,
      accountCreationFee: 0,
      netAmount: 4_000,
      idempotencyKey: 'k',
      createdAt: 'made',
      updatedAt: 'updated',
      processedAt: 'paid',
      attempts: 1,
      txHash: 'sig',
      paymentId: 'x402_1',
    } as Payout;
    expect(x402RefundReceiptFacts(refund)).toEqual({
      v: 1,
      type: 'refund',
      id: 'xr01jabcdefghjkmnpqrstvwxyz',
      amount: '0.004',
      currency: 'USDC',
      payer: { kind: 'agent', id: 'a1' },
      payee: { kind: 'solana', id: 'Buyer' },
      status: 'COMPLETED',
      settledAt: 'paid',
      transaction: 'sig',
    });
    for (const status of ['PENDING', 'PROCESSING', 'FAILED'] as const)
      expect(x402RefundReceiptFacts({ ...refund, status })).toBeUndefined();
    // Paid as a payout, but never a payout's receipt; and a withdrawal is never a refund's.
    expect(payoutReceiptFacts(refund)).toBeUndefined();
    const { paymentId: _, ...withdrawal } = refund;
    expect(x402RefundReceiptFacts(withdrawal)).toBeUndefined();
    // Its receipt id is its own: refundReceiptId and receiptUrlOf leave an xr id as it is.
    expect(refundReceiptId(refund.id)).toBe(refund.id);
    expect(chargeIdOfRefundReceipt(refund.id)).toBeUndefined();
    expect(receiptUrlOf('refund', refund.id)).toBe(`/api/v1/receipts/${refund.id}`);
  });

  it('receiptUrlOf links a movement’s receipt: absolute on the API’s base, a refund under its charge’s id', () => {
    expect(receiptUrlOf('charge', CHARGE.id, 'https://pay.example.com')).toBe(`https://pay.example.com/api/v1/receipts/${CHARGE.id}`);
    expect(receiptUrlOf('refund', CHARGE.id, 'https://pay.example.com')).toBe(
      `https://pay.example.com/api/v1/receipts/${CHARGE.id}.refund`,
    );
    expect(receiptUrlOf('topup', 't1')).toBe('/api/v1/receipts/t1');
  });
});
