/**
 * What docs/openapi.json says about each route of functions/api/routes.ts, keyed by route name:
 * who may call it, its parameters and body (the very zod schemas the handler validates with), and
 * every answer it gives, with the exact error messages. The document is generated from ROUTES and
 * this table (openapi/document.ts); a route without an entry fails the generator and the tests.
 */
import { LosslessNumber } from 'lossless-json';
import type * as z from 'zod';
import { DEFAULT_MAX_AMOUNT } from '../../config';
import { createGrantRequestSchema, createGrantSchema, listGrantsQuerySchema } from '../../contracts/grants';
import { MCP_AUTH_MESSAGE } from '../../contracts/mcp';
import {
  adminListPayoutsQuerySchema,
  captureChargeSchema,
  createChargeSchema,
  createTopupSchema,
  createWebhookSchema,
  creditSchema,
  listAgentsQuerySchema,
  listChargesQuerySchema,
  listDeliveriesQuerySchema,
  listTopupsQuerySchema,
  listUserChargesQuerySchema,
  listWithdrawalsQuerySchema,
  policySchema,
  refundChargeSchema,
  registerAgentSchema,
  releaseChargeSchema,
  updateAgentSchema,
  withdrawSchema,
} from '../../contracts/request.schemas';
import {
  adminAgentBody,
  agentBalanceBody,
  agentBody,
  agentListBody,
  chargeBody,
  chargeListBody,
  component,
  createdGrantBody,
  createdUserBody,
  createdWebhookBody,
  errorBody,
  grantBody,
  grantListBody,
  grantRequestBody,
  healthBody,
  jsonRpcMessage,
  jsonRpcMessages,
  meBody,
  openApiDocumentBody,
  payoutBody,
  payoutListBody,
  pendingChargeBody,
  policyBody,
  registeredAgentBody,
  rotatedAgentKeyBody,
  rotatedUserKeyBody,
  topupBody,
  topupListBody,
  userBody,
  userChargeListBody,
  webhookDeliveryListBody,
  webhookEventBody,
  webhookListBody,
  webhookReceivedBody,
  withdrawalBody,
} from '../../contracts/response.schemas';
import { validate } from '../../contracts/validation';
import {
  createPurchaseSchema,
  facilitatorRequestSchema,
  listX402PaymentsQuerySchema,
  purchaseListSchema,
  purchaseReceiptSchema,
  purchaseSchema,
  settleResponseSchema,
  supportedResponseSchema,
  verifyResponseSchema,
  x402PaymentListSchema,
  x402SettingsSchema,
} from '../../contracts/x402';
import { REGISTRATION_MESSAGE } from '../../core/agents';
import { MAX_PAGE_DEPTH } from '../../core/charges';
import { AGENT_EVENT_TYPES, USER_EVENT_TYPES } from '../../core/events';
import { MAX_ACTIVE_GRANTS } from '../../core/grants';
import { AmountError, type Currency, parseAmount, unitsToMinor } from '../../core/money';
import { judgeRequirements, type PurchaseSettings } from '../../core/purchases';
import { MAX_OPEN_TOPUPS } from '../../core/topups';
import { MAX_WEBHOOKS_PER_OWNER } from '../../core/webhooks';
import { X402_VERSION } from '../../core/x402';
import { refusalText as msg } from '../../messages/catalogue';
import { AUTH_MESSAGES } from '../../messages/credentials';
import { isRefusal } from '../../messages/refusal';
import { type DocumentedRouteName, MCP_TOOL_NAMES } from '../../registry/routes';

/**
 * A refused input's message, made by the very schema the handler validates with (contracts/validation.ts
 * words it): the document's 400 examples are produced by the checks themselves, never retyped.
 */
function invalid(schema: z.ZodType, input: unknown): string {
  try {
    validate(schema, input);
  } catch (error) {
    if (isRefusal(error, 'invalidInput')) return error.message;
    throw error;
  }
  throw new Error(`the example input passes its schema: ${JSON.stringify(input)}`);
}

/** A JSON number as the body parser hands it to a schema (its exact literal). */
const num = (literal: string) => new LosslessNumber(literal);

/**
 * An amount's refusal as core/money.ts words it (the schemas name the field the same way), at the
 * default maximum: a stage may set another MAX_AMOUNT, and the document describes the default.
 */
function amountProblem(literal: string, currency: Currency, field = 'amount'): string {
  try {
    parseAmount(literal, currency, unitsToMinor(DEFAULT_MAX_AMOUNT, currency), field);
  } catch (error) {
    if (error instanceof AmountError) return error.message;
    throw error;
  }
  throw new Error(`the example amount is valid: ${literal} ${currency}`);
}

/** `unknown field: x`, as every strict schema words a field it does not take. */
const UNKNOWN_FIELD = invalid(releaseChargeSchema, { x: 1 });

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
  tag: 'Agents' | 'Charges' | 'Users' | 'Withdrawals' | 'Admin' | 'Service' | 'MCP' | 'Webhooks' | 'x402';
  /** Alternatives; each a set of credentials sent together. `[]` is public. */
  security: readonly (readonly Credential[])[];
  /** Requires the Idempotency-Key header; its stored answers come back with Idempotent-Replayed. */
  idempotent?: boolean;
  /** Descriptions of the path's `{params}` (every one must be described). */
  pathParams?: Record<string, string>;
  /** The strict zod object the handler validates the query string with. */
  query?: z.ZodObject;
  /** The zod schema the handler validates the JSON body with, its component name and an example. */
  body?: { name: string; schema: z.ZodType; example: unknown };
  responses: Readonly<Record<number, ResponseDoc>>;
}

