/**
 * The receipt links of the views (contracts/views.ts, DESIGN §27) are there exactly when the record
 * has a receipt (core/receipts.ts, what GET /api/v1/receipts/{id} signs), for every status a charge,
 * a purchase or a payout can be in, and name that receipt's id; a body given no address (an event)
 * has none.
 */
import { receiptUrlOf } from '../../functions/contracts/responses/receipts';
import { chargeView, payoutView, purchaseView, userChargeView } from '../../functions/contracts/views';
import type { Charge, ChargeStatus } from '../../functions/core/charges';
import type { Payout, PayoutStatus } from '../../functions/core/payouts';
import { purchaseIdOf } from '../../functions/core/purchases';
import { chargeReceiptFacts, payoutReceiptFacts, refundReceiptFacts } from '../../functions/core/receipts';

const BASE = 'https://pay.example.com';
const STATUSES: ChargeStatus[] = ['PENDING', 'SUCCESS', 'FAILED', 'EXPIRED'];

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

const PURCHASE: Charge = {
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
  },
};

/** The receipt id `url` links, or undefined when there is no link. */
const linked = (url: string | undefined) =>
  url === undefined ? undefined : decodeURIComponent(url.slice(`${BASE}/api/v1/receipts/`.length));

describe('receipt links in the views', () => {
  it('a charge: receiptUrl iff it has a receipt, refundReceiptUrl iff its refunds have one, each naming that receipt', () => {
    for (const status of STATUSES) {
      for (const refundedAmount of [undefined, 0, 1, 1050]) {
        const charge: Charge = { ...CHARGE, status, ...(refundedAmount === undefined ? {} : { refundedAmount }) };
        for (const view of [chargeView(charge, BASE), userChargeView(charge, BASE)]) {
          const links = view as { receiptUrl?: string; refundReceiptUrl?: string };
          expect([status, refundedAmount, linked(links.receiptUrl)]).toEqual([
            status,
            refundedAmount,
            chargeReceiptFacts({ charge }, charge.id)?.id,
          ]);
          expect([status, refundedAmount, linked(links.refundReceiptUrl)]).toEqual([
            status,
            refundedAmount,
            refundReceiptFacts({ charge })?.id,
          ]);
        }
      }
    }
  });

  it('a purchase: its receipt under its xp… id once captured, in its own view and in the payer’s history; never a refund link', () => {
    const xp = purchaseIdOf(PURCHASE.id);
    for (const status of STATUSES) {
      const charge: Charge = { ...PURCHASE, status, refundedAmount: 0 };
      const expected = chargeReceiptFacts({ charge }, xp)?.id;
      expect([status, linked(purchaseView(charge, BASE).receiptUrl)]).toEqual([status, expected]);
      const history = userChargeView(charge, BASE) as { receiptUrl?: string; refundReceiptUrl?: string };
      expect([status, linked(history.receiptUrl), history.refundReceiptUrl]).toEqual([status, expected, undefined]);
    }
    expect(purchaseView({ ...PURCHASE, status: 'SUCCESS' }, BASE).receiptUrl).toBe(
      receiptUrlOf('x402_purchase', purchaseIdOf(PURCHASE.id), BASE),
    );
  });

  it('a payout: its receipt once COMPLETED, never before', () => {
    const payout = {
      id: 'p01jabcdefghjkmnpqrstvwxyz0',
      agentId: 'a1',
      currency: 'USD',
      network: 'PAYPAL',
      walletAddress: 'a@b.c',
      amount: 1000,
      fee: 30,
      netAmount: 970,
      accountCreationFee: 0,
      createdAt: 'c',
      updatedAt: 'u',
    } as Payout;
    for (const status of ['PENDING', 'PROCESSING', 'HELD', 'COMPLETED', 'FAILED'] as PayoutStatus[]) {
      const view = payoutView({ ...payout, status }, BASE);
      expect([status, linked(view.receiptUrl)]).toEqual([status, payoutReceiptFacts({ ...payout, status })?.id]);
    }
  });

  it('no address (an event’s body): no links at all, the body as it always was', () => {
    const refunded: Charge = { ...CHARGE, refundedAmount: 100 };
    expect(chargeView(refunded, undefined)).not.toHaveProperty('receiptUrl');
    expect(chargeView(refunded, undefined)).not.toHaveProperty('refundReceiptUrl');
    expect(purchaseView(PURCHASE, undefined)).not.toHaveProperty('receiptUrl');
  });
});
