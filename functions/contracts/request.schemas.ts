/**
 * One zod schema per request, built once at module scope; `z.infer` of these is the input type
 * of every use case (no hand-written twins).
 */
import * as z from 'zod';
import { config } from '../config';
import { ID_PATTERNS } from '../core/ids';
import { AmountError, CURRENCIES, type Currency, isCurrencyOn, type Minor, parseAmount, unitsToMinor } from '../core/money';
import { descriptionProblem, nameProblem } from '../core/text';
import { FIELD_PROBLEMS } from '../messages/catalogue';
import { AMOUNT_META, inMinorUnits, money } from './money.schemas';
import { amountLiteral, integerLiteral } from './validation';

export { AMOUNT_META };

const codePoints = (s: string) => [...s].length;

/** A refinement from a core text rule that answers "must …" or undefined. */
const rule = (problem: (s: string) => string | undefined) => (value: string, ctx: z.RefinementCtx<string>) => {
  const message = problem(value);
  if (message) ctx.addIssue({ code: 'custom', message, input: value });
};

export const registerAgentSchema = z.strictObject({
  // NFKC first, so what is stored (and shown to users) is the canonical form of what was checked.
  name: z
    .string()
    .transform((name) => name.normalize('NFKC').trim())
    .pipe(z.string().min(1).max(100))
    .superRefine(rule(nameProblem))
    .meta({
      description:
        '1-100 characters after Unicode NFKC; no invisible or control characters; unique by look-alike skeleton (case-insensitive).',
      examples: ['weather-bot'],
    }),
  email: z
    .email()
    .max(254)
    .meta({ examples: ['dev@example.com'] }),
  website: z
    .url({ protocol: /^https?$/, hostname: z.regexes.domain })
    .max(2048)
    .meta({ description: 'An http(s) URL.', examples: ['https://example.com'] }),
});
export type RegisterAgentRequest = z.infer<typeof registerAgentSchema>;

export const createChargeSchema = z
  .strictObject({
    ...money,
    description: z
      .string()
      .refine((s) => codePoints(s) <= 255, { error: FIELD_PROBLEMS.atMostCharacters(255) })
      .superRefine(rule(descriptionProblem))
      .default('')
      .meta({ description: 'At most 255 characters; no control or bidirectional control characters.', examples: ['forecast for Lisbon'] }),
    capture: z.boolean().default(true).meta({
      description:
        'false: authorize only. The amount is held (PENDING, `pendingReason: "capture"`) until the agent captures all or part of it, releases it, or it expires after `holdSeconds`.',
    }),
    holdSeconds: integerLiteral
      .pipe(
        z
          .number()
          .min(60, { error: FIELD_PROBLEMS.atLeast(60) })
          .max(604_800, { error: FIELD_PROBLEMS.atMost(604_800) }),
      )
      .meta({
        type: 'integer',
        minimum: 60,
        maximum: 604_800,
        description: 'With `capture: false`: how long the hold waits for its capture, in seconds (default 3600).',
      })
      .optional(),
  })
  .superRefine((value, ctx) => {
    if (value.holdSeconds !== undefined && value.capture) {
      ctx.addIssue({ code: 'custom', path: ['holdSeconds'], message: FIELD_PROBLEMS.holdOnlyWithoutCapture, input: value.holdSeconds });
    }
  })
  .transform(inMinorUnits());
export type CreateChargeRequest = z.infer<typeof createChargeSchema>;

export const creditSchema = z.strictObject(money).transform(inMinorUnits());
export type CreditRequest = z.infer<typeof creditSchema>;

// --- The charge lifecycle (docs/design.md §12, docs/lifecycle.md) ---

/**
 * An optional amount of a charge's own currency (capture, refund): kept as its literal here and
 * read exactly by the use case once the charge, and so its currency, is known.
 */
const chargeAmount = amountLiteral.meta(AMOUNT_META).optional();

/** POST /api/v1/agents/charge/{id}/capture: `amount` defaults to all that is held. */
export const captureChargeSchema = z.strictObject({ amount: chargeAmount });
export type CaptureChargeRequest = z.infer<typeof captureChargeSchema>;

/** POST /api/v1/agents/charge/{id}/release: no fields (an empty body or `{}`). */
export const releaseChargeSchema = z.strictObject({});

/** POST /api/v1/agents/charge/{id}/refund: `amount` defaults to all that is left to refund. */
export const refundChargeSchema = z.strictObject({ amount: chargeAmount });
export type RefundChargeRequest = z.infer<typeof refundChargeSchema>;

// --- end of the charge lifecycle ---

export const updateAgentSchema = z.strictObject({
  enabled: z.boolean().meta({ description: 'true enables the agent; false stops its charges and withdrawals at once.' }),
});

const positiveInt = z
  .string()
  .regex(/^[1-9]\d{0,8}$/, { error: FIELD_PROBLEMS.positiveInteger })
  .transform(Number);

