/**
 * The payer's API in the operation registry (routes.ts assembles the areas): the account key's charges,
 * policy, approvals, grants (user-grants.ts) and top-ups, and PayPal's webhook (topups.ts). Each entry
 * carries its OpenAPI operation.
 */
import { listUserChargesQuerySchema, policySchema, statementQuerySchema } from '../contracts/request.schemas';
import { meBody, policyBody, rotatedUserKeyBody } from '../contracts/responses/accounts';
import { chargeBody, userChargeListBody } from '../contracts/responses/charges';
import { statementBody } from '../contracts/responses/statement';
import { refusalText as msg } from '../messages/catalogue';
import { combine, uses } from '../store/access';
import {
  amountProblem,
  BODY_ERRORS,
  BUSY,
  EXAMPLE_BALANCES,
  EXAMPLE_CHARGE,
  EXAMPLE_CHARGE_FIELDS,
  errors,
  invalid,
  LIST_400,
  num,
  ok,
  ROTATED_USER_KEY_EXAMPLE,
  USER_401,
} from './doc';
import type { DocumentedRoute } from './spec';
import { APPROVE, DECLINE, RELEASE_OPEN_CHARGES, USER } from './tables';

import { TOPUP_ROUTES } from './topups';
import { USER_GRANT_ROUTES } from './user-grants';

