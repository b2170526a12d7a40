/**
 * The operator's hand on a disabled agent's money in the operation registry (admin.ts puts it in the
 * operator's routes; docs/payouts.md "Held payouts", docs/lifecycle.md): its held payouts listed,
 * released or cancelled, its charges listed and refunded. Each entry carries its OpenAPI operation.
 */
import { adminListPayoutsQuerySchema, listChargesQuerySchema, refundChargeSchema, releaseChargeSchema } from '../contracts/request.schemas';
import { chargeBody, chargeListBody } from '../contracts/responses/charges';
import { payoutBody, payoutListBody } from '../contracts/responses/payouts';
import { MAX_PAGE_DEPTH } from '../core/charges';
import { refusalText as msg } from '../messages/catalogue';
import { uses } from '../store/access';
import {
  ADMIN,
  ADMIN_401,
  BODY_ERRORS,
  BUSY,
  EXAMPLE_CHARGE,
  EXAMPLE_PAYOUT_FIELDS,
  EXAMPLE_REFUNDED,
  errors,
  IDEMPOTENCY_ERRORS,
  invalid,
  LIFECYCLE_400,
  LIFECYCLE_AMOUNT_400,
  LIST_400,
  ok,
  PAGE_400,
  UNKNOWN_FIELD,
} from './doc';
import type { DocumentedRoute } from './spec';

// --- The operator and a disabled agent's money (docs/payouts.md "Held payouts", docs/lifecycle.md) ---
const EXAMPLE_HELD_PAYOUT = {
  ...EXAMPLE_PAYOUT_FIELDS,
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

/** The operator's hand on a disabled agent's money: held payouts (release, cancel) and refunds of its charges. */
export const OPERATOR_MONEY_ROUTES = [
  {
    name: 'admin-list-payouts',
    method: 'GET',
    path: '/api/v1/admin/payouts',
    table: uses('listPayoutsByStatus'),
    admin: true,
    // Shows a settled movement's receipt link (DESIGN §27, on PUBLIC_BASE_URL).
    publicLinks: true,
    operation: () => ({
      summary: 'List held payouts',
      description:
        "The operator's work list: payouts held because their agent was disabled before they were paid (HELD, the default), " +
        'oldest first; or those in flight (PENDING, PROCESSING). Release or cancel each held one.',
      tag: 'Admin',
      security: ADMIN,
      query: adminListPayoutsQuerySchema,
      responses: {
        200: ok('A page of payouts, oldest first.', payoutListBody, { payouts: [EXAMPLE_HELD_PAYOUT], nextCursor: null }),
        400: errors('An invalid query parameter.', [invalid(adminListPayoutsQuerySchema, { status: 'x' }), ...LIST_400()]),
        401: ADMIN_401,
        503: BUSY,
      },
    }),
  },
  {
    name: 'admin-release-payout',
    method: 'POST',
    path: '/api/v1/admin/agents/{id}/payouts/{payoutId}/release',
    table: uses('releaseHeldPayout'),
    admin: true,
    operation: () => ({
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
        400: errors('A body that is not `{}`.', [UNKNOWN_FIELD(), msg('invalidJsonBody')]),
        401: ADMIN_401,
        404: PAYOUT_404,
        409: errors('The payout is not held (and was never released).', [msg('payoutNotHeld')]),
        ...BODY_ERRORS,
        503: BUSY,
      },
    }),
  },
  {
    name: 'admin-cancel-payout',
    method: 'POST',
    path: '/api/v1/admin/agents/{id}/payouts/{payoutId}/cancel',
    table: uses('idempotentCommand', 'getPayout', 'cancelHeldPayout'),
    admin: true,
    operation: () => ({
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
        400: errors('Missing Idempotency-Key, or a body that is not `{}`.', [...LIFECYCLE_400, UNKNOWN_FIELD()]),
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
    }),
  },
  {
    name: 'admin-list-agent-charges',
    method: 'GET',
    path: '/api/v1/admin/agents/{id}/charges',
    table: uses('getAgentById', 'listCharges', 'readAgentLedger'),
    admin: true,
    // Shows a settled movement's receipt link (DESIGN §27, on PUBLIC_BASE_URL).
    publicLinks: true,
    operation: () => ({
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
        400: errors('An invalid query parameter.', [PAGE_400(), ...LIST_400(), msg('pageTooDeep', MAX_PAGE_DEPTH)]),
        401: ADMIN_401,
        404: errors('No such agent.', [msg('agentNotFound')]),
        503: BUSY,
      },
    }),
  },
  {
    name: 'admin-refund-charge',
    method: 'POST',
    path: '/api/v1/admin/agents/{id}/charges/{chargeId}/refund',
    table: uses('idempotentCommand', 'readChargeAndLedger', 'commitOperatorRefund'),
    admin: true,
    // Shows a settled movement's receipt link (DESIGN §27, on PUBLIC_BASE_URL).
    publicLinks: true,
    operation: () => ({
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
          ...LIFECYCLE_AMOUNT_400(),
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
    }),
  },
] as const satisfies readonly DocumentedRoute[];
