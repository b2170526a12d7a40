/**
 * A refund of an x402 payment (DESIGN §28): the request's body, the answers' shapes and the views
 * the API, the MCP tool and the `x402.payment.refunded` event render a refund (a payout with
 * `paymentId`, core/payouts.ts) with. In a module of its own: only the refund's functions bundle it.
 */
import * as z from 'zod';
import { config } from '../config';
import { AmountError, parseAmount, unitsToMinor } from '../core/money';
import type { Payout } from '../core/payouts';
import { jsonAmount } from './json';
import { AMOUNT_META } from './money.schemas';
import { receiptLink, receiptUrlOf } from './responses/receipts';
import { amountLiteral } from './validation';
import type { ReceiptLinks } from './views';

/**
 * `POST /api/v1/agents/x402/payments/{id}/refund`: `{amount?}` in USDC, read exactly from its literal
 * (rejected, never rounded); without it, the rest of the payment.
 */
export const refundX402PaymentSchema = z
  .strictObject({
    amount: amountLiteral
      .meta({ ...AMOUNT_META, description: `${AMOUNT_META.description} USDC; without it, what is left of the payment.` })
      .optional(),
  })
  .transform((value, ctx): { amount?: number } => {
    if (value.amount === undefined) return {};
    try {
      return { amount: parseAmount(value.amount, 'USDC', unitsToMinor(config().MAX_AMOUNT, 'USDC')) };
    } catch (error) {
      if (!(error instanceof AmountError)) throw error;
      ctx.addIssue({ code: 'custom', path: ['amount'], message: error.reason, input: value.amount });
      return z.NEVER;
    }
  });
export type RefundX402PaymentRequest = z.infer<typeof refundX402PaymentSchema>;

const REFUND_STATUSES = ['PENDING', 'PROCESSING', 'COMPLETED', 'FAILED'] as const;

/** The 202 of a refund: debited and queued. */
export const x402RefundCreatedSchema = z.object({
  id: z.string(),
  paymentId: z.string(),
  amount: z.number(),
  currency: z.literal('USDC'),
  to: z.string().meta({ description: "The payment's payer: the wallet whose USDC token account receives the refund." }),
  status: z.enum(REFUND_STATUSES),
});

/** `GET /api/v1/agents/x402/refunds/{id}`, and the `x402.payment.refunded` event's data. */
export const x402RefundSchema = x402RefundCreatedSchema.extend({
  transaction: z.string().optional().meta({ description: 'The Solana transaction that paid it, once COMPLETED.' }),
  createdAt: z.string(),
  receiptUrl: receiptLink(
    "The read's, once COMPLETED: the refund's receipt (`GET /api/v1/receipts/{id}`, type `refund`, its `xr…` id), a signed " +
      'record the agent reads with its key (docs/receipts.md). Absent before, and in the event (it carries `receipt` itself).',
    'xr01jhx3k6v1f8q2n7c9m4p5r6s7',
  ),
});

/** What a refund answers when it is made (202). */
export function x402RefundCreatedView(refund: Payout) {
  return {
    id: refund.id,
    paymentId: refund.paymentId ?? '',
    amount: jsonAmount(refund.amount, 'USDC'),
    currency: 'USDC' as const,
    to: refund.walletAddress,
    status: refund.status,
  };
}

/**
 * A refund as it is read, with its receipt link on `baseUrl` once COMPLETED (DESIGN §27); as its
 * event carries it with no address (undefined): no link, the event carries its signed `receipt`.
 */
export function x402RefundView(refund: Payout, baseUrl: ReceiptLinks) {
  return {
    ...x402RefundCreatedView(refund),
    ...(refund.txHash ? { transaction: refund.txHash } : {}),
    createdAt: refund.createdAt,
    ...(baseUrl !== undefined && refund.status === 'COMPLETED' ? { receiptUrl: receiptUrlOf('refund', refund.id, baseUrl) } : {}),
  };
}
