/**
 * The response bodies of withdrawals and payouts (docs/payouts.md), registered as components
 * (contracts/response.schemas.ts has the registry and the atoms).
 */
import * as z from 'zod';
import { PLATFORM_FEE_RATE } from '../../core/fees';
import { amount, component, currency, id, timestamp } from '../response.schemas';
import { receiptLink } from './receipts';

const network = z.enum(['SOL', 'PAYPAL']).meta({ description: 'SOL for USDC (a Solana wallet), PAYPAL for USD.' });
const feeRate = z.literal(PLATFORM_FEE_RATE);

export const withdrawalBody = component(
  'WithdrawalAccepted',
  z.strictObject({
    success: z.literal(true),
    payoutId: id('p', 'Payout'),
    breakdown: z.strictObject({
      grossAmount: amount('Debited from the agent balance.'),
      platformFeeRate: feeRate,
      platformFee: amount('3% of the gross amount, rounded half up.'),
      accountCreationFee: amount('With createTokenAccount: the fee for creating the USDC token account, 0 if it existed.').optional(),
      netAmount: amount('What the rail pays: gross less the fees.'),
      currency,
      walletAddress: z.string(),
      network,
    }),
  }),
);

export const payoutBody = component(
  'Payout',
  z.strictObject({
    id: id('p', 'Payout'),
    agentId: id('a', 'Agent'),
    currency,
    status: z.enum(['PENDING', 'PROCESSING', 'HELD', 'COMPLETED', 'FAILED']).meta({
      // HELD (docs/payouts.md): the agent was disabled before it was paid; the operator releases or cancels it.
      description: 'FAILED payouts were refunded (the gross amount is back on the agent balance).',
    }),
    destination: z.strictObject({ network, walletAddress: z.string() }),
    externalId: z.string().nullable().meta({ description: 'The rail reference: the Solana signature, or the PayPal batch id.' }),
    txHash: z.string().nullable().meta({ description: 'The Solana transaction signature (null for PayPal).' }),
    createdAt: timestamp,
    processedAt: timestamp.nullable(),
    amount: amount('The gross amount debited.'),
    fee: amount('The platform fee.'),
    netAmount: amount('What the rail pays: amount less the fees.'),
    platformFeeRate: feeRate,
    accountCreationFee: amount('The fee for creating the USDC token account (createTokenAccount); 0 when none.'),
    failureReason: z.string().nullable(),
    receiptUrl: receiptLink(
      "Once COMPLETED: the payout's receipt (`GET /api/v1/receipts/{id}`, type `payout`, the gross amount), a signed " +
        'record the agent reads with its key (docs/receipts.md). Absent while it is in flight, held or FAILED.',
      'p01jhx3k6v1f8q2n7c9m4p5r6s7',
    ),
  }),
);

export const payoutListBody = component(
  'PayoutList',
  z.strictObject({
    payouts: z.array(payoutBody).meta({ description: 'Newest first.' }),
    nextCursor: z.string().nullable().meta({ description: 'Pass as `cursor` for the next page; null on the last page.' }),
  }),
);
