/**
 * The agent's charges in the operation registry (agents.ts puts them in the agent's API): creating,
 * listing and reading a charge, and its lifecycle — capture, release, refund (docs/design.md §12,
 * docs/lifecycle.md). Each entry carries its OpenAPI operation; adding a route: docs/registry.md.
 */
import {
  captureChargeSchema,
  createChargeSchema,
  listChargesQuerySchema,
  refundChargeSchema,
  releaseChargeSchema,
} from '../contracts/request.schemas';
import { chargeBody, chargeListBody, pendingChargeBody } from '../contracts/responses/charges';
import { MAX_PAGE_DEPTH } from '../core/charges';
import { refusalText as msg } from '../messages/catalogue';
import { AUTH_MESSAGES } from '../messages/credentials';
import { uses } from '../store/access';
import {
  BODY_ERRORS,
  BUSY,
  EXAMPLE_CHARGE,
  EXAMPLE_CHARGE_FIELDS,
  EXAMPLE_REFUNDED,
  errors,
  IDEMPOTENCY_ERRORS,
  invalid,
  LIFECYCLE_400,
  LIFECYCLE_AMOUNT_400,
  LIST_400,
  moneyProblems,
  num,
  ok,
  PAGE_400,
  UNKNOWN_FIELD,
} from './doc';
import type { DocumentedRoute } from './spec';
import { CAPTURE, CHARGE, LIST_CHARGES, REFUND, RELEASE } from './tables';

/** A valid charge body, for the examples of one field's problem. */
const CHARGE_BODY = { amount: num('1.5'), currency: 'USD' };

const EXAMPLE_PENDING = {
  ...EXAMPLE_CHARGE_FIELDS,
  amount: 15,
  status: 'PENDING',
  pendingReason: 'user_approval',
  expiresAt: '2026-01-15T09:45:00.000Z',
  approvalUrl: 'https://api.example.com/approve/c01jhx3k6v1f8q2n7c9m4p5r6s7.Zm9yIGV4YW1wbGUgb25seSwgbm90IGEgcmVhbCB0b2tlbg',
};

// --- The charge lifecycle (docs/lifecycle.md) ---
const EXAMPLE_HOLD = {
  ...EXAMPLE_CHARGE_FIELDS,
  amount: 1,
  description: 'LLM call, metered',
  status: 'PENDING',
  pendingReason: 'capture',
  expiresAt: '2026-01-15T10:30:00.000Z',
  authorizedAmount: 1,
};

const EXAMPLE_CAPTURED = {
  ...EXAMPLE_HOLD,
  amount: 0.37,
  status: 'SUCCESS',
  pendingReason: null,
  receiptUrl: EXAMPLE_CHARGE.receiptUrl,
};

const EXAMPLE_RELEASED = { ...EXAMPLE_HOLD, status: 'FAILED', pendingReason: null, failureReason: 'released by agent' };

const LIFECYCLE_401 = errors('The agent key is unknown, disabled or rotated (checked inside the transaction: at once).', [
  msg(AUTH_MESSAGES.lifecycle),
]);

const LIFECYCLE_404 = errors("No such charge, or another agent's.", [msg('chargeNotFound')]);

/** Charges as the agent makes and reads them. */
export const AGENT_CHARGE_ROUTES = [
  {
    name: 'create-charge',
    method: 'POST',
    path: '/api/v1/agents/charges',
    table: CHARGE,
    approvalSecret: true,
    publicLinks: true,
    operation: () => ({
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
          UNKNOWN_FIELD(),
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
    }),
  },
  {
    name: 'list-charges',
    method: 'GET',
    path: '/api/v1/agents/charges',
    table: LIST_CHARGES,
    // Shows a settled movement's receipt link (DESIGN §27, on PUBLIC_BASE_URL).
    publicLinks: true,
    operation: () => ({
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
        400: errors('An invalid query parameter.', [PAGE_400(), ...LIST_400(), msg('pageTooDeep', MAX_PAGE_DEPTH)]),
        401: errors('The agent key is unknown or disabled.', [msg(AUTH_MESSAGES.listCharges)]),
        503: BUSY,
      },
    }),
  },
  {
    name: 'get-charge',
    method: 'GET',
    path: '/api/v1/agents/charge/{id}',
    table: uses('agentKeyLookup', 'getCharge'),
    adminKeyAlternative: true,
    operatorTable: uses('getChargeById'),
    // Shows a settled movement's receipt link (DESIGN §27, on PUBLIC_BASE_URL).
    publicLinks: true,
    operation: () => ({
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
    }),
  },
] as const satisfies readonly DocumentedRoute[];

/** The charge lifecycle (docs/design.md §12, docs/lifecycle.md): a hold captured or released, a charge refunded. */
export const CHARGE_LIFECYCLE_ROUTES = [
  {
    name: 'capture-charge',
    method: 'POST',
    path: '/api/v1/agents/charge/{id}/capture',
    table: CAPTURE,
    // Shows a settled movement's receipt link (DESIGN §27, on PUBLIC_BASE_URL).
    publicLinks: true,
    operation: () => ({
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
          ...LIFECYCLE_AMOUNT_400(),
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
    }),
  },
  {
    name: 'release-charge',
    method: 'POST',
    path: '/api/v1/agents/charge/{id}/release',
    table: RELEASE,
    operation: () => ({
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
        400: errors('Missing Idempotency-Key, or a body that is not `{}`.', [...LIFECYCLE_400, UNKNOWN_FIELD()]),
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
    }),
  },
  {
    name: 'refund-charge',
    method: 'POST',
    path: '/api/v1/agents/charge/{id}/refund',
    table: REFUND,
    // Shows a settled movement's receipt link (DESIGN §27, on PUBLIC_BASE_URL).
    publicLinks: true,
    operation: () => ({
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
          ...LIFECYCLE_AMOUNT_400(),
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
    }),
  },
] as const satisfies readonly DocumentedRoute[];
