/**
 * The money fields of request bodies, shared by the request schemas (request.schemas.ts) and the
 * schemas kept in modules of their own so that a function bundles only its own (withdraw.schema.ts).
 */
import * as z from 'zod';
import { config } from '../config';
import { AmountError, CURRENCIES, type Currency, type Minor, parseAmount, unitsToMinor } from '../core/money';
import { amountLiteral } from './validation';

/**
 * The one money rule for requests: (amount literal, currency) → integer minor units of that
 * currency, at most MAX_AMOUNT and at least `min` when given; rejected, never rounded. It runs
 * after the fields' own checks, so the currency is known when the literal is read.
 */
export function inMinorUnits(min?: { units: number; message: string }) {
  return <T extends { amount: string; currency: Currency }>(value: T, ctx: z.RefinementCtx<T>): Omit<T, 'amount'> & { amount: Minor } => {
    const fail = (message: string) => {
      ctx.addIssue({ code: 'custom', path: ['amount'], message, input: value.amount });
      return z.NEVER;
    };
    // The sign of a JSON number literal survives a float parse exactly; zero and negatives get
    // the minimum's own message rather than the generic "greater than 0".
    if (min && !(Number(value.amount) > 0)) return fail(min.message);
    try {
      const amount = parseAmount(value.amount, value.currency, unitsToMinor(config().MAX_AMOUNT, value.currency));
      if (min && amount < unitsToMinor(min.units, value.currency)) return fail(min.message);
      return { ...value, amount };
    } catch (error) {
      if (error instanceof AmountError) return fail(error.reason);
      throw error;
    }
  };
}

/**
 * What the OpenAPI document and the MCP tools say an amount is. The literal is read from the JSON
 * text itself (http/body.ts), which JSON Schema cannot express; to a client it is a number.
 */
export const AMOUNT_META = {
  type: 'number',
  description:
    'A decimal JSON number in currency units (1.50, 1.5 and 15e-1 are the same amount). It is read exactly from its ' +
    'literal and never rounded: zero, negatives, strings, more decimals than the currency has (USD 2, USDC 6) or more ' +
    'than the maximum (1,000,000 by default) are refused.',
  examples: [1.5],
} as const;

export const money = {
  amount: amountLiteral.meta(AMOUNT_META),
  currency: z.enum(CURRENCIES).meta({ description: 'USD (2 decimal places) or USDC (6).' }),
};
