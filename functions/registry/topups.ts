/**
 * Top-ups in the operation registry (users.ts puts them in the payer's API): a payer's top-ups by
 * Solana Pay (USDC) or PayPal (USD), listed and read, and PayPal's webhook that completes them
 * (docs/topups.md). Each entry carries its OpenAPI operation; adding a route: docs/registry.md.
 */
import { createTopupSchema, listTopupsQuerySchema } from '../contracts/request.schemas';
import { webhookReceivedBody } from '../contracts/response.schemas';
import { topupBody, topupListBody } from '../contracts/responses/topups';
import { MAX_OPEN_TOPUPS } from '../core/topups';
import { refusalText as msg } from '../messages/catalogue';
import { uses } from '../store/access';
import { amountProblem, BODY_ERRORS, BUSY, errors, invalid, LIST_400, ok, UNKNOWN_FIELD, USER_401 } from './doc';
import type { DocumentedRoute } from './spec';

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

/** A payer's top-ups, and PayPal's word on them. */
export const TOPUP_ROUTES = [
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
