/**
 * Grants and grant requests (DESIGN §16, docs/grants.md): the request schemas (one zod schema per
 * request; `z.infer` is the use cases' input type), and the JSON each answer and event shows. Read
 * by the API handlers, the MCP tools, the OpenAPI generator and the use cases alike.
 */
import { LosslessNumber } from 'lossless-json';
import * as z from 'zod';
import { config } from '../config';
import { checkPayeeEntry, type GrantScope, MAX_SCOPE_ENTRIES, normaliseHostEntry } from '../core/grant-scope';
import {
  GRANT_LIMIT_NAMES,
  type Grant,
  type GrantLimits,
  type GrantRequest,
  grantRequestStatus,
  grantStatus,
  MAX_GRANT_TTL_SECONDS,
  MIN_GRANT_TTL_SECONDS,
} from '../core/grants';
import { ID_PATTERNS } from '../core/ids';
import { AmountError, CURRENCIES, type Currency, formatAmount, type Minor, parseAmount, unitsToMinor } from '../core/money';
import { descriptionProblem } from '../core/text';
import { FIELD_PROBLEMS } from '../messages/catalogue';
import { SCOPE_PROBLEMS } from '../messages/problems';
import type { Rendered } from './api';
import { amountLiteral, integerLiteral } from './validation';

const AMOUNT = {
  type: 'number',
  description: "A decimal JSON number in the grant's currency, read exactly (never rounded), like every amount.",
  examples: [5],
} as const;

const LIMIT_NAMES = GRANT_LIMIT_NAMES;

/** A scope list: 1 to MAX_SCOPE_ENTRIES strings, each brought to its canonical form (or refused, naming the entry). */
const scopeList = (check: (entry: string) => { value: string } | { problem: string }, description: string, examples: string[]) =>
  z
    .array(z.string().max(300, { error: FIELD_PROBLEMS.atMostCharacters(300) }))
    .min(1, { error: FIELD_PROBLEMS.notEmpty })
    .max(MAX_SCOPE_ENTRIES, { error: FIELD_PROBLEMS.atMost(`${MAX_SCOPE_ENTRIES} entries`) })
    .transform((entries, ctx) => {
      const out: string[] = [];
      entries.forEach((entry, index) => {
        const verdict = check(entry);
        if ('problem' in verdict) ctx.addIssue({ code: 'custom', path: [index], message: verdict.problem, input: entry });
        else if (!out.includes(verdict.value)) out.push(verdict.value);
      });
      return out;
    })
    .optional()
    .meta({ description, examples: [examples] });

/** `scope` (DESIGN §27, core/grant-scope.ts): where the agent may pay. Stored as normalised. */
const scopeShape = z
  .strictObject({
    payees: scopeList(
      (entry) => {
        const verdict = checkPayeeEntry(entry);
        return 'payee' in verdict ? { value: verdict.payee } : { problem: SCOPE_PROBLEMS.scopePayee[verdict.problem] };
      },
      `Solana addresses (canonical base58) a purchase's payTo must be one of; 1 to ${MAX_SCOPE_ENTRIES}. A scoped grant pays no plain charge.`,
      ['9xQeWvG816bUx9EPjHmaT23yvVM2ZWbrrpZb9PusVFin'],
    ),
    hosts: scopeList(
      (entry) => {
        const verdict = normaliseHostEntry(entry);
        return 'host' in verdict ? { value: verdict.host } : { problem: SCOPE_PROBLEMS.scopeHost[verdict.problem] };
      },
      `Hosts a purchase's resource.url must be on: exact (api.example.com) or *.example.com (any sub-domain, not example.com itself); 1 to ${MAX_SCOPE_ENTRIES}. Lower-cased, IDN to punycode, one trailing dot dropped; no port, userinfo, path or IP address. A purchase without resource is refused.`,
      ['api.example.com', '*.example.com'],
    ),
  })
  .refine((scope) => scope.payees !== undefined || scope.hosts !== undefined, { error: SCOPE_PROBLEMS.scopeEmpty })
  .transform((scope): GrantScope => ({ ...(scope.payees ? { payees: scope.payees } : {}), ...(scope.hosts ? { hosts: scope.hosts } : {}) }))
  .optional()
  .meta({ description: 'Where the agent may pay: a purchase outside it is 403 (kept FAILED, nothing held). Absent: anywhere.' });

