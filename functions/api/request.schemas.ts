/** One zod schema per request, built once at module scope; `z.infer` is the type everywhere. */
import * as z from 'zod';
import { CURRENCIES } from '../core/money';
import { amountLiteral } from '../http/validation';

const PRINTABLE = /^[^\u0000-\u001f\u007f]*$/;
const codePoints = (s: string) => [...s].length;

export const registerAgentSchema = z.strictObject({
  name: z.string().trim().min(1).max(100).regex(PRINTABLE, { error: 'must not contain control characters' }),
  email: z.email().max(254),
  website: z.url({ protocol: /^https?$/, hostname: z.regexes.domain }).max(2048),
});

export const createChargeSchema = z.strictObject({
  amount: amountLiteral,
  currency: z.enum(CURRENCIES),
  description: z
    .string()
    .refine((s) => codePoints(s) <= 255, { error: 'must be at most 255 characters' })
    .default(''),
});

export const creditSchema = z.strictObject({
  amount: amountLiteral,
  currency: z.enum(CURRENCIES),
});

export const updateAgentSchema = z.strictObject({
  enabled: z.boolean(),
});

const positiveInt = z
  .string()
  .regex(/^[1-9]\d{0,8}$/, { error: 'must be a positive integer' })
  .transform(Number);

export const listChargesQuerySchema = z.strictObject({
  page: positiveInt.default(1),
  limit: positiveInt.pipe(z.number().max(100, { error: 'must be at most 100' })).default(20),
  cursor: z.string().max(512).optional(),
});

export const emptyQuerySchema = z.strictObject({});

export const withdrawSchema = z.strictObject({
  amount: amountLiteral,
  currency: z.enum(CURRENCIES),
  // The network's own rules (Solana address, PayPal account) are checked by the use case.
  walletAddress: z.string().min(1).max(256),
});

export const listWithdrawalsQuerySchema = z.strictObject({
  limit: positiveInt.pipe(z.number().max(100, { error: 'must be at most 100' })).default(20),
  cursor: z.string().max(512).optional(),
  payoutId: z.string().max(64).optional(),
});
