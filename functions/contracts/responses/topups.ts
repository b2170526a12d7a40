/**
 * The response bodies of top-ups (docs/topups.md), USDC by Solana Pay and USD by PayPal,
 * registered as components (contracts/response.schemas.ts has the registry and the atoms).
 */
import * as z from 'zod';
import { TOPUP_FAILURE_REASONS } from '../../core/topups';
import { amount, component, id, timestamp } from '../response.schemas';

const topupCommon = {
  id: id('t', 'Top-up'),
  status: z.enum(['PENDING', 'COMPLETED', 'EXPIRED', 'FAILED']).meta({
    description:
      'PENDING: waiting for the payment. COMPLETED: the amount received was credited to the balance. EXPIRED: nothing arrived ' +
      'before expiresAt (or the PayPal order was declined); nothing was credited. FAILED: the rail did something the top-up ' +
      'cannot take (failureReason); nothing was credited and an operator was alerted: any money taken is refunded or credited by hand.',
  }),
  externalId: z
    .string()
    .nullable()
    .meta({ description: 'The Solana signature or PayPal capture id that was credited (FAILED: the capture concerned); null otherwise.' }),
  failureReason: z
    .enum(Object.values(TOPUP_FAILURE_REASONS))
    .nullable()
    .meta({ description: 'Why a FAILED top-up failed; null otherwise.' }),
  createdAt: timestamp,
  expiresAt: timestamp,
  completedAt: timestamp.nullable().meta({ description: 'When the payment was credited; null until COMPLETED.' }),
};

export const usdcTopupBody = component(
  'UsdcTopup',
  z.strictObject({
    ...topupCommon,
    currency: z.literal('USDC'),
    amount: amount('The USDC received and credited; null until COMPLETED.').nullable(),
    network: z.literal('SOL'),
    address: z.string().meta({ description: "The platform's deposit wallet (pay its USDC token account, as Solana Pay does)." }),
    reference: z
      .string()
      .meta({ description: 'Solana Pay reference: a fresh public key the paying transaction must carry (read-only account).' }),
    solanaPayUrl: z
      .string()
      .meta({ description: 'A Solana Pay transfer request: `solana:<address>?spl-token=<mint>&reference=<reference>&label=…`.' }),
  }),
);

export const usdTopupBody = component(
  'UsdTopup',
  z.strictObject({
    ...topupCommon,
    currency: z.literal('USD'),
    amount: amount('The amount ordered; once COMPLETED, the amount captured and credited.'),
    approveUrl: z.string().meta({ description: 'Where the user approves the PayPal order.' }),
  }),
);

export const topupBody = component('Topup', z.union([usdcTopupBody, usdTopupBody]));

export const topupListBody = component(
  'TopupList',
  z.strictObject({
    data: z.array(topupBody),
    nextCursor: z.string().nullable().meta({ description: 'Pass as `cursor` for the next page; null on the last.' }),
  }),
);
