/**
 * The request schemas of tabs (DESIGN §29), in a module of their own so that only the tabs'
 * functions bundle them. Amounts are read exactly, never rounded (contracts/money.schemas.ts).
 */
import * as z from 'zod';
import { config } from '../config';
import { AmountError, CURRENCIES, type Currency, type Minor, parseAmount, unitsToMinor } from '../core/money';
import { TAB_STATUSES } from '../core/tabs';
import { descriptionProblem } from '../core/text';
import { FIELD_PROBLEMS } from '../messages/catalogue';
import { AMOUNT_META } from './money.schemas';
import { amountLiteral, integerLiteral } from './validation';

const codePoints = (s: string) => [...s].length;

/** A description of at most `max` code points, no control or bidirectional control characters. */
const description = (max: number, example: string) =>
  z
    .string()
    .refine((s) => codePoints(s) <= max, { error: FIELD_PROBLEMS.atMostCharacters(max) })
    .superRefine((value, ctx) => {
      const problem = descriptionProblem(value);
      if (problem) ctx.addIssue({ code: 'custom', message: problem, input: value });
    })
    .default('')
    .meta({ description: `At most ${max} characters; no control or bidirectional control characters.`, examples: [example] });

/** POST /api/v1/agents/tabs: the limit held as a hold would hold it, for `ttlSeconds`. */
/** The longest a tab stays open (its `ttlSeconds`). */
export const MAX_TAB_TTL_SECONDS = 86_400;

export const openTabSchema = z
  .strictObject({
    currency: z.enum(CURRENCIES).meta({ description: 'USD (2 decimal places) or USDC (6).' }),
    limit: amountLiteral.meta({ ...AMOUNT_META, description: `The most the tab may use, held now. ${AMOUNT_META.description}` }),
    description: description(255, 'tokens for the summariser'),
    ttlSeconds: integerLiteral
      .pipe(
        z
          .number()
          .min(60, { error: FIELD_PROBLEMS.atLeast(60) })
          .max(MAX_TAB_TTL_SECONDS, { error: FIELD_PROBLEMS.atMost(MAX_TAB_TTL_SECONDS) }),
      )
      .meta({
        type: 'integer',
        minimum: 60,
        maximum: MAX_TAB_TTL_SECONDS,
        description: 'How long the tab stays open, in seconds (default 3600).',
      })
      .optional(),
  })
  .transform((value, ctx): Omit<typeof value, 'limit'> & { limit: Minor } => {
    try {
      return { ...value, limit: parseAmount(value.limit, value.currency as Currency, unitsToMinor(config().MAX_AMOUNT, value.currency)) };
    } catch (error) {
      if (!(error instanceof AmountError)) throw error;
      ctx.addIssue({ code: 'custom', path: ['limit'], message: error.reason, input: value.limit });
      return z.NEVER;
    }
  });
export type OpenTabRequest = z.infer<typeof openTabSchema>;

/** POST /api/v1/agents/tabs/{id}/usage: an amount of the tab's currency, read exactly by the use case once the tab is known. */
export const tabUsageSchema = z.strictObject({
  amount: amountLiteral.meta(AMOUNT_META),
  // Short: the use's item stays within one write unit whatever its key (docs/tabs.md).
  description: description(100, '1234 tokens'),
});
export type TabUsageRequest = z.infer<typeof tabUsageSchema>;

/** POST .../tabs/{id}/close: no fields (an empty body or `{}`). */
export const closeTabSchema = z.strictObject({});

const limit = z
  .string()
  .regex(/^[1-9]\d{0,8}$/, { error: FIELD_PROBLEMS.positiveInteger })
  .transform(Number)
  .pipe(z.number().max(100, { error: FIELD_PROBLEMS.atMost(100) }))
  .optional()
  .meta({ description: "Page size, 1 to 100; 20 by default, or the cursor's own.", examples: ['20'] });

const cursor = z.string().max(1024).optional().meta({ description: 'The `nextCursor` of the previous page (it carries its limit).' });

/** GET /api/v1/agents/tabs/{id}/usage */
export const listTabUsageQuerySchema = z.strictObject({ limit, cursor });
export type ListTabUsageQuery = z.infer<typeof listTabUsageQuerySchema>;

/** GET /api/v1/users/me/tabs */
export const listUserTabsQuerySchema = z.strictObject({
  limit,
  cursor,
  status: z.enum(TAB_STATUSES).optional().meta({ description: 'Only tabs of this status.' }),
});
export type ListUserTabsQuery = z.infer<typeof listUserTabsQuerySchema>;