/** The terms a payer grants, or an agent asks for: amounts in the one currency, → minor units. */
const termsShape = {
  currency: z.enum(CURRENCIES).meta({ description: 'The one currency of the grant: USD (2 decimal places) or USDC (6).' }),
  limits: z
    .strictObject({
      perCharge: amountLiteral.meta(AMOUNT).optional(),
      hourly: amountLiteral.meta({ ...AMOUNT, description: `${AMOUNT.description} The UTC clock hour.` }).optional(),
      daily: amountLiteral.meta({ ...AMOUNT, description: `${AMOUNT.description} The UTC calendar day.` }).optional(),
      monthly: amountLiteral.meta({ ...AMOUNT, description: `${AMOUNT.description} The UTC calendar month.` }).optional(),
      total: amountLiteral.meta({ ...AMOUNT, description: `${AMOUNT.description} A lifetime budget.` }).optional(),
    })
    .optional()
    .meta({ description: 'Every limit optional; an absent limit is no limit.' }),
  approvalAbove: amountLiteral
    .meta({ ...AMOUNT, description: `${AMOUNT.description} A charge above it waits for the payer's approval.` })
    .optional(),
  scope: scopeShape,
  ttlSeconds: integerLiteral
    .pipe(
      z
        .number()
        .min(MIN_GRANT_TTL_SECONDS, { error: FIELD_PROBLEMS.atLeast(MIN_GRANT_TTL_SECONDS) })
        .max(MAX_GRANT_TTL_SECONDS, { error: FIELD_PROBLEMS.atMost(MAX_GRANT_TTL_SECONDS) }),
    )
    .meta({
      type: 'integer',
      minimum: MIN_GRANT_TTL_SECONDS,
      maximum: MAX_GRANT_TTL_SECONDS,
      description: 'The grant ends this many seconds after it is created; without it, it lasts until revoked.',
    })
    .optional(),
  description: z
    .string()
    .refine((s) => [...s].length <= 255, { error: FIELD_PROBLEMS.atMostCharacters(255) })
    .superRefine((value, ctx) => {
      const message = descriptionProblem(value);
      if (message) ctx.addIssue({ code: 'custom', message, input: value });
    })
    .optional()
    .meta({ description: 'What the grant is for, shown to the payer. At most 255 characters.', examples: ['weather lookups'] }),
};

/** The literals of the terms in minor units of their currency, or the issue naming the field. */
function termsInMinorUnits<
  T extends { currency: Currency; limits?: Partial<Record<(typeof LIMIT_NAMES)[number], string>>; approvalAbove?: string },
>(value: T, ctx: z.RefinementCtx<T>) {
  const max = unitsToMinor(config().MAX_AMOUNT, value.currency);
  const read = (literal: string, path: (string | number)[]): Minor | typeof z.NEVER => {
    try {
      return parseAmount(literal, value.currency, max);
    } catch (error) {
      if (!(error instanceof AmountError)) throw error;
      ctx.addIssue({ code: 'custom', path, message: error.reason, input: literal });
      return z.NEVER;
    }
  };
  const limits: GrantLimits = {};
  for (const name of LIMIT_NAMES) {
    const literal = value.limits?.[name];
    if (literal !== undefined) limits[name] = read(literal, ['limits', name]) as Minor;
  }
  const approvalAbove = value.approvalAbove === undefined ? undefined : (read(value.approvalAbove, ['approvalAbove']) as Minor);
  return { ...value, limits, ...(approvalAbove === undefined ? {} : { approvalAbove }) };
}

/** POST /api/v1/users/me/grants */
export const createGrantSchema = z
  .strictObject({
    agentId: z
      .string()
      .regex(ID_PATTERNS.agent, { error: FIELD_PROBLEMS.agentId })
      .meta({ examples: ['a01jhx3k6v1f8q2n7c9m4p5r6s7'] }),
    ...termsShape,
  })
  .transform(termsInMinorUnits);
export type CreateGrantRequest = z.infer<typeof createGrantSchema>;