// No default here: a cursor carries its own limit (contracts/cursor.ts `pageLimit`).
const limit = positiveInt
  .pipe(z.number().max(100, { error: FIELD_PROBLEMS.atMost(100) }))
  .optional()
  .meta({ description: "Page size, 1 to 100; 20 by default, or the cursor's own.", examples: ['20'] });

const cursor = z.string().max(512).optional().meta({ description: 'The `nextCursor` of the previous page (it carries its limit).' });

export const listChargesQuerySchema = z.strictObject({
  page: positiveInt.default(1).meta({ description: 'Page number, from 1; page × limit at most 10000.', examples: ['1'] }),
  limit,
  cursor,
});
export type ListChargesQuery = z.infer<typeof listChargesQuerySchema>;

export { type WithdrawRequest, withdrawSchema } from './withdraw.schema';

/** Per-currency limits: each an amount of that currency, validated (and converted) like every amount. */
const limitsSchema = z
  .strictObject({ USD: amountLiteral.meta(AMOUNT_META).optional(), USDC: amountLiteral.meta(AMOUNT_META).optional() })
  .transform((limits, ctx) => {
    const out: Partial<Record<Currency, Minor>> = {};
    for (const currency of CURRENCIES) {
      const literal = limits[currency];
      if (literal === undefined) continue;
      try {
        out[currency] = parseAmount(literal, currency, unitsToMinor(config().MAX_AMOUNT, currency));
      } catch (error) {
        if (!(error instanceof AmountError)) throw error;
        ctx.addIssue({ code: 'custom', path: [currency], message: error.reason, input: literal });
        return z.NEVER;
      }
    }
    return out;
  });

const rulesShape = {
  perCharge: limitsSchema.optional(),
  daily: limitsSchema.optional(),
  monthly: limitsSchema.optional(),
  approvalAbove: limitsSchema.optional(),
};

/** PUT /api/v1/users/me/policy: the whole policy (docs/design.md §11); amounts → minor units. */
/** The longest a PENDING charge may wait for its payer (a policy's `approvalWindowSeconds`). */
export const MAX_APPROVAL_WINDOW_SECONDS = 604_800;

export const policySchema = z.strictObject({
  ...rulesShape,
  approvalWindowSeconds: integerLiteral
    .pipe(
      z
        .number()
        .min(60, { error: FIELD_PROBLEMS.atLeast(60) })
        .max(MAX_APPROVAL_WINDOW_SECONDS, { error: FIELD_PROBLEMS.atMost(MAX_APPROVAL_WINDOW_SECONDS) }),
    )
    .meta({
      type: 'integer',
      minimum: 60,
      maximum: MAX_APPROVAL_WINDOW_SECONDS,
      description: 'How long a PENDING charge waits for the user, in seconds (default 900).',
    })
    .optional(),
  agents: z
    .record(
      z.string().regex(ID_PATTERNS.agent, { error: FIELD_PROBLEMS.agentId }),
      z.strictObject({ ...rulesShape, blocked: z.boolean().optional() }),
    )
    .optional(),
});
export type PolicyRequest = z.infer<typeof policySchema>;

/** GET /api/v1/users/me/charges */
export const listUserChargesQuerySchema = z.strictObject({
  limit,
  cursor: z.string().max(512).optional(),
  status: z.enum(['PENDING', 'SUCCESS', 'FAILED', 'EXPIRED']).optional(),
});
export type ListUserChargesQuery = z.infer<typeof listUserChargesQuerySchema>;

/** A statement bound: a UTC date (a whole day) or a UTC time; `end` reads a date as its last millisecond. */
const statementBound = (end: boolean) =>
  z
    .string()
    .regex(/^\d{4}-\d{2}-\d{2}(?:T\d{2}:\d{2}(?::\d{2}(?:\.\d{1,3})?)?Z)?$/, { error: FIELD_PROBLEMS.dateOrTime })
    .refine((text) => !Number.isNaN(Date.parse(text)) && new Date(Date.parse(text)).toISOString().slice(0, 10) === text.slice(0, 10), {
      error: FIELD_PROBLEMS.dateOrTime,
    })
    .transform((text) => (text.length === 10 ? `${text}T${end ? '23:59:59.999' : '00:00:00.000'}Z` : new Date(text).toISOString()))
    .optional();

/** GET /api/v1/users/me/statement: filters apply to the rows; the balance after each row counts every movement. */
export const statementQuerySchema = z
  .strictObject({
    currency: z.enum(CURRENCIES).optional(),
    type: z
      .enum(['topup', 'charge', 'hold', 'hold_release', 'refund', 'x402_purchase', 'credit', 'reversal'])
      .optional()
      .meta({ description: 'Only rows of this type.' }),
    agentId: z
      .string()
      .regex(ID_PATTERNS.agent, { error: FIELD_PROBLEMS.agentId })
      .optional()
      .meta({ description: 'Only rows of this agent.' }),
    from: statementBound(false).meta({ description: 'Rows at or after this UTC date (its start) or time.', examples: ['2026-11-01'] }),
    to: statementBound(true).meta({ description: 'Rows at or before this UTC date (its end) or time.', examples: ['2026-11-30'] }),
    q: z
      .string()
      .max(100, { error: FIELD_PROBLEMS.atMostCharacters(100) })
      .optional()
      .meta({ description: 'Text the description contains (case-insensitive).' }),
    limit,
    cursor,
  })
  .superRefine((value, ctx) => {
    if (value.from !== undefined && value.to !== undefined && value.from > value.to) {
      ctx.addIssue({ code: 'custom', path: ['from'], message: FIELD_PROBLEMS.notAfterTo, input: value.from });
    }
  });