const ok = (description: string, schema: z.ZodType, example: unknown, headers?: readonly ResponseHeader[]): ResponseDoc => ({
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

const IDEMPOTENCY_ERRORS = {
  409: errors('A request with this Idempotency-Key is still in flight.', [msg('idempotencyInProgress')], ['Retry-After']),
  422: errors('The Idempotency-Key was used with a different request.', [msg('idempotencyMismatch')]),
} as const;

/** A valid charge body, for the examples of one field's problem. */
const CHARGE_BODY = { amount: num('1.5'), currency: 'USD' };

/** The problems of an amount and its currency, as a body with both (charge, credit) words them. */
const moneyProblems = (schema: z.ZodType) => [
  invalid(schema, { currency: 'USD' }),
  invalid(schema, { amount: '1.5', currency: 'USD' }),
  amountProblem('0', 'USD'),
  amountProblem('1.001', 'USD'),
  amountProblem('1000001', 'USD'),
  invalid(schema, { amount: num('1'), currency: 'EUR' }),
];

/** The operator's routes: x-admin-key, or SigV4 where the stage authorizes them with IAM (docs/operating/runbooks.md, "Admin access"). */
const ADMIN: OperationDoc['security'] = [['adminKey'], ['adminSigV4']];
const ADMIN_401 = errors('The admin key is wrong (where the stage takes the admin key).', [msg(AUTH_MESSAGES.admin)]);

const LIST_400 = [
  invalid(listTopupsQuerySchema, { limit: 'x' }),
  invalid(listTopupsQuerySchema, { limit: '101' }),
  msg('cursorInvalid'),
  UNKNOWN_FIELD,
];
const PAGE_400 = invalid(listChargesQuerySchema, { page: '0' });

const EXAMPLE_CHARGE = {
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
const EXAMPLE_PENDING = {
  ...EXAMPLE_CHARGE,
  amount: 15,
  status: 'PENDING',
  pendingReason: 'user_approval',
  expiresAt: '2026-01-15T09:45:00.000Z',
  approvalUrl: 'https://api.example.com/approve/c01jhx3k6v1f8q2n7c9m4p5r6s7.Zm9yIGV4YW1wbGUgb25seSwgbm90IGEgcmVhbCB0b2tlbg',
};
// --- The charge lifecycle (docs/lifecycle.md) ---
const EXAMPLE_HOLD = {
  ...EXAMPLE_CHARGE,
  amount: 1,
  description: 'LLM call, metered',
  status: 'PENDING',
  pendingReason: 'capture',
  expiresAt: '2026-01-15T10:30:00.000Z',
  authorizedAmount: 1,
};
const EXAMPLE_CAPTURED = { ...EXAMPLE_HOLD, amount: 0.37, status: 'SUCCESS', pendingReason: null };
const EXAMPLE_RELEASED = { ...EXAMPLE_HOLD, status: 'FAILED', pendingReason: null, failureReason: 'released by agent' };
const EXAMPLE_REFUNDED = { ...EXAMPLE_CHARGE, refundedAmount: 0.5 };
const LIFECYCLE_401 = errors('The agent key is unknown, disabled or rotated (checked inside the transaction: at once).', [
  msg(AUTH_MESSAGES.lifecycle),
]);
const LIFECYCLE_404 = errors("No such charge, or another agent's.", [msg('chargeNotFound')]);
const LIFECYCLE_400 = [msg('missingIdempotencyKey'), msg('invalidIdempotencyKey'), msg('invalidJsonBody')];
const LIFECYCLE_AMOUNT_400 = [
  invalid(captureChargeSchema, { amount: '1' }),
  amountProblem('0', 'USD'),
  amountProblem('1.001', 'USD'),
  amountProblem('1000001', 'USD'),
  UNKNOWN_FIELD,
];
// --- end of the charge lifecycle ---

const EXAMPLE_POLICY = {
  perCharge: { USD: 50 },
  daily: { USD: 200 },
  approvalAbove: { USD: 10 },
  approvalWindowSeconds: 900,
  agents: { a01jhx3k6v1f8q2n7c9m4p5r6s7: { blocked: true } },
};
const EXAMPLE_USDC_TOPUP = {
  id: 't01jhx3k6v1f8q2n7c9m4p5r6s7',
  currency: 'USDC',
  amount: null,
  status: 'PENDING',
  externalId: null,
  createdAt: '2026-01-15T09:30:00.000Z',
  expiresAt: '2026-01-15T10:30:00.000Z',
  completedAt: null,
  failureReason: null,
  network: 'SOL',
  address: '9xQeWvG816bUx9EPjHmaT23yvVM2ZWbrrpZb9PusVFin',
  reference: 'GhRrKzQW4m7xqfZ3pGfC2JcPZy3vJ8JxJxW1bJ8yZ1yW',
  solanaPayUrl:
    'solana:9xQeWvG816bUx9EPjHmaT23yvVM2ZWbrrpZb9PusVFin?spl-token=EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v&reference=GhRrKzQW4m7xqfZ3pGfC2JcPZy3vJ8JxJxW1bJ8yZ1yW&label=Agent%20Payment%20Service&message=Top%20up%20your%20balance',
};

const EXAMPLE_GRANT = {
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

const EXAMPLE_GRANT_REQUEST = {
  id: 'gr01jhx3k6v1f8q2n7c9m4p5r6s7',
  status: 'pending',
  consentUrl: 'https://pay.example.com/consent/3q2-7wVb8yZJm3S0wXH1z2yQf0nU5cN6kLrTtE4pA9s',
  expiresAt: '2026-01-15T09:45:00.000Z',
  grant: null,
};

const USER_401 = errors('The user key is missing, unknown or rotated.', [msg(AUTH_MESSAGES.user)]);
const ROTATED_USER_KEY_EXAMPLE = {
  userKey: 'uk_live_7Hn2QxWbR5tKp9ZsL3vC8mYdE4gF6jA1uBo',
  revokedGrants: [],
  deletedWebhooks: [],
  releasedCharges: [],
};
const SETTLE_ERRORS = {
  401: USER_401,
  404: errors("No such charge, or another user's.", [msg('chargeNotFound')]),
  409: errors('The charge has moved on, or its approval window has passed.', [
    msg('chargeNotPending'),
    msg('chargeExpired'),
    msg('chargeChanging'),
  ]),
  503: BUSY,
};
const WALLET = '9WzDXwBbmkg8ZTbNMqUxvQRAyrZzDsGYdLVL9zYtAWWM';
const EXAMPLE_PAYOUT = {
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
const EXAMPLE_BALANCES = { USD: 25.5, USDC: 0 };

// --- The operator and a disabled agent's money (docs/payouts.md "Held payouts", docs/lifecycle.md) ---
const EXAMPLE_HELD_PAYOUT = {
  ...EXAMPLE_PAYOUT,
  status: 'HELD',
  externalId: null,
  txHash: null,
  processedAt: null,
};
const EXAMPLE_CANCELLED_PAYOUT = {
  ...EXAMPLE_HELD_PAYOUT,
  status: 'FAILED',
  processedAt: '2026-01-15T11:00:00.000Z',
  failureReason: 'cancelled by operator',
};
const PAYOUT_404 = errors('No such payout of this agent (or no such agent).', [msg('payoutNotFound')]);

const OPERATOR_MONEY_OPERATIONS = {
  'admin-list-payouts': {
    summary: 'List held payouts',
    description:
      "The operator's work list: payouts held because their agent was disabled before they were paid (HELD, the default), " +
      'oldest first; or those in flight (PENDING, PROCESSING). Release or cancel each held one.',
    tag: 'Admin',
    security: ADMIN,
    query: adminListPayoutsQuerySchema,
    responses: {
      200: ok('A page of payouts, oldest first.', payoutListBody, { payouts: [EXAMPLE_HELD_PAYOUT], nextCursor: null }),
      400: errors('An invalid query parameter.', [invalid(adminListPayoutsQuerySchema, { status: 'x' }), ...LIST_400]),
      401: ADMIN_401,
      503: BUSY,
    },
  },
  'admin-release-payout': {
    summary: 'Release a held payout',
    description:
      'HELD → PENDING: the reconciler sends it to the payout worker again, which pays it although the agent is disabled ' +
      '(unless the agent is enabled or disabled again after this release). Releasing one released before answers it as it is now.',
    tag: 'Admin',
    security: ADMIN,
    pathParams: { id: 'The agent id.', payoutId: 'The payout id.' },
    body: { name: 'ReleasePayoutRequest', schema: releaseChargeSchema, example: {} },
    responses: {
      200: ok('The payout as it is now (PENDING once released).', payoutBody, { ...EXAMPLE_HELD_PAYOUT, status: 'PENDING' }),
      400: errors('A body that is not `{}`.', [UNKNOWN_FIELD, msg('invalidJsonBody')]),
      401: ADMIN_401,
      404: PAYOUT_404,
      409: errors('The payout is not held (and was never released).', [msg('payoutNotHeld')]),
      ...BODY_ERRORS,
      503: BUSY,
    },
  },
  'admin-cancel-payout': {
    summary: 'Cancel a held payout',
    description:
      "HELD → FAILED (`cancelled by operator`): its gross amount, fee included, goes back to the agent's balance, in one " +
      'transaction with the idempotency record (stored for 24 h). Only a held payout: one in flight may be moving money at its rail.',
    tag: 'Admin',
    security: ADMIN,
    idempotent: true,
    pathParams: { id: 'The agent id.', payoutId: 'The payout id.' },
    body: { name: 'CancelPayoutRequest', schema: releaseChargeSchema, example: {} },
    responses: {
      200: ok('Cancelled; the gross is back on the agent balance.', payoutBody, EXAMPLE_CANCELLED_PAYOUT, ['Idempotent-Replayed']),
      400: errors('Missing Idempotency-Key, or a body that is not `{}`.', [...LIFECYCLE_400, UNKNOWN_FIELD]),
      401: ADMIN_401,
      404: PAYOUT_404,
      409: errors(
        'The payout is not held (released, paid, or failed), or a request with this key is in flight.',
        [msg('payoutNotHeld'), msg('idempotencyInProgress')],
        ['Retry-After'],
      ),
      ...BODY_ERRORS,
      422: IDEMPOTENCY_ERRORS[422],
      503: BUSY,
    },
  },
  'admin-list-agent-charges': {
    summary: "List any agent's charges",
    description:
      "An agent's charges as the agent lists them, enabled or not: what the operator may give back to the payers of a " +
      'disabled agent (`POST …/charges/{chargeId}/refund`, or `npm run admin -- return-earnings`).',
    tag: 'Admin',
    security: ADMIN,
    pathParams: { id: 'The agent id.' },
    query: listChargesQuerySchema,
    responses: {
      200: ok('A page of charges, newest first.', chargeListBody, {
        data: [EXAMPLE_CHARGE],
        pagination: { total: 1, page: 1, limit: 20, totalPages: 1 },
        nextCursor: null,
      }),
      400: errors('An invalid query parameter.', [PAGE_400, ...LIST_400, msg('pageTooDeep', MAX_PAGE_DEPTH)]),
      401: ADMIN_401,
      404: errors('No such agent.', [msg('agentNotFound')]),
      503: BUSY,
    },
  },
  'admin-refund-charge': {
    summary: "Refund any agent's charge",
    description:
      "The agent's refund, made by the operator: all that is left (default) or part of a SUCCESS charge goes from the agent's " +
      'earned balance back to its payer, whether the agent is enabled or not (a disabled agent cannot refund; its earnings can ' +
      'still be returned). One transaction with the idempotency record (stored for 24 h); the charge keeps the operator’s share ' +
      'and the agent gets `charge.refunded`.',
    tag: 'Admin',
    security: ADMIN,
    idempotent: true,
    pathParams: { id: 'The agent id.', chargeId: 'The charge id.' },
    body: { name: 'AdminRefundChargeRequest', schema: refundChargeSchema, example: {} },
    responses: {
      200: ok('Refunded.', chargeBody, EXAMPLE_REFUNDED, ['Idempotent-Replayed']),
      400: errors('Missing Idempotency-Key, an invalid body or amount, or more than is left to refund.', [
        ...LIFECYCLE_400,
        ...LIFECYCLE_AMOUNT_400,
        msg('amountExceedsRefundable'),
      ]),
      401: ADMIN_401,
      402: errors("The agent's earned balance is too low (already withdrawn, or held in a payout: cancel it first).", [
        msg('withdrawalInsufficientBalance'),
      ]),
      404: errors('No such charge of this agent.', [msg('chargeNotFound')]),
      409: errors(
        "The charge is not SUCCESS, it kept changing under concurrent refunds, a request with this key is in flight, or the user's balance is at its limit.",
        [msg('chargeNotRefundable'), msg('chargeChanging'), msg('idempotencyInProgress'), msg('userBalanceLimit')],
        ['Retry-After'],
      ),
      ...BODY_ERRORS,
      422: IDEMPOTENCY_ERRORS[422],
      503: BUSY,
    },
  },
} satisfies Partial<Record<DocumentedRouteName, OperationDoc>>;
// --- end of the operator and a disabled agent's money ---

type WebhookOperation = 'create' | 'list' | 'delete' | 'deliveries' | 'test';

/** The five webhook operations of one kind of owner (agents under /agents/webhooks, users under /users/me/webhooks). */
function webhookOperations<W extends 'agent' | 'user'>(who: W): Record<`${W}-webhooks-${WebhookOperation}`, OperationDoc> {
  const security: OperationDoc['security'] = [[who === 'agent' ? 'agentKey' : 'userKey']];
  const unauthorized =
    who === 'agent' ? errors('The agent key is missing or unknown, or the agent is disabled.', [msg(AUTH_MESSAGES.webhooks)]) : USER_401;
  const types = who === 'agent' ? AGENT_EVENT_TYPES : USER_EVENT_TYPES;
  const notFound = errors("No such endpoint, or another owner's.", [msg('webhookNotFound')]);
  const example = {
    id: 'wh_01jhx3k6v1f8q2n7c9m4p5r6s7',
    url: 'https://receiver.example.com/hooks/payments',
    events: [types[0]],
    createdAt: '2026-01-15T09:30:00.000Z',
  };
  const idParam = { id: 'The webhook endpoint id (`wh_…`).' };
  // Computed keys widen to string: the five are written out below, one per WebhookOperation.
  const operations: Record<string, OperationDoc> = {
    [`${who}-webhooks-create`]: {
      summary: `Register a webhook endpoint (${who})`,
      description:
        `Events: ${types.join(', ')}. Deliveries are signed per Standard Webhooks with the returned secret, shown only ` +
        'here. The URL must be https and resolve to public addresses (locally http://127.0.0.1 is allowed). At most 10 endpoints.',
      tag: 'Webhooks',
      security,
      body: {
        name: 'CreateWebhookRequest',
        schema: createWebhookSchema,
        example: { url: 'https://receiver.example.com/hooks/payments', events: [types[0]] },
      },
      responses: {
        201: ok('Registered; store the secret now.', createdWebhookBody, { ...example, secret: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw' }),
        400: errors('A bad URL or event type.', [
          invalid(createWebhookSchema, {}),
          msg('webhookUrlNotHttps'),
          msg('urlNotPublic'),
          msg('urlHostUnresolved'),
          msg('webhookUrlCredentials'),
          msg('unknownEventType', 'x', who, types),
          UNKNOWN_FIELD,
        ]),
        401: unauthorized,
        409: errors('The owner already has 10 endpoints.', [msg('webhookLimit', MAX_WEBHOOKS_PER_OWNER)]),
        ...BODY_ERRORS,
        503: BUSY,
      },
    },
    [`${who}-webhooks-list`]: {
      summary: `List webhook endpoints (${who})`,
      description: 'Never the secrets.',
      tag: 'Webhooks',
      security,
      responses: { 200: ok('The endpoints, oldest first.', webhookListBody, { webhooks: [example] }), 401: unauthorized, 503: BUSY },
    },
    [`${who}-webhooks-delete`]: {
      summary: `Delete a webhook endpoint (${who})`,
      description: 'Deliveries still queued for it are dropped.',
      tag: 'Webhooks',
      security,
      pathParams: idParam,
      responses: { 204: { description: 'Deleted.' }, 401: unauthorized, 404: notFound, 503: BUSY },
    },
    [`${who}-webhooks-deliveries`]: {
      summary: `Recent delivery attempts of an endpoint (${who})`,
      description: 'Every attempt, newest first, kept 30 days: event id and type, status code, error, time; `dead` once retries ran out.',
      tag: 'Webhooks',
      security,
      pathParams: idParam,
      query: listDeliveriesQuerySchema,
      responses: {
        200: ok('Attempts, newest first.', webhookDeliveryListBody, {
          deliveries: [
            {
              id: '01jhx3k6v1f8q2n7c9m4p5r6s7',
              eventId: 'evt_01jhx3k6v1f8q2n7c9m4p5r6s7',
              type: types[0],
              attempt: 1,
              status: 'succeeded',
              statusCode: 200,
              error: null,
              createdAt: '2026-01-15T09:30:00.000Z',
              durationMs: 42,
              nextAttemptAt: null,
            },
          ],
        }),
        400: errors('An invalid query parameter.', [
          invalid(listDeliveriesQuerySchema, { limit: 'x' }),
          invalid(listDeliveriesQuerySchema, { limit: '101' }),
          UNKNOWN_FIELD,
        ]),
        401: unauthorized,
        404: notFound,
        503: BUSY,
      },
    },
    [`${who}-webhooks-test`]: {
      summary: `Send a test ping to an endpoint (${who})`,
      description:
        'Queues a `ping` event for this endpoint only; it travels the same signed path as every event but is tried once, ' +
        'never retried: the attempt shows in the deliveries list (`dead` if it failed). At most 5 per endpoint a minute ' +
        '(the minute starts at the first ping).',
      tag: 'Webhooks',
      security,
      pathParams: idParam,
      responses: {
        202: ok('Queued; the event as it will be delivered.', webhookEventBody, {
          id: 'evt_01jhx3k6v1f8q2n7c9m4p5r6s7',
          type: 'ping',
          createdAt: '2026-01-15T09:30:00.000Z',
          data: { webhookId: example.id, url: example.url },
        }),
        401: unauthorized,
        404: notFound,
        429: errors('The endpoint had 5 test pings this minute; nothing was queued.', [msg('tooManyTestEvents')], ['Retry-After']),
        503: BUSY,
      },
    },
  };
  return operations as Record<`${W}-webhooks-${WebhookOperation}`, OperationDoc>;
}

// --- x402 (docs/x402.md): the facilitator a stock x402 seller middleware calls at `<base>/x402` ---
const X402_NETWORK_EXAMPLE = 'solana:EtWTRABZaYq6iMfeYKouRu166VU2xqa1';
const X402_FEE_PAYER = '7xKXtg2CW87d97TXJSDpbD5jBkheTqA83TZRuJosgAsU';
const X402_PAY_TO = '9WzDXwBbmkg8ZTbNMqUxvQRAyrZzDsGYdLVL9zYtAWWM';
const X402_MINT = '4zMMC9srt5Ri5X14GAgXhaHii3GnPAEERYPJgZJDncDU';
const X402_SIGNATURE = '5VERv8NMvzbJMEkV8xnrLkEaWRtSz9CosKDYjCJjBRnbJLgp8uirBgmQpjKhoR4tjF3ZpRzrFmBV6UjKdiSZkQUW';
/** An agent's seller memo (`x402:<agentId>`, GET /api/v1/agents/x402). */
const X402_MEMO = 'x402:a01jhx3k6v1f8q2n7c9m4p5r6s7';
const X402_REQUIREMENTS = {
  scheme: 'exact',
  network: X402_NETWORK_EXAMPLE,
  asset: X402_MINT,
  amount: '10000',
  payTo: X402_PAY_TO,
  maxTimeoutSeconds: 300,
  extra: { feePayer: X402_FEE_PAYER, memo: X402_MEMO },
};
const X402_REQUEST_EXAMPLE = {
  x402Version: 2,
  paymentPayload: {
    x402Version: 2,
    resource: { url: 'https://seller.example.com/weather', description: 'Weather', mimeType: 'application/json' },
    accepted: X402_REQUIREMENTS,
    payload: { transaction: 'AgAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA…' },
  },
  paymentRequirements: X402_REQUIREMENTS,
};
const X402_401 = errors('The agent key (x-agent-key or Authorization: Bearer) is missing, unknown or disabled.', [msg(AUTH_MESSAGES.x402)]);
const X402_400 = errors('Not an x402 v2 request body (a missing or malformed field).', [
  msg('invalidJsonBody'),
  invalid(facilitatorRequestSchema, { x402Version: 2, paymentRequirements: X402_REQUIREMENTS }),
  invalid(facilitatorRequestSchema, { ...X402_REQUEST_EXAMPLE, paymentRequirements: { ...X402_REQUIREMENTS, amount: 10000 } }),
  msg('paymentIdentifierInvalid', 'paymentPayload.extensions.payment-identifier'),
]);
const X402_IDENTIFIER_409 = errors(
  'The payment identifier (`paymentPayload.extensions.payment-identifier.info.id`) was used with another payment for this agent: nothing was verified, settled or credited.',
  [msg('paymentIdentifierConflict')],
);
const X402_IDENTIFIER_DOC =
  ' With the `payment-identifier` extension (`paymentPayload.extensions["payment-identifier"].info.id`, 16-128 characters of ' +
  'letters, digits, `-` and `_`), the same identifier with the same payment answers the first result (`Idempotent-Replayed: true`); ' +
  'with another payment, 409. Identifiers are kept per agent for 24 hours.';
const X402_OPERATIONS = {
  'x402-supported': {
    summary: 'x402: supported kinds',
    description:
      'What the facilitator settles: x402 v2, scheme `exact`, on the configured Solana network, with the fee payer in ' +
      '`extra.feePayer`. Public: a stock client sends its Bearer header here too, which is accepted and ignored.',
    tag: 'x402',
    security: [],
    responses: {
      200: ok('The supported kinds, extensions and signers.', component('X402SupportedResponse', supportedResponseSchema), {
        kinds: [{ x402Version: 2, scheme: 'exact', network: X402_NETWORK_EXAMPLE, extra: { feePayer: X402_FEE_PAYER } }],
        extensions: ['payment-identifier'],
        signers: { 'solana:*': [X402_FEE_PAYER] },
      }),
    },
  },
  'x402-verify': {
    summary: 'x402: verify a payment',
    description:
      "The stock `exact` scheme's checks (transaction layout, compute budget within the fee payer's caps, mint, recipient, " +
      "amount, the seller's memo, simulation) after the service's own: the fee payer in no instruction, `payTo` the treasury, " +
      '`asset` the USDC mint, the amount at least X402_MIN_AMOUNT (0.01 USDC by default), `extra.memo` the authenticated ' +
      "agent's seller memo (`invalid_seller_memo` otherwise). A payment already claimed (being settled or settled) is refused " +
      '(`duplicate_settlement`). A refusal is 200 with `isValid:false`, `invalidReason` and `invalidMessage`.' +
      X402_IDENTIFIER_DOC,
    tag: 'x402',
    security: [['agentKey'], ['agentBearer']],
    body: { name: 'X402FacilitatorRequest', schema: facilitatorRequestSchema, example: X402_REQUEST_EXAMPLE },
    responses: {
      200: {
        description: 'The x402 VerifyResponse.',
        schema: component('X402VerifyResponse', verifyResponseSchema),
        examples: {
          valid: { isValid: true, payer: '3Ujc6pW8vXsLfWqX1fGxG9m7mNh1vJ6yXg2CQRh4X5pN' },
          refused: {
            isValid: false,
            invalidReason: 'invalid_exact_svm_payload_recipient_mismatch',
            invalidMessage: 'payTo must be the service treasury',
            payer: '',
          },
          claimed: {
            isValid: false,
            invalidReason: 'duplicate_settlement',
            invalidMessage: 'this payment was settled already',
            payer: '3Ujc6pW8vXsLfWqX1fGxG9m7mNh1vJ6yXg2CQRh4X5pN',
          },
        },
        headers: ['Idempotent-Replayed'],
      },
      400: X402_400,
      401: X402_401,
      409: X402_IDENTIFIER_409,
      ...BODY_ERRORS,
      503: BUSY,
    },
  },
  'x402-settle': {
    summary: 'x402: settle a payment and credit the agent',
    description:
      'Verifies (every check of x402-verify), signs as the fee payer, sends, waits for `confirmed`, then credits the authenticated ' +
      "agent's USDC balance with the amount, once per payment (one transaction with its idempotency record; event `x402.payment.settled`). " +
      'The same payload settled again by the same agent answers the first SettleResponse (`Idempotent-Replayed: true`) and ' +
      'credits nothing; by another agent: `success:false` (`duplicate_settlement`). A refusal is 200 with `success:false`, ' +
      '`errorReason`, maybe `errorMessage`, `transaction` ("" when nothing was sent) and `network`.' +
      X402_IDENTIFIER_DOC,
    tag: 'x402',
    security: [['agentKey'], ['agentBearer']],
    body: { name: 'X402FacilitatorRequest', schema: facilitatorRequestSchema, example: X402_REQUEST_EXAMPLE },
    responses: {
      200: {
        description: 'The x402 SettleResponse.',
        schema: component('X402SettleResponse', settleResponseSchema),
        examples: {
          settled: {
            success: true,
            transaction: X402_SIGNATURE,
            network: X402_NETWORK_EXAMPLE,
            payer: '3Ujc6pW8vXsLfWqX1fGxG9m7mNh1vJ6yXg2CQRh4X5pN',
          },
          anotherAgent: {
            success: false,
            errorReason: 'duplicate_settlement',
            errorMessage: 'this payment was settled for another agent',
            payer: '',
            transaction: '',
            network: X402_NETWORK_EXAMPLE,
          },
        },
        headers: ['Idempotent-Replayed'],
      },
      400: X402_400,
      401: X402_401,
      409: errors(
        'The same payment is being credited by a concurrent request (`Retry-After`), or its payment identifier was used with another payment for this agent (nothing settled or credited).',
        [msg('idempotencyInProgress'), msg('paymentIdentifierConflict')],
        ['Retry-After'],
      ),
      ...BODY_ERRORS,
      503: BUSY,
    },
  },
  'agent-x402-settings': {
    summary: "x402: the seller's middleware settings",
    description:
      'What a seller puts in its stock x402 middleware: the facilitator URL, network, asset (USDC mint), payTo (the treasury), fee payer, ' +
      "and `extra` for each route's `accepts.extra`: `memo`, this agent's seller memo, which names it as the seller of the payment " +
      '(verify and settle refuse requirements without it).',
    tag: 'x402',
    security: [['agentKey'], ['agentBearer']],
    responses: {
      200: ok('The settings.', component('X402Settings', x402SettingsSchema), {
        facilitatorUrl: 'https://api.example.com/x402',
        network: X402_NETWORK_EXAMPLE,
        asset: X402_MINT,
        payTo: X402_PAY_TO,
        feePayer: X402_FEE_PAYER,
        extra: { memo: X402_MEMO },
      }),
      401: X402_401,
      503: BUSY,
    },
  },
  'agent-x402-payments': {
    summary: "x402: the agent's credited payments",
    description: 'Every x402 payment credited to the agent, newest first; `nextCursor` for the next page.',
    tag: 'x402',
    security: [['agentKey'], ['agentBearer']],
    query: listX402PaymentsQuerySchema,
    responses: {
      200: ok('A page of payments.', component('X402PaymentList', x402PaymentListSchema), {
        data: [
          {
            id: 'x402_01jhx3k6v1f8q2n7c9m4p5r6s7',
            amount: 0.01,
            currency: 'USDC',
            payer: '3Ujc6pW8vXsLfWqX1fGxG9m7mNh1vJ6yXg2CQRh4X5pN',
            transaction: X402_SIGNATURE,
            network: X402_NETWORK_EXAMPLE,
            resource: 'https://seller.example.com/weather',
            createdAt: '2026-01-15T09:30:00.000Z',
          },
        ],
        nextCursor: null,
      }),
      400: errors('An invalid query parameter.', LIST_400),
      401: X402_401,
      503: BUSY,
    },
  },
} satisfies Partial<Record<DocumentedRouteName, OperationDoc>>;

/** x402 purchases (DESIGN §22): an agent pays any x402 seller from its payer's USDC under a grant. */
const PURCHASE = component('X402Purchase', purchaseSchema);
const EXAMPLE_PURCHASE = {
  id: 'xp01jhx3k6v1f8q2n7c9m4p5r6s7a01jhx3k6v1f8q2n7c9m4p5r6s7',
  status: 'PENDING',
  pendingReason: null,
  failureReason: null,
  amount: 0.01,
  currency: 'USDC',
  payTo: '3Ujc6pW8vXsLfWqX1fGxG9m7mNh1vJ6yXg2CQRh4X5pN',
  network: X402_NETWORK_EXAMPLE,
  resource: { url: 'https://seller.example.com/weather' },
  grantId: 'g01jhx3k6v1f8q2n7c9m4p5r6s7',
  createdAt: '2026-01-15T09:30:00.000Z',
  expiresAt: '2026-01-15T09:32:00.000Z',
  paymentPayload: { x402Version: 2, payload: { transaction: 'AgAAAA…' } },
  transaction: null,
};
/** The service's keys in the purchase examples: its hot wallet (the facilitator's fee payer) and treasury. */
const X402_PURCHASE_SERVICE_KEY = X402_FEE_PAYER;
const PURCHASE_SETTINGS: PurchaseSettings = {
  network: X402_NETWORK_EXAMPLE,
  usdcMint: X402_MINT,
  serviceKeys: [X402_FEE_PAYER, X402_PAY_TO],
  minimum: 10_000,
  maximum: 1_000_000_000_000,
  isAddress: (text) => /^[1-9A-HJ-NP-Za-km-z]{32,44}$/.test(text),
};
const PURCHASE_REQUIREMENTS = {
  scheme: 'exact',
  network: X402_NETWORK_EXAMPLE,
  asset: X402_MINT,
  amount: '10000',
  payTo: '3Ujc6pW8vXsLfWqX1fGxG9m7mNh1vJ6yXg2CQRh4X5pN',
  maxTimeoutSeconds: 60,
  extra: { feePayer: '2wKupLR9q6wXYppw8Gr2NvWxKBUqm4PPJKkQfoxHDBg4' },
};
/** A seller's requirements refused, as core/purchases.ts judges them (the message names the field). */
function requirementsProblem(change: Record<string, unknown>): string {
  const verdict = judgeRequirements({ ...PURCHASE_REQUIREMENTS, ...change }, PURCHASE_SETTINGS);
  if (verdict.ok) throw new Error(`the example requirements pass: ${JSON.stringify(change)}`);
  return verdict.message;
}
const PURCHASE_READ_404 = errors('No purchase of this agent has this id.', [msg('purchaseNotFound')]);
const purchaseOperations = {
  'agent-x402-purchase-create': {
    summary: 'x402: buy from any x402 seller',
    description:
      "Holds the payer's USDC exactly as a charge with `capture: false` would (the grant's and the policy's limits and approvals), then " +
      "signs the seller's payment with the service's hot wallet: one TransferChecked of exactly `amount` to `payTo`, fee payer the " +
      "seller's facilitator. `paymentPayload` is what a stock SchemeNetworkClient.createPaymentPayload returns: put it in the " +
      'PAYMENT-SIGNATURE of the retry. Captured (SUCCESS) once the transfer is on chain; EXPIRED, the hold back, once it can no longer land.',
    tag: 'x402',
    security: [['agentKey', 'userKey']],
    idempotent: true,
    body: {
      name: 'CreateX402PurchaseRequest',
      schema: createPurchaseSchema,
      example: {
        x402Version: 2,
        paymentRequirements: PURCHASE_REQUIREMENTS,
        resource: { url: 'https://seller.example.com/weather' },
      },
    },
    responses: {
      201: ok('Held, and the payment signed.', PURCHASE, EXAMPLE_PURCHASE, ['Idempotent-Replayed']),
      202: ok(
        'Above the approval threshold: PENDING `user_approval`, `paymentPayload` null; once the payer approves, GET the purchase for its payment.',
        PURCHASE,
        { ...EXAMPLE_PURCHASE, pendingReason: 'user_approval', paymentPayload: null },
        ['Idempotent-Replayed'],
      ),
      400: errors('Missing Idempotency-Key, or requirements this service does not pay (the field is named).', [
        msg('missingIdempotencyKey'),
        msg('x402VersionUnsupported', X402_VERSION),
        requirementsProblem({ scheme: 'upto' }),
        requirementsProblem({ network: 'solana:mainnet' }),
        requirementsProblem({ asset: X402_FEE_PAYER }),
        requirementsProblem({ amount: '1' }),
        requirementsProblem({ payTo: 'not-an-address' }),
        requirementsProblem({ payTo: X402_PURCHASE_SERVICE_KEY }),
        requirementsProblem({ extra: {} }),
        requirementsProblem({ extra: { feePayer: X402_PURCHASE_SERVICE_KEY } }),
        msg('grantCurrencyMismatch'),
        msg('invalidJsonBody'),
      ]),
      401: errors('The agent key is unknown or disabled, or the user key is unknown.', [
        msg(AUTH_MESSAGES.createCharge),
        msg(AUTH_MESSAGES.user),
      ]),
      402: errors(
        "Over one of the payer's or the grant's limits, or the balance is too low.",
        [msg('spendingLimitExceeded'), msg('insufficientBalance')],
        ['Idempotent-Replayed'],
      ),
      403: errors(
        'The payer has blocked this agent, or the grant is revoked or ended.',
        [msg('agentBlockedByUser')],
        ['Idempotent-Replayed'],
      ),
      409: IDEMPOTENCY_ERRORS[409],
      413: BODY_ERRORS[413],
      415: BODY_ERRORS[415],
      422: IDEMPOTENCY_ERRORS[422],
      503: errors('x402 is not configured yet, or DynamoDB is busy.', [msg('x402Unavailable'), msg('serviceBusy')], ['Retry-After']),
    },
  },
  'agent-x402-purchases-list': {
    summary: "x402: the agent's purchases",
    description: 'Newest first; `nextCursor` for the next page.',
    tag: 'x402',
    security: [['agentKey'], ['agentBearer']],
    query: listX402PaymentsQuerySchema,
    responses: {
      200: ok('A page of purchases.', component('X402PurchaseList', purchaseListSchema), { data: [EXAMPLE_PURCHASE], nextCursor: null }),
      400: errors('An invalid query parameter.', LIST_400),
      401: X402_401,
      503: BUSY,
    },
  },
  'agent-x402-purchase-get': {
    summary: 'x402: one purchase',
    description: 'The purchase; one its payer approved gets its payment on this read (a blockhash lives about a minute).',
    tag: 'x402',
    security: [['agentKey'], ['agentBearer']],
    pathParams: { id: 'The purchase id (`xp…`).' },
    responses: {
      200: ok('The purchase.', PURCHASE, EXAMPLE_PURCHASE),
      401: X402_401,
      403: errors(
        'Approved, but since then the payer blocked this agent or the grant was revoked or ended (or the agent disabled): nothing is signed; the payer can release it.',
        [msg('agentBlockedByUser'), msg('grantRevoked'), msg('grantExpired'), msg('agentDisabled')],
      ),
      404: PURCHASE_READ_404,
      503: BUSY,
    },
  },
  'agent-x402-purchase-receipt': {
    summary: "x402: report the seller's settlement",
    description:
      "The `transaction` of the seller's PAYMENT-RESPONSE. Checked on chain (confirmed, carrying the hot wallet's signature of this " +
      "purchase's payment), never trusted: captured at once. Without it the reconciler finds the transfer anyway.",
    tag: 'x402',
    security: [['agentKey'], ['agentBearer']],
    pathParams: { id: 'The purchase id (`xp…`).' },
    body: { name: 'X402PurchaseReceipt', schema: purchaseReceiptSchema, example: { transaction: X402_SIGNATURE } },
    responses: {
      200: ok('The purchase, SUCCESS (or EXPIRED when its transaction failed on chain).', PURCHASE, {
        ...EXAMPLE_PURCHASE,
        status: 'SUCCESS',
        transaction: X402_SIGNATURE,
      }),
      400: errors('Not a transaction signature.', [msg('invalidTransactionSignature'), msg('invalidJsonBody')]),
      401: X402_401,
      404: PURCHASE_READ_404,
      409: errors('Not awaiting settlement, or the transaction is not on chain as this payment.', [
        msg('purchaseNotAwaitingSettlement'),
        msg('purchaseTransactionNotFound'),
      ]),
      413: BODY_ERRORS[413],
      415: BODY_ERRORS[415],
      503: BUSY,
    },
  },
} satisfies Partial<Record<DocumentedRouteName, OperationDoc>>;

/** Route name → its operation. Every route of ROUTES except `$default` needs one. */
export const OPERATIONS: Readonly<Record<DocumentedRouteName, OperationDoc>> = {
  ...purchaseOperations,
  ...webhookOperations('agent'),
  ...webhookOperations('user'),
  'register-agent': {
    summary: 'Register an agent',
    description: 'No authentication. The agent starts disabled until an operator enables it; its key is shown once.',
    tag: 'Agents',
    security: [],
    body: {
      name: 'RegisterAgentRequest',
      schema: registerAgentSchema,
      example: { name: 'weather-bot', email: 'dev@example.com', website: 'https://example.com' },
    },
    responses: {
      201: ok('Registered (disabled).', registeredAgentBody, {
        message: REGISTRATION_MESSAGE,
        apiKey: 'ag_live_4Kq9GmYp7VwXz3RtN8bH2cJdLfE6sA5uQ1oPiU',
        enabled: false,
        agentId: 'a01jhx3k6v1f8q2n7c9m4p5r6s7',
      }),
      400: errors('The field named is missing or invalid, or the body is not a JSON object.', [
        invalid(registerAgentSchema, { email: 'dev@example.com', website: 'https://example.com' }),
        invalid(registerAgentSchema, { name: 'weather-bot', email: 'x', website: 'https://example.com' }),
        invalid(registerAgentSchema, { name: 'weather-bot', email: 'dev@example.com', website: 'ftp://example.com' }),
        UNKNOWN_FIELD,
        msg('invalidJsonBody'),
      ]),
      409: errors('The name, or one that looks like it, is registered (case-insensitive, look-alike skeleton).', [msg('agentNameTaken')]),
      ...BODY_ERRORS,
      503: BUSY,
    },
  },
  'create-charge': {
    summary: 'Charge a user',
    description:
      "Debits the user's balance and credits the agent in one transaction. A refusal for insufficient balance is a 402 that " +
      'keeps a FAILED charge. Both answers are stored under the Idempotency-Key for 24 h.',
    tag: 'Charges',
    security: [['agentKey', 'userKey']],
    idempotent: true,
    body: {
      name: 'CreateChargeRequest',
      schema: createChargeSchema,
      example: { amount: 1.5, currency: 'USD', description: 'forecast for Lisbon' },
    },
    responses: {
      201: {
        description: 'Charged; or, with `capture: false`, authorized: PENDING with `pendingReason: "capture"`, the amount held.',
        schema: chargeBody,
        examples: { charged: EXAMPLE_CHARGE, authorized: EXAMPLE_HOLD },
        headers: ['Idempotent-Replayed'],
      },
      202: ok(
        "Above the user's approval threshold: PENDING, the amount held until the user approves at approvalUrl (or it expires).",
        pendingChargeBody,
        EXAMPLE_PENDING,
        ['Idempotent-Replayed'],
      ),
      403: errors('The user has blocked this agent; a FAILED charge is kept.', [msg('agentBlockedByUser')], ['Idempotent-Replayed']),
      400: errors('Missing Idempotency-Key or an invalid body.', [
        msg('missingIdempotencyKey'),
        msg('invalidIdempotencyKey'),
        msg('invalidJsonBody'),
        ...moneyProblems(createChargeSchema),
        invalid(createChargeSchema, { ...CHARGE_BODY, description: 'x'.repeat(256) }),
        invalid(createChargeSchema, { ...CHARGE_BODY, description: 'a\u202eb' }),
        invalid(createChargeSchema, { ...CHARGE_BODY, capture: 'no' }),
        invalid(createChargeSchema, { ...CHARGE_BODY, capture: false, holdSeconds: num('60.5') }),
        invalid(createChargeSchema, { ...CHARGE_BODY, capture: false, holdSeconds: num('59') }),
        invalid(createChargeSchema, { ...CHARGE_BODY, capture: false, holdSeconds: num('604801') }),
        invalid(createChargeSchema, { ...CHARGE_BODY, holdSeconds: num('60') }),
        UNKNOWN_FIELD,
      ]),
      401: errors('The agent key is unknown or disabled, or the user key is unknown.', [
        msg(AUTH_MESSAGES.createCharge),
        msg(AUTH_MESSAGES.user),
      ]),
      402: errors(
        "Over one of the user's spending limits, or the balance is too low; a FAILED charge is kept.",
        [msg('spendingLimitExceeded'), msg('insufficientBalance')],
        ['Idempotent-Replayed'],
      ),
      409: errors(
        'A request with this key is in flight, or the agent balance is at its limit.',
        [msg('idempotencyInProgress'), msg('agentBalanceLimit')],
        ['Retry-After'],
      ),
      413: BODY_ERRORS[413],
      415: BODY_ERRORS[415],
      422: IDEMPOTENCY_ERRORS[422],
      503: BUSY,
    },
  },
  'list-charges': {
    summary: "List the agent's charges",
    description: 'Newest first. Follow `nextCursor` to read further; page numbers stop at page × limit = 10000.',
    tag: 'Charges',
    security: [['agentKey']],
    query: listChargesQuerySchema,
    responses: {
      200: ok('A page of charges (a page past the end has empty data).', chargeListBody, {
        data: [EXAMPLE_CHARGE],
        pagination: { total: 1, page: 1, limit: 20, totalPages: 1 },
        nextCursor: null,
      }),
      400: errors('An invalid query parameter.', [PAGE_400, ...LIST_400, msg('pageTooDeep', MAX_PAGE_DEPTH)]),
      401: errors('The agent key is unknown or disabled.', [msg(AUTH_MESSAGES.listCharges)]),
      503: BUSY,
    },
  },
  'get-charge': {
    summary: 'Get a charge',
    description:
      "The creating agent's key, or the admin key where the stage takes it (with IAM admin authorization the operator reads any charge through `GET /api/v1/admin/charges/{id}`). Another agent's charge is not found.",
    tag: 'Charges',
    security: [['agentKey'], ['adminKey']],
    pathParams: { id: 'The charge id.' },
    responses: {
      200: ok('The charge.', chargeBody, EXAMPLE_CHARGE),
      401: errors('No key, or an unknown or disabled one.', [msg(AUTH_MESSAGES.getCharge), msg(AUTH_MESSAGES.admin)]),
      404: errors('No such charge of this agent.', [msg('chargeNotFound')]),
      503: BUSY,
    },
  },
  'get-balance': {
    summary: "The agent's earned balance",
    tag: 'Agents',
    security: [['agentKey']],
    responses: {
      200: ok('What the agent may withdraw, per currency.', agentBalanceBody, { balances: { USD: 1.5, USDC: 0 } }),
      401: errors('The agent key is unknown or disabled.', [msg(AUTH_MESSAGES.balance)]),
      503: BUSY,
    },
  },
  withdraw: {
    summary: 'Withdraw earnings',
    description:
      'USDC to a Solana wallet, USD to PayPal, minus a 3% platform fee (half up). The payout is recorded PENDING and paid ' +
      'by the payout worker; poll it with GET /api/v1/agents/withdraw?payoutId=. One payout per agent and currency in flight. ' +
      'A USDC wallet must have its USDC token account (checked on the chain before anything is written), unless the body ' +
      'says `createTokenAccount: true`: then the payout creates a missing account for the account-creation fee (0.50 USDC ' +
      'by default), shown as `breakdown.accountCreationFee` and taken from the net amount.',
    tag: 'Withdrawals',
    security: [['agentKey']],
    idempotent: true,
    body: {
      name: 'WithdrawRequest',
      schema: withdrawSchema,
      example: { amount: 10, currency: 'USDC', walletAddress: WALLET },
    },
    responses: {
      200: {
        description:
          'Accepted: debited and queued. `accountCreationFee` is in the breakdown when the request asked createTokenAccount ' +
          '(0 when the account already existed); then netAmount = grossAmount − platformFee − accountCreationFee.',
        schema: withdrawalBody,
        examples: {
          example: {
            success: true,
            payoutId: 'p01jhx3k6v1f8q2n7c9m4p5r6s7',
            breakdown: {
              grossAmount: 10,
              platformFeeRate: '3%',
              platformFee: 0.3,
              netAmount: 9.7,
              currency: 'USDC',
              walletAddress: WALLET,
              network: 'SOL',
            },
          },
          createTokenAccount: {
            success: true,
            payoutId: 'p01jhx3k6v1f8q2n7c9m4p5r6s8',
            breakdown: {
              grossAmount: 10,
              platformFeeRate: '3%',
              platformFee: 0.3,
              accountCreationFee: 0.5,
              netAmount: 9.2,
              currency: 'USDC',
              walletAddress: WALLET,
              network: 'SOL',
            },
          },
        },
        headers: ['Idempotent-Replayed'],
      },
      400: errors(
        'Checked in this order: Idempotency-Key, body, destination (for USDC its token account), fees against the amount, ' +
          'balance, payout in flight.',
        [
          msg('missingIdempotencyKey'),
          msg('invalidJsonBody'),
          invalid(withdrawSchema, { currency: 'USD', walletAddress: WALLET }),
          invalid(withdrawSchema, { amount: num('10'), currency: 'EUR', walletAddress: WALLET }),
          invalid(withdrawSchema, { amount: num('10'), currency: 'USDC' }),
          UNKNOWN_FIELD,
          invalid(withdrawSchema, { amount: num('10'), currency: 'USDC', walletAddress: WALLET, createTokenAccount: 'yes' }),
          invalid(withdrawSchema, { amount: num('10'), currency: 'USD', walletAddress: 'dev@example.com', createTokenAccount: true }),
          invalid(withdrawSchema, { amount: num('0'), currency: 'USD', walletAddress: 'dev@example.com' }),
          amountProblem('1.001', 'USD'),
          amountProblem('1000001', 'USD'),
          msg('invalidSolanaAddress'),
          msg('invalidPaypalAccount'),
          msg('noUsdcTokenAccount'),
          msg('amountTooSmallForFees'),
          msg('withdrawalInsufficientBalance'),
          msg('payoutInProgress'),
        ],
      ),
      401: errors('The agent key is unknown or disabled.', [msg(AUTH_MESSAGES.withdraw)]),
      409: errors(
        'A request with this key is in flight, or the balance kept changing.',
        [msg('idempotencyInProgress'), msg('balanceChangedWhileWithdrawing')],
        ['Retry-After'],
      ),
      413: BODY_ERRORS[413],
      415: BODY_ERRORS[415],
      422: IDEMPOTENCY_ERRORS[422],
      503: errors(
        'DynamoDB kept throttling past the SDK retries, or the Solana RPC node could not say whether a USDC wallet has its ' +
          'token account; nothing was written. Retry after the given seconds (with the same Idempotency-Key).',
        [msg('serviceBusy'), msg('solanaUnavailable')],
        ['Retry-After'],
      ),
    },
  },
  'list-withdrawals': {
    summary: "List the agent's payouts, or get one",
    description: '`?payoutId=` answers that one Payout; otherwise a page of payouts, newest first.',
    tag: 'Withdrawals',
    security: [['agentKey']],
    query: listWithdrawalsQuerySchema,
    responses: {
      200: {
        description: 'A page of payouts, or with `payoutId` the one Payout.',
        schema: component('PayoutListOrPayout', payoutListBody.or(payoutBody)),
        examples: { list: { payouts: [EXAMPLE_PAYOUT], nextCursor: null }, payout: EXAMPLE_PAYOUT },
      },
      400: errors('An invalid query parameter.', LIST_400),
      401: errors('The agent key is unknown or disabled.', [msg(AUTH_MESSAGES.listWithdrawals)]),
      404: errors('No such payout of this agent.', [msg('payoutNotFound')]),
      503: BUSY,
    },
  },
  // --- The charge lifecycle (docs/design.md §12, docs/lifecycle.md) ---
  'capture-charge': {
    summary: 'Capture a hold',
    description:
      'Takes all (default) or part of a PENDING hold (`capture: false` at creation): the charge becomes SUCCESS with `amount` = ' +
      'the captured amount and `authorizedAmount` = what was held; the rest goes back to the user and stops counting against ' +
      "the user's limits. One transaction; stored under the Idempotency-Key for 24 h.",
    tag: 'Charges',
    security: [['agentKey']],
    idempotent: true,
    pathParams: { id: 'The charge id.' },
    body: { name: 'CaptureChargeRequest', schema: captureChargeSchema, example: { amount: 0.37 } },
    responses: {
      200: ok('Captured.', chargeBody, EXAMPLE_CAPTURED, ['Idempotent-Replayed']),
      400: errors('Missing Idempotency-Key, an invalid body or amount, or more than was authorized.', [
        ...LIFECYCLE_400,
        ...LIFECYCLE_AMOUNT_400,
        msg('amountExceedsAuthorized'),
      ]),
      401: LIFECYCLE_401,
      403: errors('The payer changed their mind (DESIGN §16): blocked the agent, or revoked the grant the hold was made under.', [
        msg('agentBlockedByUser'),
        msg('grantRevoked'),
        msg('grantExpired'),
      ]),
      404: LIFECYCLE_404,
      409: errors(
        'The hold still waits for the user, is no longer PENDING, is past expiresAt, or a request with this key is in flight.',
        [
          msg('chargeAwaitsApproval'),
          msg('chargeNotPending'),
          msg('chargeExpired'),
          msg('idempotencyInProgress'),
          msg('agentBalanceLimit'),
        ],
        ['Retry-After'],
      ),
      ...BODY_ERRORS,
      422: IDEMPOTENCY_ERRORS[422],
      503: BUSY,
    },
  },
  'release-charge': {
    summary: 'Release a hold',
    description:
      'Gives a PENDING charge (a hold, or a charge still waiting for the user) back: FAILED with `failureReason: "released by ' +
      'agent"`, the held amount returned to the user. Stored under the Idempotency-Key for 24 h.',
    tag: 'Charges',
    security: [['agentKey']],
    idempotent: true,
    pathParams: { id: 'The charge id.' },
    body: { name: 'ReleaseChargeRequest', schema: releaseChargeSchema, example: {} },
    responses: {
      200: ok('Released.', chargeBody, EXAMPLE_RELEASED, ['Idempotent-Replayed']),
      400: errors('Missing Idempotency-Key, or a body that is not `{}`.', [...LIFECYCLE_400, UNKNOWN_FIELD]),
      401: LIFECYCLE_401,
      404: LIFECYCLE_404,
      409: errors(
        'The charge is no longer PENDING, is past expiresAt, or a request with this key is in flight.',
        [msg('chargeNotPending'), msg('chargeExpired'), msg('idempotencyInProgress')],
        ['Retry-After'],
      ),
      ...BODY_ERRORS,
      422: IDEMPOTENCY_ERRORS[422],
      503: BUSY,
    },
  },
  'refund-charge': {
    summary: 'Refund a charge',
    description:
      "Gives all that is left (default) or part of a SUCCESS charge back to the user, from the agent's earned balance. " +
      '`refundedAmount` is cumulative and never passes `amount`; the charge stays SUCCESS and the refund shows in the ' +
      "user's history. One transaction; stored under the Idempotency-Key for 24 h.",
    tag: 'Charges',
    security: [['agentKey']],
    idempotent: true,
    pathParams: { id: 'The charge id.' },
    body: { name: 'RefundChargeRequest', schema: refundChargeSchema, example: { amount: 0.5 } },
    responses: {
      200: ok('Refunded.', chargeBody, EXAMPLE_REFUNDED, ['Idempotent-Replayed']),
      400: errors('Missing Idempotency-Key, an invalid body or amount, or more than is left to refund.', [
        ...LIFECYCLE_400,
        ...LIFECYCLE_AMOUNT_400,
        msg('amountExceedsRefundable'),
      ]),
      401: LIFECYCLE_401,
      402: errors("The agent's earned balance is too low (already withdrawn).", [msg('insufficientBalance')]),
      404: LIFECYCLE_404,
      409: errors(
        'The charge is not SUCCESS, it kept changing under concurrent refunds, a request with this key is in flight, or the ' +
          "user's balance is at its limit.",
        [msg('chargeNotRefundable'), msg('chargeChanging'), msg('idempotencyInProgress'), msg('userBalanceLimit')],
        ['Retry-After'],
      ),
      ...BODY_ERRORS,
      422: IDEMPOTENCY_ERRORS[422],
      503: BUSY,
    },
  },
  'rotate-agent-key': {
    summary: "Rotate the agent's key",
    description:
      'A new key, shown once. The old key stops moving money at once (charges, captures, releases, refunds, withdrawals), ' +
      'and stops authenticating reads within 30 s. `enabled` is carried over: a disabled agent may rotate and stays disabled.',
    tag: 'Agents',
    security: [['agentKey']],
    responses: {
      200: ok('The new key, shown once.', rotatedAgentKeyBody, {
        apiKey: 'ag_live_9Tq4GmYp7VwXz3RtN8bH2cJdLfE6sA5uQ1oPiU',
        agentId: 'a01jhx3k6v1f8q2n7c9m4p5r6s7',
        enabled: true,
      }),
      401: errors('The agent key is unknown (or already rotated).', [msg(AUTH_MESSAGES.rotateKey)]),
      409: errors('Another rotation of this key, or an operator flipping `enabled`, won.', [msg('agentKeyRotatedConcurrently')]),
      503: BUSY,
    },
  },
  // --- end of the charge lifecycle ---
  'admin-create-user': {
    summary: 'Create a user',
    description: 'The user key is shown once.',
    tag: 'Admin',
    security: ADMIN,
    responses: {
      201: ok('Created with zero balances.', createdUserBody, {
        id: 'u01jhx3k6v1f8q2n7c9m4p5r6s7',
        userKey: 'uk_live_7Hn2QxWbR5tKp9ZsL3vC8mYdE4gF6jA1uBo',
      }),
      401: ADMIN_401,
      503: BUSY,
    },
  },
  'admin-credit-user': {
    summary: "Credit a user's balance",
    tag: 'Admin',
    security: ADMIN,
    idempotent: true,
    pathParams: { id: 'The user id.' },
    body: { name: 'CreditRequest', schema: creditSchema, example: { amount: 25.5, currency: 'USD' } },
    responses: {
      200: ok(
        'Credited: the balances right after the credit.',
        userBody,
        { id: 'u01jhx3k6v1f8q2n7c9m4p5r6s7', balances: EXAMPLE_BALANCES },
        ['Idempotent-Replayed'],
      ),
      400: errors('Missing Idempotency-Key or an invalid body.', [
        msg('missingIdempotencyKey'),
        msg('invalidJsonBody'),
        ...moneyProblems(creditSchema),
        UNKNOWN_FIELD,
        msg('creditPastBalanceLimit'),
      ]),
      401: ADMIN_401,
      404: errors('No such user.', [msg('userNotFound')]),
      409: errors(
        'A request with this key is in flight, or the balance kept changing.',
        [msg('idempotencyInProgress'), msg('userBalanceChanging')],
        ['Retry-After'],
      ),
      413: BODY_ERRORS[413],
      415: BODY_ERRORS[415],
      422: IDEMPOTENCY_ERRORS[422],
      503: BUSY,
    },
  },
  'user-me': {
    summary: 'The user: balances, held money and policy',
    description:
      '`owed`: what PayPal took back from a credited top-up (a reversal or refund) beyond the balance. While it is above 0 in a ' +
      'currency, charges in that currency are refused with 402 `insufficient balance`; the next top-up in it pays this first.',
    tag: 'Users',
    security: [['userKey']],
    responses: {
      200: ok('Balances, money held in PENDING charges, money owed, and the spending policy.', meBody, {
        id: 'u01jhx3k6v1f8q2n7c9m4p5r6s7',
        balances: EXAMPLE_BALANCES,
        held: { USD: 15, USDC: 0 },
        owed: { USD: 0, USDC: 0 },
        policy: EXAMPLE_POLICY,
      }),
      401: USER_401,
      404: errors('The user is gone.', [msg('userNotFound')]),
      503: BUSY,
    },
  },
  'user-list-charges': {
    summary: "The user's charges across agents",
    description:
      'Newest first, refused ones included: the authorization log. `status` filters: each request reads a bounded part of the ' +
      'history, so a filtered page may hold fewer than `limit` charges (even none) and still a `nextCursor`; follow it until null. ' +
      "A cursor from another user's history is 400 `cursor is invalid`.",
    tag: 'Users',
    security: [['userKey']],
    query: listUserChargesQuerySchema,
    responses: {
      200: ok('A page of charges with the agent that made each.', userChargeListBody, {
        data: [{ ...EXAMPLE_CHARGE, agent: { id: 'a01jhx3k6v1f8q2n7c9m4p5r6s7', name: 'weather-bot' } }],
        nextCursor: null,
      }),
      400: errors('An invalid query parameter.', [...LIST_400, invalid(listUserChargesQuerySchema, { status: 'x' })]),
      401: USER_401,
      503: BUSY,
    },
  },
  'user-get-policy': {
    summary: 'The spending policy',
    tag: 'Users',
    security: [['userKey']],
    responses: {
      200: ok('The policy ({} until one is set).', policyBody, EXAMPLE_POLICY),
      401: USER_401,
      404: errors('The user is gone.', [msg('userNotFound')]),
      503: BUSY,
    },
  },
  'user-put-policy': {
    summary: 'Replace the spending policy',
    description: 'The body replaces the whole policy; charges judged by the old one are judged again.',
    tag: 'Users',
    security: [['userKey']],
    body: { name: 'SpendingPolicyRequest', schema: policySchema, example: EXAMPLE_POLICY },
    responses: {
      200: ok('The stored policy.', policyBody, EXAMPLE_POLICY),
      400: errors('The field named is invalid; the stored policy is unchanged.', [
        msg('invalidJsonBody'),
        amountProblem('1.001', 'USD', 'daily.USD'),
        invalid(policySchema, { daily: { EUR: num('1') } }),
        invalid(policySchema, { approvalWindowSeconds: num('59') }),
        msg('policyAgentUnknown', 'a01jhx3k6v1f8q2n7c9m4p5r6s7'),
      ]),
      401: USER_401,
      404: errors('The user is gone.', [msg('userNotFound')]),
      ...BODY_ERRORS,
      503: BUSY,
    },
  },
  'user-approve-charge': {
    summary: 'Approve a PENDING charge',
    tag: 'Users',
    security: [['userKey']],
    pathParams: { id: 'The charge id.' },
    responses: {
      200: ok('Approved: SUCCESS, the agent paid.', chargeBody, EXAMPLE_CHARGE),
      ...SETTLE_ERRORS,
      403: errors(
        'Nobody may approve it: the agent is disabled, or the grant it was made under is revoked or has ended (docs/grants.md). Declining or releasing it still returns the hold.',
        [msg('agentDisabled'), msg('grantRevoked'), msg('grantExpired')],
      ),
    },
  },
  'user-decline-charge': {
    summary: 'Decline a PENDING charge',
    tag: 'Users',
    security: [['userKey']],
    pathParams: { id: 'The charge id.' },
    responses: {
      200: ok('Declined: FAILED, the hold back to the user.', chargeBody, {
        ...EXAMPLE_CHARGE,
        status: 'FAILED',
        failureReason: 'declined by user',
      }),
      ...SETTLE_ERRORS,
    },
  },
  'user-release-charge': {
    summary: 'Release an open hold',
    description:
      "The payer ends any PENDING charge of theirs, waiting for their approval or for the agent's capture (DESIGN §16): FAILED " +
      '`released by user`, the hold back to the balance (and to the grant it was made under).',
    tag: 'Users',
    security: [['userKey']],
    pathParams: { id: 'The charge id.' },
    responses: {
      200: ok('Released: FAILED, the hold back to the user.', chargeBody, {
        ...EXAMPLE_CHARGE,
        status: 'FAILED',
        failureReason: 'released by user',
      }),
      401: USER_401,
      404: errors('No such charge of this user.', [msg('chargeNotFound')]),
      409: errors('Not PENDING (settled, expired, or another settlement won).', [msg('chargeNotPending')]),
      503: BUSY,
    },
  },
  'user-rotate-key': {
    summary: "Rotate the user's key",
    description: 'The old key stops moving money at once.',
    tag: 'Users',
    security: [['userKey']],
    responses: {
      200: ok('The new key, shown once.', rotatedUserKeyBody, ROTATED_USER_KEY_EXAMPLE),
      401: USER_401,
      409: errors('Another rotation won.', [msg('userKeyRotatedConcurrently')]),
      503: BUSY,
    },
  },
  // Grants (docs/grants.md).
  'user-create-grant': {
    summary: 'Give an agent a grant',
    description:
      'A scoped charge credential for one agent and one currency: the agent sends its `key` as x-user-key on its charges, ' +
      'never the account key. Limits (per charge, per UTC day and month, lifetime `total`), an approval threshold, a lifetime ' +
      'and a description. At most 100 active grants per payer.',
    tag: 'Users',
    security: [['userKey']],
    body: {
      name: 'CreateGrantRequest',
      schema: createGrantSchema,
      example: {
        agentId: 'a01jhx3k6v1f8q2n7c9m4p5r6s7',
        currency: 'USD',
        limits: { perCharge: 5, total: 20 },
        approvalAbove: 2,
        ttlSeconds: 86400,
      },
    },
    responses: {
      201: ok('The grant, with its key shown this once.', createdGrantBody, {
        ...EXAMPLE_GRANT,
        key: 'ug_live_3Jc7QxWbR5tKp9ZsL3vC8mYdE4gF6jA1uBo',
      }),
      400: errors('An invalid field, or an unknown agent.', [
        msg('grantAgentNotFound'),
        invalid(createGrantSchema, { agentId: 'x', currency: 'USD' }),
        invalid(createGrantSchema, { agentId: EXAMPLE_GRANT.agent.id, currency: 'USD', ttlSeconds: num('59') }),
        amountProblem('1.001', 'USD', 'limits.total'),
      ]),
      401: USER_401,
      409: errors('The payer has 100 active grants.', [msg('grantLimit', MAX_ACTIVE_GRANTS)]),
      ...BODY_ERRORS,
      503: BUSY,
    },
  },
  'user-list-grants': {
    summary: "The payer's grants",
    description: 'Newest first; `status` filters (a filtered page may hold fewer than `limit` and still a `nextCursor`).',
    tag: 'Users',
    security: [['userKey']],
    query: listGrantsQuerySchema,
    responses: {
      200: ok('A page of grants.', grantListBody, { data: [EXAMPLE_GRANT], nextCursor: null }),
      400: errors('An invalid query parameter.', [...LIST_400, invalid(listGrantsQuerySchema, { status: 'x' })]),
      401: USER_401,
      503: BUSY,
    },
  },
  'user-get-grant': {
    summary: 'One grant',
    tag: 'Users',
    security: [['userKey']],
    pathParams: { id: 'The grant id.' },
    responses: {
      200: ok('The grant (never its key).', grantBody, EXAMPLE_GRANT),
      401: USER_401,
      404: errors("No such grant, or another payer's.", [msg('grantNotFound')]),
      503: BUSY,
    },
  },
  'user-revoke-grant': {
    summary: 'Revoke a grant',
    description: 'Every charge with its key is refused from now on. Revoking a revoked grant answers the same 200.',
    tag: 'Users',
    security: [['userKey']],
    pathParams: { id: 'The grant id.' },
    responses: {
      200: ok('The grant, revoked.', grantBody, { ...EXAMPLE_GRANT, status: 'revoked', revokedAt: '2026-01-15T10:00:00.000Z' }),
      401: USER_401,
      404: errors("No such grant, or another payer's.", [msg('grantNotFound')]),
      409: errors('The grant kept changing under the revocation.', [msg('grantChanging')]),
      503: BUSY,
    },
  },
  // Top-ups (docs/topups.md).
  'user-create-topup': {
    summary: 'Top up the balance',
    description:
      'USDC: answers the deposit wallet, a fresh Solana Pay `reference` and a `solanaPayUrl`; any wallet that pays it (USDC to ' +
      'the wallet, carrying the reference) is credited exactly what arrives, once finalized. With an `amount`, only a transfer of ' +
      'exactly that amount completes it; without, one of at least TOPUP_USDC_MIN_AMOUNT (1 USDC); any other transfer carrying the ' +
      'reference credits nobody and is kept for the operator. USD: creates a PayPal order (intent ' +
      'CAPTURE) the user approves at `approveUrl`; it is captured and credited once. No money moves until the payment arrives, ' +
      'so no Idempotency-Key is needed: a repeated request opens a second top-up that expires unused.',
    tag: 'Users',
    security: [['userKey']],
    body: { name: 'CreateTopupRequest', schema: createTopupSchema, example: { currency: 'USD', amount: 25 } },
    responses: {
      201: ok('The PENDING top-up and how to pay it.', topupBody, EXAMPLE_USDC_TOPUP),
      400: errors('The field named is invalid; nothing was created.', [
        msg('invalidJsonBody'),
        invalid(createTopupSchema, { currency: 'EUR' }),
        invalid(createTopupSchema, { currency: 'USD' }),
        amountProblem('1.001', 'USD'),
        amountProblem('1.0000001', 'USDC'),
        amountProblem('0', 'USD'),
        amountProblem('1000001', 'USD'),
        UNKNOWN_FIELD,
      ]),
      401: USER_401,
      409: errors('The user already has 10 PENDING top-ups; one must end first.', [msg('topupLimit', MAX_OPEN_TOPUPS)]),
      ...BODY_ERRORS,
      503: errors(
        'PayPal (or DynamoDB) could not be reached; retry.',
        [msg('paymentProviderUnavailable'), msg('serviceBusy')],
        ['Retry-After'],
      ),
    },
  },
  'user-list-topups': {
    summary: "The user's top-ups",
    description: 'Newest first.',
    tag: 'Users',
    security: [['userKey']],
    query: listTopupsQuerySchema,
    responses: {
      200: ok('A page of top-ups.', topupListBody, { data: [EXAMPLE_USDC_TOPUP], nextCursor: null }),
      400: errors('An invalid query parameter.', LIST_400),
      401: USER_401,
      503: BUSY,
    },
  },
  'user-get-topup': {
    summary: 'One top-up',
    tag: 'Users',
    security: [['userKey']],
    pathParams: { id: 'The top-up id.' },
    responses: {
      200: ok('The top-up.', topupBody, {
        ...EXAMPLE_USDC_TOPUP,
        status: 'COMPLETED',
        amount: 25,
        externalId: '5VERv8NMvzbJMEkV8xnrLkEaWRtSz9CosKDYjCJjBRnbJLgp8uirBgmQpjKhoR4tjF3ZpRzrFmBV6UjKdiSZkQUW',
        completedAt: '2026-01-15T09:31:02.000Z',
      }),
      401: USER_401,
      404: errors("No such top-up, or another user's.", [msg('topupNotFound')]),
      503: BUSY,
    },
  },
  'paypal-webhook': {
    summary: "PayPal's webhook (CHECKOUT.ORDER.APPROVED)",
    description:
      'Called by PayPal, not by clients. Cheap checks first, each a 400 before PayPal is asked anything: the five ' +
      "paypal-* transmission headers present, paypal-cert-url on PayPal's API hosts (https, /v1/notifications/certs/), " +
      'paypal-transmission-time within 5 minutes, paypal-transmission-id not received before. Then believed only after ' +
      "PayPal's verify-webhook-signature answers SUCCESS for the configured webhook id; then the order is read from PayPal, " +
      'captured (idempotently) and credited once per capture id. Any 2xx stops PayPal retrying; 503 asks it to retry.',
    tag: 'Users',
    security: [],
    responses: {
      200: ok(
        'Received (and acted on, when it concerns a PENDING top-up or a credited one PayPal took back); a transmission received before is acknowledged unasked and changes nothing.',
        webhookReceivedBody,
        { received: true },
      ),
      400: errors('Not a fresh, verified PayPal webhook; nothing changed.', [
        msg('invalidJsonBody'),
        msg('paypalHeaderMissing', 'paypal-transmission-id'),
        msg('paypalTransmissionIdInvalid'),
        msg('paypalCertUrlInvalid'),
        msg('paypalTransmissionStale'),
        msg('invalidWebhookSignature'),
      ]),
      503: errors(
        'PayPal or DynamoDB could not be reached; PayPal retries.',
        [msg('paymentProviderUnavailable'), msg('serviceBusy')],
        ['Retry-After'],
      ),
    },
  },
  'approval-page': {
    summary: 'The approval page',
    description:
      "An HTML page at a PENDING charge's approvalUrl: the agent, amount, description and time left, with Approve and Decline " +
      'buttons (a plain form: no JavaScript needed). The token in the path is the only authority; after a decision, or once ' +
      'expired, the page shows the final state. Strict Content-Security-Policy, no external assets.',
    tag: 'Users',
    security: [],
    pathParams: { token: 'The capability from approvalUrl.' },
    responses: {
      200: { description: 'The page.', contentType: 'text/html' },
      404: { description: 'The link is not valid.', contentType: 'text/html' },
      503: { description: 'Busy; try again.', contentType: 'text/html' },
    },
  },
  'approval-decide': {
    summary: 'Approve or decline from the approval page',
    description: "The page's form post (`action=approve|decline`, form-encoded); answers 303 back to the page, which shows the outcome.",
    tag: 'Users',
    security: [],
    pathParams: { token: 'The capability from approvalUrl.' },
    responses: {
      303: { description: 'Back to the page, which shows the final state.' },
      400: { description: 'The form is not a single `action` of approve or decline.', contentType: 'text/html' },
      404: { description: 'The link is not valid.', contentType: 'text/html' },
      413: { description: 'The form is too large.', contentType: 'text/html' },
      415: { description: 'Not a form post.', contentType: 'text/html' },
      503: { description: 'Busy; try again.', contentType: 'text/html' },
    },
  },
  'admin-get-user': {
    summary: 'Get a user',
    tag: 'Admin',
    security: ADMIN,
    pathParams: { id: 'The user id.' },
    responses: {
      200: ok('The user and its balances.', userBody, { id: 'u01jhx3k6v1f8q2n7c9m4p5r6s7', balances: EXAMPLE_BALANCES }),
      401: ADMIN_401,
      404: errors('No such user.', [msg('userNotFound')]),
      503: BUSY,
    },
  },
  'agent-create-grant-request': {
    summary: 'Ask a payer for a grant',
    description:
      'A pending request for a grant of these terms, living 15 minutes. Give `consentUrl` to the payer: they allow it (with ' +
      "their account key, on the service's own page) or deny it. Poll `GET /api/v1/agents/grant-requests/{id}`.",
    tag: 'Agents',
    security: [['agentKey']],
    idempotent: true,
    body: {
      name: 'CreateGrantRequestRequest',
      schema: createGrantRequestSchema,
      example: { currency: 'USD', limits: { perCharge: 5, total: 20 }, ttlSeconds: 86400 },
    },
    responses: {
      201: ok('The pending request and its consent link.', grantRequestBody, EXAMPLE_GRANT_REQUEST, ['Idempotent-Replayed']),
      400: errors('An invalid field, or no Idempotency-Key.', [
        msg('missingIdempotencyKey'),
        invalid(createGrantRequestSchema, { currency: 'EUR' }),
        invalid(createGrantRequestSchema, { currency: 'USD', ttlSeconds: num('59') }),
      ]),
      401: errors('The agent key is missing or unknown, or the agent is disabled.', [msg(AUTH_MESSAGES.grantRequests)]),
      ...IDEMPOTENCY_ERRORS,
      ...BODY_ERRORS,
      503: BUSY,
    },
  },
  'agent-get-grant-request': {
    summary: 'A grant request',
    description:
      'Once the payer allowed it, the first read answers `grant` with its `key` and moves the request to `claimed`; later ' +
      'reads show the grant without the key.',
    tag: 'Agents',
    security: [['agentKey']],
    pathParams: { id: 'The grant request id.' },
    responses: {
      200: ok('The request as it is now.', grantRequestBody, {
        ...EXAMPLE_GRANT_REQUEST,
        status: 'claimed',
        grant: { ...EXAMPLE_GRANT, key: 'ug_live_3Jc7QxWbR5tKp9ZsL3vC8mYdE4gF6jA1uBo' },
      }),
      401: errors('The agent key is missing or unknown, or the agent is disabled.', [msg(AUTH_MESSAGES.grantRequests)]),
      404: errors("No such request, or another agent's.", [msg('grantRequestNotFound')]),
      503: BUSY,
    },
  },
  'consent-page': {
    summary: 'The consent page',
    description:
      "An HTML page at a grant request's consentUrl: the agent's name and website, the currency, limits, lifetime and " +
      'description, a password field for the account key, and Allow / Deny (a plain form: no JavaScript needed). Once ' +
      'decided or expired it shows the final state. Strict Content-Security-Policy, no external assets.',
    tag: 'Users',
    security: [],
    pathParams: { token: 'The capability from consentUrl.' },
    responses: {
      200: { description: 'The page.', contentType: 'text/html' },
      404: { description: 'The link is not valid.', contentType: 'text/html' },
      503: { description: 'Busy; try again.', contentType: 'text/html' },
    },
  },
  'consent-decide': {
    summary: 'Allow or deny on the consent page',
    description:
      "The page's form post (`action=allow|deny`, `accountKey`, form-encoded). Allow with the payer's account key creates the " +
      'grant for that payer; answers 303 back to the page, which shows the outcome.',
    tag: 'Users',
    security: [],
    pathParams: { token: 'The capability from consentUrl.' },
    responses: {
      303: { description: 'Back to the page, which shows the final state.' },
      400: { description: 'The page again with "invalid account key" (nothing changed), or a malformed form.', contentType: 'text/html' },
      404: { description: 'The link is not valid.', contentType: 'text/html' },
      409: { description: 'The page again: the payer has 100 active grants.', contentType: 'text/html' },
      413: { description: 'The form is too large.', contentType: 'text/html' },
      415: { description: 'Not a form post.', contentType: 'text/html' },
      503: { description: 'Busy; try again.', contentType: 'text/html' },
    },
  },
  'admin-rotate-user-key': {
    summary: "Rotate a user's account key",
    description:
      "The operator's way back in for a payer locked out: a new account key, shown once. The old one stops moving money at once.",
    tag: 'Admin',
    security: ADMIN,
    pathParams: { id: 'The user id.' },
    responses: {
      200: ok('The new account key, shown once.', rotatedUserKeyBody, ROTATED_USER_KEY_EXAMPLE),
      401: ADMIN_401,
      404: errors('No such user.', [msg('userNotFound')]),
      409: errors('Rotations kept racing.', [msg('userKeyRotationRaced')]),
      503: BUSY,
    },
  },
  'admin-update-agent': {
    summary: 'Enable or disable an agent',
    description: "Disabling stops the agent's charges and withdrawals at once, in every container.",
    tag: 'Admin',
    security: ADMIN,
    pathParams: { id: 'The agent id.' },
    body: { name: 'UpdateAgentRequest', schema: updateAgentSchema, example: { enabled: true } },
    responses: {
      200: ok('The agent as it is now.', agentBody, {
        id: 'a01jhx3k6v1f8q2n7c9m4p5r6s7',
        name: 'weather-bot',
        email: 'dev@example.com',
        website: 'https://example.com',
        enabled: true,
        createdAt: '2026-01-15T09:30:00.000Z',
      }),
      400: errors('An invalid body.', [
        invalid(updateAgentSchema, {}),
        invalid(updateAgentSchema, { enabled: 'yes' }),
        UNKNOWN_FIELD,
        msg('invalidJsonBody'),
      ]),
      401: ADMIN_401,
      404: errors('No such agent.', [msg('agentNotFound')]),
      ...BODY_ERRORS,
      503: BUSY,
    },
  },
  'admin-list-agents': {
    summary: 'List agents',
    description:
      'Agents newest first: `enabled=false` lists those that may not charge (waiting to be enabled after registration, or ' +
      'disabled), `enabled=true` those that may, neither both. Read from an index by state, never a scan; `nextCursor` ' +
      'continues the same list (its limit and filter).',
    tag: 'Admin',
    security: ADMIN,
    query: listAgentsQuerySchema,
    responses: {
      200: ok('A page of agents.', agentListBody, {
        data: [
          {
            id: 'a01jhx3k6v1f8q2n7c9m4p5r6s7',
            name: 'weather-bot',
            email: 'dev@example.com',
            website: 'https://example.com',
            enabled: false,
            createdAt: '2026-01-15T09:30:00.000Z',
          },
        ],
        nextCursor: null,
      }),
      400: errors('An invalid query parameter.', [...LIST_400, invalid(listAgentsQuerySchema, { enabled: 'x' })]),
      401: ADMIN_401,
      503: BUSY,
    },
  },
  'admin-get-agent': {
    summary: 'Get an agent',
    description: 'The agent and what it has earned and may withdraw.',
    tag: 'Admin',
    security: ADMIN,
    pathParams: { id: 'The agent id.' },
    responses: {
      200: ok('The agent and its balances.', adminAgentBody, {
        id: 'a01jhx3k6v1f8q2n7c9m4p5r6s7',
        name: 'weather-bot',
        email: 'dev@example.com',
        website: 'https://example.com',
        enabled: true,
        createdAt: '2026-01-15T09:30:00.000Z',
        balances: EXAMPLE_BALANCES,
      }),
      401: ADMIN_401,
      404: errors('No such agent.', [msg('agentNotFound')]),
      503: BUSY,
    },
  },
  'admin-get-charge': {
    summary: "Get any agent's charge",
    tag: 'Admin',
    security: ADMIN,
    pathParams: { id: 'The charge id.' },
    responses: {
      200: ok('The charge.', chargeBody, EXAMPLE_CHARGE),
      401: ADMIN_401,
      404: errors('No such charge.', [msg('chargeNotFound')]),
      503: BUSY,
    },
  },
  health: {
    summary: 'Health',
    description: 'A strongly consistent read of the table.',
    tag: 'Service',
    security: [],
    responses: {
      200: ok('The table answers.', healthBody, { status: 'ok' }),
      503: errors('The table does not answer.', [msg('tableUnreachable')], ['Retry-After']),
    },
  },
  openapi: {
    summary: 'This document',
    tag: 'Service',
    security: [],
    responses: {
      200: { description: 'The OpenAPI 3.1 document of this API (docs/openapi.json).', schema: openApiDocumentBody },
    },
  },
  mcp: {
    summary: 'MCP server (streamable HTTP, stateless)',
    description:
      `The Model Context Protocol endpoint for agents: tools ${MCP_TOOL_NAMES.join(', ')}. ` +
      'Send JSON-RPC with `Accept: application/json, text/event-stream`; answers are JSON (no SSE, no session). The agent ' +
      "key is checked before any tool runs; tool failures come back as tool results with isError and the API's message. " +
      'A batch holds at most 10 messages (more is a JSON-RPC error, and none runs); a malformed Host header is a 400 ' +
      'before anything else.',
    tag: 'MCP',
    security: [['agentKey'], ['agentBearer']],
    body: {
      name: 'JsonRpcMessages',
      schema: jsonRpcMessages,
      example: { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'get_balance', arguments: {} } },
    },
    responses: {
      200: ok('The JSON-RPC response (an array of them for a batch).', jsonRpcMessages, {
        jsonrpc: '2.0',
        id: 1,
        result: {
          content: [{ type: 'text', text: '{"balances":{"USD":1.5,"USDC":0}}' }],
          structuredContent: { balances: { USD: 1.5, USDC: 0 } },
        },
      }),
      202: { description: 'A notification or response was accepted (no body).' },
      400: {
        description:
          'Not a valid JSON-RPC message, a batch of more than 10, or a malformed Host header (a JSON-RPC error object, code -32600).',
        schema: jsonRpcMessage,
      },
      401: errors('The agent key is missing, unknown or disabled.', [msg(MCP_AUTH_MESSAGE)]),
      406: { description: 'The Accept header does not allow application/json and text/event-stream.', schema: jsonRpcMessage },
      413: BODY_ERRORS[413],
      415: { description: 'Not application/json (a JSON-RPC error object).', schema: jsonRpcMessage },
      503: BUSY,
    },
  },
  'mcp-get': {
    summary: 'MCP server: no event stream',
    description:
      "The streamable HTTP transport's GET, which would open a stream of server-to-client messages. The server is stateless " +
      'and has none: 405 with `Allow: POST`, as the transport specifies, and clients carry on with POST.',
    tag: 'MCP',
    security: [],
    responses: {
      405: errors('This path takes POST only.', [msg('mcpPostOnly')], ['Allow']),
    },
  },
  ...X402_OPERATIONS,
  ...OPERATOR_MONEY_OPERATIONS,
};

/** What the `$default` route answers: every method and path no operation matches. */
export const UNMATCHED_ROUTE: ResponseDoc = errors('No route matches this method and path.', [msg('notFound')]);
