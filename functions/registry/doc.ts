/**
 * What the registry's operations (each entry's `operation`, functions/registry/*.ts) are written with:
 * the OpenAPI shapes (`OperationDoc`, `ResponseDoc`), answers (`ok`, `errors`, `BUSY`, `BODY_ERRORS`), the
 * examples more than one area shows, and the refusals made by the very code that refuses (`invalid`
 * runs the schema the handler validates with, `amountProblem` core/money.ts's parser), never retyped.
 * Nothing here runs a validator at import (what would is `lazy`), and each entry's operation is a thunk
 * that only the OpenAPI generator (functions/api/openapi/document.ts) calls.
 */

import { LosslessNumber } from 'lossless-json';
import type * as z from 'zod';
import { DEFAULT_MAX_AMOUNT } from '../config';
import { captureChargeSchema, listChargesQuerySchema, listTopupsQuerySchema, releaseChargeSchema } from '../contracts/request.schemas';
import { errorBody } from '../contracts/response.schemas';
import { validate } from '../contracts/validation';
import { AmountError, type Currency, parseAmount, unitsToMinor } from '../core/money';
import { refusalText as msg } from '../messages/catalogue';
import { AUTH_MESSAGES } from '../messages/credentials';
import { isRefusal } from '../messages/refusal';

/** A value computed the first time it is asked for (a validator's message), then kept. */
export function lazy<T>(make: () => T): () => T {
  let made: { value: T } | undefined;
  return () => {
    made ??= { value: make() };
    return made.value;
  };
}

/**
 * A refused input's message, made by the very schema the handler validates with (contracts/validation.ts
 * words it): the document's 400 examples are produced by the checks themselves, never retyped.
 */
export function invalid(schema: z.ZodType, input: unknown): string {
  try {
    validate(schema, input);
  } catch (error) {
    if (isRefusal(error, 'invalidInput')) return error.message;
    throw error;
  }
  throw new Error(`the example input passes its schema: ${JSON.stringify(input)}`);
}

/** A JSON number as the body parser hands it to a schema (its exact literal). */
export const num = (literal: string) => new LosslessNumber(literal);

/**
 * An amount's refusal as core/money.ts words it (the schemas name the field the same way), at the
 * default maximum: a stage may set another MAX_AMOUNT, and the document describes the default.
 */
export function amountProblem(literal: string, currency: Currency, field = 'amount'): string {
  try {
    parseAmount(literal, currency, unitsToMinor(DEFAULT_MAX_AMOUNT, currency), field);
  } catch (error) {
    if (error instanceof AmountError) return error.message;
    throw error;
  }
  throw new Error(`the example amount is valid: ${literal} ${currency}`);
}

/** `unknown field: x`, as every strict schema words a field it does not take. */
export const UNKNOWN_FIELD = lazy(() => invalid(releaseChargeSchema, { x: 1 }));

/** The credentials an operation accepts, by security scheme (docs: components.securitySchemes). */
export type Credential = 'agentKey' | 'userKey' | 'adminKey' | 'adminSigV4' | 'agentBearer';

/** Response headers the document declares (components.headers). */
export type ResponseHeader = 'Retry-After' | 'Idempotent-Replayed' | 'Allow';

export interface ResponseDoc {
  description: string;
  /** The JSON body's schema, a registered component. Absent with `contentType` for non-JSON answers. */
  schema?: z.ZodType;
  /** Default `application/json`. */
  contentType?: string;
  /** Named examples of the body (each is validated against the schema by redocly lint). */
  examples?: Record<string, unknown>;
  headers?: readonly ResponseHeader[];
}

export interface OperationDoc {
  summary: string;
  description?: string;
  tag: 'Agents' | 'Charges' | 'Users' | 'Withdrawals' | 'Admin' | 'Service' | 'MCP' | 'Webhooks' | 'x402' | 'Receipts';
  /** Alternatives; each a set of credentials sent together. `[]` is public. */
  security: readonly (readonly Credential[])[];
  /**
   * `true`: requires the Idempotency-Key header; `'optional'`: takes it (a creation whose answer holds
   * a secret shown once: without the header it runs as if idempotency did not exist). Either way its
   * stored answers come back with Idempotent-Replayed.
   */
  idempotent?: boolean | 'optional';
  /** Descriptions of the path's `{params}` (every one must be described). */
  pathParams?: Record<string, string>;
  /** The strict zod object the handler validates the query string with. */
  query?: z.ZodObject;
  /** The zod schema the handler validates the JSON body with, its component name and an example. */
  body?: { name: string; schema: z.ZodType; example: unknown };
  responses: Readonly<Record<number, ResponseDoc>>;
}