export type StatementQuery = z.infer<typeof statementQuerySchema>;

/** GET /api/v1/admin/agents: the operator's list of agents, newest first, of one state or both. */
export const listAgentsQuerySchema = z.strictObject({
  enabled: z.enum(['true', 'false']).optional().meta({
    description:
      'Only enabled agents (`true`) or only those that may not charge (`false`: waiting to be enabled, or disabled); both when absent.',
  }),
  limit,
  cursor,
});
export type ListAgentsQuery = z.infer<typeof listAgentsQuerySchema>;

export const listWithdrawalsQuerySchema = z.strictObject({
  limit,
  cursor,
  payoutId: z.string().max(64).optional().meta({ description: 'Answer with this one Payout instead of a list.' }),
});
export type ListWithdrawalsQuery = z.infer<typeof listWithdrawalsQuerySchema>;

/** GET /api/v1/admin/payouts: the operator's list of held (or in-flight) payouts, oldest first. */
export const adminListPayoutsQuerySchema = z.strictObject({
  status: z
    .enum(['HELD', 'PENDING', 'PROCESSING'])
    .default('HELD')
    .meta({ description: 'HELD (the default): waiting for the operator to release or cancel them. PENDING, PROCESSING: in flight.' }),
  limit,
  cursor,
});
export type AdminListPayoutsQuery = z.infer<typeof adminListPayoutsQuerySchema>;

// Top-ups (docs/topups.md).
/**
 * POST /api/v1/users/me/topups. USD names its amount (the PayPal order's, validated like every
 * amount). USDC may name one: then only a transfer of exactly that amount completes the top-up
 * (docs/topups.md "What completes a USDC top-up"); without one, what the wallet sends is credited.
 */
export const createTopupSchema = z
  .strictObject({
    currency: money.currency,
    amount: amountLiteral.optional().meta({
      ...AMOUNT_META,
      description: `Required for USD; for USDC optional, the exact amount the transfer must carry. ${AMOUNT_META.description}`,
    }),
  })
  .transform((value, ctx): { currency: 'USDC'; amount?: Minor } | { currency: 'USD'; amount: Minor } => {
    if (isCurrencyOn(value.currency, 'solana')) {
      if (value.amount === undefined) return { currency: 'USDC' };
      return inMinorUnits()({ amount: value.amount, currency: 'USDC' as Currency }, ctx as never) as { currency: 'USDC'; amount: Minor };
    }
    if (value.amount === undefined) {
      ctx.addIssue({ code: 'custom', path: ['amount'], message: FIELD_PROBLEMS.requiredForUsd, input: '' });
      return z.NEVER;
    }
    return inMinorUnits()({ amount: value.amount, currency: 'USD' as Currency }, ctx as never) as { currency: 'USD'; amount: Minor };
  });
export type CreateTopupRequest = z.infer<typeof createTopupSchema>;

/** GET /api/v1/users/me/topups */
export const listTopupsQuerySchema = z.strictObject({ limit, cursor });
export type ListTopupsQuery = z.infer<typeof listTopupsQuerySchema>;
// Webhooks (DESIGN §15, docs/webhooks.md). Which event types an owner may subscribe to depends
// on the owner (agent or user): the use case checks them and names the field.
export const createWebhookSchema = z.strictObject({
  url: z
    .string()
    .min(1)
    .max(2048)
    .meta({
      description: 'Where events are POSTed: https, resolving to public addresses only (locally, http://127.0.0.1 is allowed too).',
      examples: ['https://agent.example.com/hooks/payments'],
    }),
  events: z
    .array(z.string().min(1).max(64))
    .min(1)
    .max(20)
    .optional()
    .meta({ description: "Event types to receive; all of the owner's event types when omitted.", examples: [['charge.succeeded']] }),
});
export type CreateWebhookRequest = z.infer<typeof createWebhookSchema>;

export const listDeliveriesQuerySchema = z.strictObject({
  limit: positiveInt
    .pipe(z.number().max(100, { error: FIELD_PROBLEMS.atMost(100) }))
    .optional()
    .meta({ description: 'How many of the most recent attempts, 1 to 100; 50 by default.', examples: ['50'] }),
});
export type ListDeliveriesQuery = z.infer<typeof listDeliveriesQuerySchema>;
