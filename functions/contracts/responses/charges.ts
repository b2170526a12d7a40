/**
 * The response bodies of charges (docs/lifecycle.md), as the agent and as the payer see them,
 * registered as components (contracts/response.schemas.ts has the registry and the atoms).
 */
import * as z from 'zod';
import { amount, component, currency, id, timestamp } from '../response.schemas';
import { receiptLink } from './receipts';

/** A charge's id, or an x402 purchase's (`xp…`): the id a client sees for a purchase's hold (contracts/views.ts). */
const CHARGE_OR_PURCHASE_ID = /^(c[0-9a-z]{26}(a[0-9a-z]{26})?|xp[0-9a-z]{26}a[0-9a-z]{26})$/;

export const chargeBody = component(
  'Charge',
  z.strictObject({
    id: z
      .string()
      .regex(CHARGE_OR_PURCHASE_ID)
      .meta({
        description:
          'Charge id, opaque to clients: "c" + a lower-case ULID + the id of the agent it was made for (54 characters); charges made before 2026-11-24 have ids without the agent part (27 characters). Both forms sort by creation. An x402 purchase (DESIGN §22) is named by its own id (`xp…`), never the hold\'s behind it.',
        examples: ['c01jhx3k6v1f8q2n7c9m4p5r6s7a01jhx2z9e4w7q1m3v8b6n5k2d0'],
      }),
    idempotencyKey: z.string().meta({ description: 'The Idempotency-Key the charge was created with.' }),
    amount: amount('The amount charged.'),
    currency,
    description: z.string(),
    status: z.enum(['PENDING', 'SUCCESS', 'FAILED', 'EXPIRED']).meta({
      description:
        "PENDING: the amount is held, waiting for the user's approval or the agent's capture (pendingReason). SUCCESS: the agent " +
        'was paid (refunds may give some back: refundedAmount). FAILED: refused, declined or released (failureReason; kept, ' +
        'listed). EXPIRED: nobody acted before expiresAt; the hold went back to the user.',
    }),
    createdAt: timestamp,
    failureReason: z.string().nullable().meta({ description: "Why a FAILED charge failed (the refusal's exact error); else null." }),
    pendingReason: z.enum(['user_approval', 'capture']).nullable().meta({ description: 'Why a PENDING charge waits; else null.' }),
    expiresAt: timestamp.nullable().meta({ description: 'When a PENDING charge expires; else null.' }),
    authorizedAmount: amount(
      'Holds (`capture: false`): the amount authorized and held; `amount` is what was captured once SUCCESS. Null for other charges.',
    ).nullable(),
    refundedAmount: amount('What refunds gave back to the user so far, cumulative (0 when none).'),
    grantId: id('g', 'Grant')
      .optional()
      .meta({ description: 'The grant whose key made the charge; absent on charges made with the account key.' }),
    receiptUrl: receiptLink(
      "Once SUCCESS: the charge's receipt (`GET /api/v1/receipts/{id}`, type `charge`; an x402 purchase's, type " +
        '`x402_purchase`, under its `xp…` id), a signed record either party reads with its own key (docs/receipts.md). ' +
        'Absent while the charge has not settled, and on a FAILED or EXPIRED one.',
      'c01jhx3k6v1f8q2n7c9m4p5r6s7',
    ),
    refundReceiptUrl: receiptLink(
      'Once refunds gave some of the charge back (`refundedAmount` > 0): the receipt of its refunds (type `refund`, id ' +
        '`<chargeId>.refund`), stating the total refunded as of the latest refund. Absent before any refund.',
      'c01jhx3k6v1f8q2n7c9m4p5r6s7.refund',
    ),
  }),
);

export const pendingChargeBody = component(
  'PendingCharge',
  chargeBody.extend({
    approvalUrl: z
      .url()
      .nullable()
      .meta({
        description:
          'A single-use page where the user approves or declines; hand it to the user. Never stored in clear. Null on a charge made ' +
          'with a grant key: the link reaches only the payer (their charge.approval_requested webhook and PENDING history).',
      }),
  }),
);

export const userChargeBody = component(
  'UserCharge',
  chargeBody.extend({
    id: z
      .string()
      .regex(CHARGE_OR_PURCHASE_ID)
      .meta({ description: 'The charge id (`c…`), or an x402 purchase\'s (`xp…`, with `type: "x402_purchase"`).' }),
    type: z.enum(['x402_purchase', 'tab']).optional().meta({
      description:
        "An x402 purchase (DESIGN §22): the agent paid an x402 seller from this balance; `tab`: a tab's hold (DESIGN §29); absent on other charges.",
    }),
    tabId: z.string().optional().meta({ description: 'A tab\'s hold (`type: "tab"`): the tab it holds for, captured at its close.' }),
    payTo: z.string().optional().meta({ description: "An x402 purchase: the seller's wallet paid." }),
    resource: z
      .object({ url: z.string(), description: z.string().optional() })
      .nullable()
      .optional()
      .meta({ description: 'An x402 purchase: what was bought, when the agent said.' }),
    agent: z.strictObject({ id: id('a', 'Agent'), name: z.string().nullable() }),
    approvalUrl: z
      .url()
      .optional()
      .meta({ description: "On a PENDING charge waiting for the payer (pendingReason user_approval): the payer's approval page." }),
  }),
);
export const userChargeListBody = component(
  'UserChargeList',
  z.strictObject({ data: z.array(userChargeBody), nextCursor: z.string().nullable() }),
);

export const chargeListBody = component(
  'ChargeList',
  z.strictObject({
    data: z.array(chargeBody).meta({ description: 'Newest first.' }),
    pagination: z.strictObject({
      total: z.int().min(0),
      page: z.int().min(1),
      limit: z.int().min(1).max(100),
      totalPages: z.int().min(0),
    }),
    nextCursor: z.string().nullable().meta({ description: 'Pass as `cursor` for the next page; null on the last page.' }),
  }),
);