export const ok = (description: string, schema: z.ZodType, example: unknown, headers?: readonly ResponseHeader[]): ResponseDoc => ({
  description,
  schema,
  examples: { example },
  ...(headers ? { headers } : {}),
});

/** An error answer: `{"error": message}`, one example per message. */
export function errors(description: string, messages: readonly string[], headers?: readonly ResponseHeader[]): ResponseDoc {
  return {
    description,
    schema: errorBody,
    examples: Object.fromEntries(messages.map((error) => [slug(error), { error }])),
    ...(headers ? { headers } : {}),
  };
}

const slug = (text: string) =>
  text
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-|-$/g, '')
    .slice(0, 60) || 'error';

/** Answers every route that reads or writes the table may give. */
export const BUSY = errors(
  'DynamoDB kept throttling, or did not answer, past the SDK retries; retry after the given seconds with the same Idempotency-Key (a replay answers whatever the first request did).',
  [msg('serviceBusy')],
  ['Retry-After'],
);

/** Answers every route that reads a JSON body may give, on top of its own 400s. */
export const BODY_ERRORS = {
  413: errors('The body is larger than 16 KB.', [msg('bodyTooLarge')]),
  415: errors('A Content-Type other than application/json (parameters allowed; none at all is read as JSON).', [
    msg('unsupportedMediaType', 'application/json'),
  ]),
} as const;

/**
 * What an optional Idempotency-Key adds to a creation's answers (docs/idempotency.md "Creations"):
 * its refusal when malformed, the in-flight twin, the reuse with another body.
 */
export const OPTIONAL_IDEMPOTENCY_ERRORS = {
  409: errors(
    'A request with this Idempotency-Key is still in flight; retry after the given seconds.',
    [msg('idempotencyInProgress')],
    ['Retry-After'],
  ),
  422: errors('The Idempotency-Key was used with a different request (its stored answer is given only to the same request).', [
    msg('idempotencyMismatch'),
  ]),
} as const;

/** The 400 an optional Idempotency-Key that is not 1-255 printable ASCII characters gets. */
export const INVALID_IDEMPOTENCY_KEY = () => msg('invalidIdempotencyKey');

export const IDEMPOTENCY_ERRORS = {
  409: errors('A request with this Idempotency-Key is still in flight.', [msg('idempotencyInProgress')], ['Retry-After']),
  422: errors('The Idempotency-Key was used with a different request.', [msg('idempotencyMismatch')]),
} as const;

/** The problems of an amount and its currency, as a body with both (charge, credit) words them. */
export const moneyProblems = (schema: z.ZodType) => [
  invalid(schema, { currency: 'USD' }),
  invalid(schema, { amount: '1.5', currency: 'USD' }),
  amountProblem('0', 'USD'),
  amountProblem('1.001', 'USD'),
  amountProblem('1000001', 'USD'),
  invalid(schema, { amount: num('1'), currency: 'EUR' }),
];

export const LIST_400 = lazy(() => [
  invalid(listTopupsQuerySchema, { limit: 'x' }),
  invalid(listTopupsQuerySchema, { limit: '101' }),
  msg('cursorInvalid'),
  UNKNOWN_FIELD(),
]);

export const PAGE_400 = lazy(() => invalid(listChargesQuerySchema, { page: '0' }));

/** The address the examples' links are on. */
export const EXAMPLE_BASE_URL = 'https://api.example.com';

/** A charge's fields, as every example shows them; a settled one adds its receipt link (EXAMPLE_CHARGE). */
export const EXAMPLE_CHARGE_FIELDS = {
  id: 'c01jhx3k6v1f8q2n7c9m4p5r6s7',
  idempotencyKey: '5b0c7d1e-0000-4000-8000-000000000001',
  amount: 1.5,
  currency: 'USD',
  description: 'forecast for Lisbon',
  status: 'SUCCESS',
  createdAt: '2026-01-15T09:30:00.000Z',
  failureReason: null,
  pendingReason: null,
  expiresAt: null,
  authorizedAmount: null,
  refundedAmount: 0,
};