/** POST /api/v1/agents/grant-requests */
export const createGrantRequestSchema = z.strictObject(termsShape).transform(termsInMinorUnits);
export type CreateGrantRequestBody = z.infer<typeof createGrantRequestSchema>;

/** GET /api/v1/users/me/grants */
export const listGrantsQuerySchema = z.strictObject({
  limit: z
    .string()
    .regex(/^[1-9]\d{0,8}$/, { error: FIELD_PROBLEMS.positiveInteger })
    .transform(Number)
    .pipe(z.number().max(100, { error: FIELD_PROBLEMS.atMost(100) }))
    .optional()
    .meta({ description: "Page size, 1 to 100; 20 by default, or the cursor's own.", examples: ['20'] }),
  cursor: z.string().max(512).optional().meta({ description: 'The `nextCursor` of the previous page (it carries its limit).' }),
  status: z.enum(['active', 'revoked', 'expired']).optional(),
});
export type ListGrantsQuery = z.infer<typeof listGrantsQuerySchema>;

/** The consent page's form: which button, and the account key for Allow. */
export const consentFormSchema = z.strictObject({
  action: z.enum(['allow', 'deny']),
  accountKey: z.string().max(256).optional(),
  /** A signed-in payer's console session token (DESIGN §21): Allow without a key. */
  csrf: z.string().max(128).optional(),
});
export type ConsentForm = z.infer<typeof consentFormSchema>;
/** The form holds a button and one key; anything much longer is not from the page. */
export const CONSENT_FORM_MAX_BYTES = 1024;

const amount = (minor: Minor, currency: Currency) => new LosslessNumber(formatAmount(minor, currency));

function limitsView(limits: GrantLimits, currency: Currency) {
  const out: Partial<Record<keyof GrantLimits, LosslessNumber>> = {};
  for (const name of LIMIT_NAMES) {
    const value = limits[name];
    if (value !== undefined) out[name] = amount(value, currency);
  }
  return out;
}

/** A Grant as the API shows it (never its key: only the create answer adds `key`). */
export function grantView(grant: Grant, now: Date = new Date()) {
  return {
    id: grant.id,
    agent: { id: grant.agentId, name: grant.agentName },
    currency: grant.currency,
    limits: limitsView(grant.limits, grant.currency),
    ...(grant.approvalAbove !== undefined ? { approvalAbove: amount(grant.approvalAbove, grant.currency) } : {}),
    ...(grant.scope !== undefined ? { scope: grant.scope } : {}),
    description: grant.description,
    expiresAt: grant.expiresAt ?? null,
    status: grantStatus(grant, now),
    spent: amount(grant.spent, grant.currency),
    createdAt: grant.createdAt,
    revokedAt: grant.revokedAt ?? null,
  };
}

/** A limit alert's data (docs/webhooks.md "Grant limit alerts"): the grant, which limit, its window, and how much of it is spent. */
export function grantAlertView(
  grant: Grant,
  alert: { limit: string; window: string; spent: Minor; max: Minor },
  now: Date,
  chargeId?: string,
) {
  return {
    grant: grantView(grant, now),
    limit: alert.limit,
    window: alert.window,
    spent: amount(alert.spent, grant.currency),
    max: amount(alert.max, grant.currency),
    ...(chargeId !== undefined ? { chargeId } : {}),
  };
}

/** A grant request as the agent sees it; `grant` once the payer allowed it, with `key` only on the claiming read. */
export function grantRequestView(request: GrantRequest, opts: { consentUrl: string; grant?: Grant; key?: string; now?: Date }) {
  const now = opts.now ?? new Date();
  return {
    id: request.id,
    status: grantRequestStatus(request, now),
    consentUrl: opts.consentUrl,
    expiresAt: request.expiresAt,
    grant: opts.grant ? { ...grantView(opts.grant, now), ...(opts.key ? { key: opts.key } : {}) } : null,
  };
}

/**
 * POST /api/v1/users/me/grants answered: 201 the Grant and its key, as it was made at `now`. The
 * one rendering, sent and stored sealed under its Idempotency-Key (a replay shows the key again).
 */
export function renderIssuedGrant({ grant, key, now }: { grant: Grant; key: string; now: Date }): Rendered {
  return { statusCode: 201, body: { ...grantView(grant, now), key } };
}