const EXAMPLE_POLICY = {
  perCharge: { USD: 50 },
  daily: { USD: 200 },
  approvalAbove: { USD: 10 },
  approvalWindowSeconds: 900,
  agents: { a01jhx3k6v1f8q2n7c9m4p5r6s7: { blocked: true } },
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

/** The payer's API (the account key): its charges, policy, approvals, grants, top-ups, and PayPal's webhook. */
export const USER_ROUTES = [
  {
    name: 'user-me',
    method: 'GET',
    path: '/api/v1/users/me',
    table: uses('userKeyLookup', 'getUser'),
    operation: () => ({
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
    }),
  },
  // Each PENDING charge that waits for the payer carries its approval link (DESIGN §16).
  {
    name: 'user-list-charges',
    method: 'GET',
    path: '/api/v1/users/me/charges',
    table: uses('userKeyLookup', 'listUserCharges'),
    approvalSecret: true,
    publicLinks: true,
    operation: () => ({
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
        400: errors('An invalid query parameter.', [...LIST_400(), invalid(listUserChargesQuerySchema, { status: 'x' })]),
        401: USER_401,
        503: BUSY,
      },
    }),
  },
  // The payer's statement (DESIGN §26, docs/statement.md): every movement of the balance, with the balance after each.
  {
    name: 'user-statement',
    method: 'GET',
    path: '/api/v1/users/me/statement',
    table: uses('userKeyLookup', 'getUser', 'readStatement'),
    operation: () => ({
      summary: "The user's statement: every movement of the balance",
      description:
        'Newest first: top-ups, charges, holds and what came back of them, refunds, x402 purchases, operator credits and reversals, ' +
        "each with its signed `amount` and the `balanceAfter` it in its currency. The newest row's `balanceAfter` is the available " +
        "balance; each row's `balanceAfter` minus the next older row's (same currency) is its amount, across pages too (the cursor " +
        'carries the running balance). Filters apply to the rows shown; a page reads a bounded part of the statement (at most 3 ' +
        'DynamoDB requests), so a filtered page may hold fewer than `limit` rows (even none) and still a `nextCursor`: follow it, ' +
        'with the same filters, until null. Rows start when the payer was created, or, for payers created before the statement ' +
        "existed, at its release: the oldest row's balance before it need not be 0.",
      tag: 'Users',
      security: [['userKey']],
      query: statementQuerySchema,
      responses: {
        200: ok('A page of statement rows.', statementBody, {
          data: [
            {
              id: 'st01jhx3k6v1f8q2n7c9m4p5r6s7',
              createdAt: '2026-01-15T09:30:00.000Z',
              type: 'charge',
              amount: -4.5,
              currency: 'USD',
              balanceAfter: 20.5,
              status: 'SUCCESS',
              description: 'forecast for Lisbon',
              counterparty: { kind: 'agent', id: 'a01jhx3k6v1f8q2n7c9m4p5r6s7', name: 'weather-bot' },
              grantId: null,
              reference: 'c01jhx3k6v1f8q2n7c9m4p5r6s7a01jhx2z9e4w7q1m3v8b6n5k2d0',
            },
          ],
          nextCursor: null,
        }),
        400: errors('An invalid query parameter.', [
          ...LIST_400(),
          invalid(statementQuerySchema, { type: 'x' }),
          invalid(statementQuerySchema, { from: 'yesterday' }),
          invalid(statementQuerySchema, { from: '2026-02-01', to: '2026-01-01' }),
        ]),
        401: USER_401,
        404: errors('The user is gone.', [msg('userNotFound')]),
        503: BUSY,
      },
    }),
  },
  {
    name: 'user-get-policy',
    method: 'GET',
    path: '/api/v1/users/me/policy',
    table: uses('userKeyLookup', 'getUser'),
    operation: () => ({
      summary: 'The spending policy',
      tag: 'Users',
      security: [['userKey']],
      responses: {
        200: ok('The policy ({} until one is set).', policyBody, EXAMPLE_POLICY),
        401: USER_401,
        404: errors('The user is gone.', [msg('userNotFound')]),
        503: BUSY,
      },
    }),
  },
  {
    name: 'user-put-policy',
    method: 'PUT',
    path: '/api/v1/users/me/policy',
    table: uses('userKeyLookup', 'getAgentById', 'replacePolicy', 'closeTabs'),
    operation: () => ({
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
    }),
  },
  {
    name: 'user-approve-charge',
    method: 'POST',
    path: '/api/v1/users/me/charges/{id}/approve',
    table: combine(USER, APPROVE),
    // Shows a settled movement's receipt link (DESIGN §27, on PUBLIC_BASE_URL).
    publicLinks: true,
    operation: () => ({
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
    }),
  },
  {
    name: 'user-decline-charge',
    method: 'POST',
    path: '/api/v1/users/me/charges/{id}/decline',
    table: combine(USER, DECLINE),
    operation: () => ({
      summary: 'Decline a PENDING charge',
      tag: 'Users',
      security: [['userKey']],
      pathParams: { id: 'The charge id.' },
      responses: {
        200: ok('Declined: FAILED, the hold back to the user.', chargeBody, {
          ...EXAMPLE_CHARGE_FIELDS,
          status: 'FAILED',
          failureReason: 'declined by user',
        }),
        ...SETTLE_ERRORS,
      },
    }),
  },
  // The payer ends any open hold (DESIGN §16): as a decline, whatever the hold waits for.
  {
    name: 'user-release-charge',
    method: 'POST',
    path: '/api/v1/users/me/charges/{id}/release',
    table: combine(USER, DECLINE),
    operation: () => ({
      summary: 'Release an open hold',
      description:
        "The payer ends any PENDING charge of theirs, waiting for their approval or for the agent's capture (DESIGN §16): FAILED " +
        '`released by user`, the hold back to the balance (and to the grant it was made under).',
      tag: 'Users',
      security: [['userKey']],
      pathParams: { id: 'The charge id.' },
      responses: {
        200: ok('Released: FAILED, the hold back to the user.', chargeBody, {
          ...EXAMPLE_CHARGE_FIELDS,
          status: 'FAILED',
          failureReason: 'released by user',
        }),
        401: USER_401,
        404: errors('No such charge of this user.', [msg('chargeNotFound')]),
        409: errors('Not PENDING (settled, expired, or another settlement won).', [msg('chargeNotPending')]),
        503: BUSY,
      },
    }),
  },
  {
    name: 'user-rotate-key',
    method: 'POST',
    path: '/api/v1/users/me/keys/rotate',
    table: combine(uses('userKeyLookup', 'rotateUserKey', 'endAccountCredentials', 'endConsoleAccess', 'closeTabs'), RELEASE_OPEN_CHARGES),
    operation: () => ({
      summary: "Rotate the user's key",
      description:
        'The old key stops moving money at once. It also ends what the old key could have made: every active grant, every user webhook endpoint, ' +
        'every open account-key charge, every open tab (closed at what it used), every console session of the payer, and every passkey added from a session the account key opened.',
      tag: 'Users',
      security: [['userKey']],
      responses: {
        200: ok('The new key, shown once.', rotatedUserKeyBody, ROTATED_USER_KEY_EXAMPLE),
        401: USER_401,
        409: errors('Another rotation won.', [msg('userKeyRotatedConcurrently')]),
        503: BUSY,
      },
    }),
  },
  ...USER_GRANT_ROUTES,
  ...TOPUP_ROUTES,
] as const satisfies readonly DocumentedRoute[];