/** A SUCCESS charge: with its receipt link (DESIGN §27). */
export const EXAMPLE_CHARGE = {
  ...EXAMPLE_CHARGE_FIELDS,
  receiptUrl: `${EXAMPLE_BASE_URL}/api/v1/receipts/${EXAMPLE_CHARGE_FIELDS.id}`,
};

/** Refunded in part: the charge's receipt link and its refunds' (type `refund`). */
export const EXAMPLE_REFUNDED = {
  ...EXAMPLE_CHARGE,
  refundedAmount: 0.5,
  refundReceiptUrl: `${EXAMPLE_BASE_URL}/api/v1/receipts/${EXAMPLE_CHARGE_FIELDS.id}.refund`,
};

export const LIFECYCLE_400 = [msg('missingIdempotencyKey'), msg('invalidIdempotencyKey'), msg('invalidJsonBody')];

export const LIFECYCLE_AMOUNT_400 = lazy(() => [
  invalid(captureChargeSchema, { amount: '1' }),
  amountProblem('0', 'USD'),
  amountProblem('1.001', 'USD'),
  amountProblem('1000001', 'USD'),
  UNKNOWN_FIELD(),
]);

export const EXAMPLE_GRANT = {
  id: 'g01jhx3k6v1f8q2n7c9m4p5r6s7',
  agent: { id: 'a01jhx3k6v1f8q2n7c9m4p5r6s7', name: 'weather-bot' },
  currency: 'USD',
  limits: { perCharge: 5, total: 20 },
  approvalAbove: 2,
  description: 'weather lookups',
  expiresAt: '2026-01-16T09:30:00.000Z',
  status: 'active',
  spent: 0,
  createdAt: '2026-01-15T09:30:00.000Z',
  revokedAt: null,
};

export const USER_401 = errors('The user key is missing, unknown or rotated.', [msg(AUTH_MESSAGES.user)]);

/** The operator's routes: x-admin-key, or SigV4 where the stage authorizes them with IAM (docs/operating/runbooks.md, "Admin access"). */
export const ADMIN: OperationDoc['security'] = [['adminKey'], ['adminSigV4']];

export const ADMIN_401 = errors('The admin key is wrong (where the stage takes the admin key).', [msg(AUTH_MESSAGES.admin)]);

export const ROTATED_USER_KEY_EXAMPLE = {
  userKey: 'uk_live_7Hn2QxWbR5tKp9ZsL3vC8mYdE4gF6jA1uBo',
  revokedGrants: [],
  deletedWebhooks: [],
  releasedCharges: [],
  endedSessions: 1,
  removedPasskeys: [],
};

export const WALLET = '9WzDXwBbmkg8ZTbNMqUxvQRAyrZzDsGYdLVL9zYtAWWM';

/** A payout's fields; a COMPLETED one adds its receipt link (EXAMPLE_PAYOUT). */
export const EXAMPLE_PAYOUT_FIELDS = {
  id: 'p01jhx3k6v1f8q2n7c9m4p5r6s7',
  agentId: 'a01jhx3k6v1f8q2n7c9m4p5r6s7',
  currency: 'USDC',
  status: 'COMPLETED',
  destination: { network: 'SOL', walletAddress: WALLET },
  externalId: '5VERv8NMvzbJMEkV8xnrLkEaWRtSz9CosKDYjCJjBRnbJLgp8uirBgmQpjKhoR4tjF3ZpRzrFmBV6UjKdiSZkQUW',
  txHash: '5VERv8NMvzbJMEkV8xnrLkEaWRtSz9CosKDYjCJjBRnbJLgp8uirBgmQpjKhoR4tjF3ZpRzrFmBV6UjKdiSZkQUW',
  createdAt: '2026-01-15T09:30:00.000Z',
  processedAt: '2026-01-15T09:30:01.000Z',
  amount: 10,
  fee: 0.3,
  netAmount: 9.7,
  platformFeeRate: '3%',
  accountCreationFee: 0,
  failureReason: null,
};

export const EXAMPLE_PAYOUT = {
  ...EXAMPLE_PAYOUT_FIELDS,
  receiptUrl: `${EXAMPLE_BASE_URL}/api/v1/receipts/${EXAMPLE_PAYOUT_FIELDS.id}`,
};

export const EXAMPLE_BALANCES = { USD: 25.5, USDC: 0 };

/** What the `$default` route answers: every method and path no operation matches. */
export const UNMATCHED_ROUTE: ResponseDoc = errors('No route matches this method and path.', [msg('notFound')]);
