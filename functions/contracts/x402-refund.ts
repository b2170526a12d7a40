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
import { amountLiteral } from './validation';

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

/** A refund as it is read (and as its event carries it). */
export function x402RefundView(refund: Payout) {
  return {
    ...x402RefundCreatedView(refund),
    ...(refund.txHash ? { transaction: refund.txHash } : {}),
    createdAt: refund.createdAt,
  };
}
