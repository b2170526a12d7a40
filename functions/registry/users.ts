/**
 * The payer's API in the operation registry (routes.ts assembles the areas): the account key's charges,
 * policy, approvals, grants and top-ups, and PayPal's webhook. Each entry carries its OpenAPI operation.
 */
import { createGrantSchema, listGrantsQuerySchema } from '../contracts/grants';
import { createTopupSchema, listTopupsQuerySchema, listUserChargesQuerySchema, policySchema } from '../contracts/request.schemas';
import {
  chargeBody,
  createdGrantBody,
  grantBody,
  grantListBody,
  meBody,
  policyBody,
  rotatedUserKeyBody,
  topupBody,
  topupListBody,
  userChargeListBody,
  webhookReceivedBody,
} from '../contracts/response.schemas';
import { MAX_ACTIVE_GRANTS } from '../core/grants';
import { MAX_OPEN_TOPUPS } from '../core/topups';
import { refusalText as msg } from '../messages/catalogue';
import { combine, uses } from '../store/access';
import {
  amountProblem,
  BODY_ERRORS,
  BUSY,
  EXAMPLE_BALANCES,
  EXAMPLE_CHARGE,
  EXAMPLE_GRANT,
  errors,
  INVALID_IDEMPOTENCY_KEY,
  invalid,
  LIST_400,
  num,
  OPTIONAL_IDEMPOTENCY_ERRORS,
  ok,
  ROTATED_USER_KEY_EXAMPLE,
  UNKNOWN_FIELD,
  USER_401,
} from './doc';
import type { DocumentedRoute } from './spec';
import { APPROVE, DECLINE, ISSUE_GRANT, RELEASE_OPEN_CHARGES, USER } from './tables';

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
    table: uses('userKeyLookup', 'getAgentById', 'replacePolicy'),
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
          ...EXAMPLE_CHARGE,
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
          ...EXAMPLE_CHARGE,
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
    table: combine(uses('userKeyLookup', 'rotateUserKey', 'endAccountCredentials', 'endConsoleAccess'), RELEASE_OPEN_CHARGES),
    operation: () => ({
      summary: "Rotate the user's key",
      description:
        'The old key stops moving money at once. It also ends what the old key could have made: every active grant, every user webhook endpoint, ' +
        'every open account-key charge, every console session of the payer, and every passkey added from a session the account key opened.',
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
  // Grants (docs/grants.md): the account key issues, lists, reads and revokes agents' grant keys.
  {
    name: 'user-create-grant',
    method: 'POST',
    path: '/api/v1/users/me/grants',
    table: combine(USER, ISSUE_GRANT, uses('idempotentCommand')),
    sealedAnswers: true,
    operation: () => ({
      summary: 'Give an agent a grant',
      description:
        'A scoped charge credential for one agent and one currency: the agent sends its `key` as x-user-key on its charges, ' +
        'never the account key. Limits (per charge, per UTC day and month, lifetime `total`), an approval threshold, a lifetime ' +
        'and a description. At most 100 active grants per payer. Send an Idempotency-Key to be able to ask for a lost answer ' +
        'again: the same key and terms answer the same grant and key for 24 h, and never make a second grant.',
      tag: 'Users',
      security: [['userKey']],
      idempotent: 'optional',
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
        201: ok(
          'The grant, with its key shown this once (and again to a replay of its Idempotency-Key).',
          createdGrantBody,
          {
            ...EXAMPLE_GRANT,
            key: 'ug_live_3Jc7QxWbR5tKp9ZsL3vC8mYdE4gF6jA1uBo',
          },
          ['Idempotent-Replayed'],
        ),
        400: errors('An invalid field, an unknown agent, or a malformed Idempotency-Key.', [
          msg('grantAgentNotFound'),
          invalid(createGrantSchema, { agentId: 'x', currency: 'USD' }),
          invalid(createGrantSchema, { agentId: EXAMPLE_GRANT.agent.id, currency: 'USD', ttlSeconds: num('59') }),
          amountProblem('1.001', 'USD', 'limits.total'),
          INVALID_IDEMPOTENCY_KEY(),
        ]),
        401: USER_401,
        409: errors(
          'The payer has 100 active grants, or a request with this Idempotency-Key is still in flight.',
          [msg('grantLimit', MAX_ACTIVE_GRANTS), msg('idempotencyInProgress')],
          ['Retry-After'],
        ),
        ...BODY_ERRORS,
        422: OPTIONAL_IDEMPOTENCY_ERRORS[422],
        503: BUSY,
      },
    }),
  },
  {
    name: 'user-list-grants',
    method: 'GET',
    path: '/api/v1/users/me/grants',
    table: uses('userKeyLookup', 'listGrants'),
    operation: () => ({
      summary: "The payer's grants",
      description: 'Newest first; `status` filters (a filtered page may hold fewer than `limit` and still a `nextCursor`).',
      tag: 'Users',
      security: [['userKey']],
      query: listGrantsQuerySchema,
      responses: {
        200: ok('A page of grants.', grantListBody, { data: [EXAMPLE_GRANT], nextCursor: null }),
        400: errors('An invalid query parameter.', [...LIST_400(), invalid(listGrantsQuerySchema, { status: 'x' })]),
        401: USER_401,
        503: BUSY,
      },
    }),
  },
  {
    name: 'user-get-grant',
    method: 'GET',
    path: '/api/v1/users/me/grants/{id}',
    table: uses('userKeyLookup', 'getGrant'),
    operation: () => ({
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
    }),
  },
  {
    name: 'user-revoke-grant',
    method: 'DELETE',
    path: '/api/v1/users/me/grants/{id}',
    table: uses('userKeyLookup', 'revokeGrant'),
    operation: () => ({
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
    }),
  },
  // Top-ups (docs/topups.md): money in by Solana Pay (USDC) or PayPal checkout (USD).
  {
    name: 'user-create-topup',
    method: 'POST',
    path: '/api/v1/users/me/topups',
    table: uses('userKeyLookup', 'createTopup'),
    topups: 'open',
    operation: () => ({
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
          UNKNOWN_FIELD(),
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
    }),
  },
  {
    name: 'user-list-topups',
    method: 'GET',
    path: '/api/v1/users/me/topups',
    table: uses('userKeyLookup', 'listTopups'),
    operation: () => ({
      summary: "The user's top-ups",
      description: 'Newest first.',
      tag: 'Users',
      security: [['userKey']],
      query: listTopupsQuerySchema,
      responses: {
        200: ok('A page of top-ups.', topupListBody, { data: [EXAMPLE_USDC_TOPUP], nextCursor: null }),
        400: errors('An invalid query parameter.', LIST_400()),
        401: USER_401,
        503: BUSY,
      },
    }),
  },
  {
    name: 'user-get-topup',
    method: 'GET',
    path: '/api/v1/users/me/topups/{id}',
    table: uses('userKeyLookup', 'getTopup'),
    operation: () => ({
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
    }),
  },
  // Public: PayPal's verify-webhook-signature call is what authenticates it.
  {
    name: 'paypal-webhook',
    method: 'POST',
    path: '/api/v1/paypal/webhooks',
    public: true,
    table: uses('paypalTransmission', 'findTopupByOrder', 'completeTopup', 'expireTopup', 'recordUnmatched', 'reverseTopupCredit'),
    topups: 'webhook',
    operation: () => ({
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
    }),
  },
] as const satisfies readonly DocumentedRoute[];
