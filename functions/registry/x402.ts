/**
 * x402 in the operation registry (routes.ts assembles the areas): the facilitator a seller's stock
 * middleware calls, and an agent's x402 settings and payments; the purchases it makes as a buyer
 * (DESIGN §22) are in x402-purchases.ts. Each entry carries its OpenAPI operation.
 */
import { component } from '../contracts/response.schemas';
import {
  facilitatorRequestSchema,
  listX402PaymentsQuerySchema,
  settleResponseSchema,
  supportedResponseSchema,
  verifyResponseSchema,
  x402PaymentListSchema,
  x402SettingsSchema,
} from '../contracts/x402';
import { refusalText as msg } from '../messages/catalogue';
import { AUTH_MESSAGES } from '../messages/credentials';
import { FACILITATOR_REFUSALS } from '../messages/problems';
import { uses } from '../store/access';
import { BODY_ERRORS, BUSY, errors, invalid, LIST_400, lazy, ok } from './doc';
import type { DocumentedRoute } from './spec';
import { AGENT, X402_SETTLE, X402_VERIFY } from './tables';

// --- x402 (docs/x402.md): the facilitator a stock x402 seller middleware calls at `<base>/x402` ---
export const X402_NETWORK_EXAMPLE = 'solana:EtWTRABZaYq6iMfeYKouRu166VU2xqa1';

export const X402_FEE_PAYER = '7xKXtg2CW87d97TXJSDpbD5jBkheTqA83TZRuJosgAsU';

export const X402_PAY_TO = '9WzDXwBbmkg8ZTbNMqUxvQRAyrZzDsGYdLVL9zYtAWWM';

export const X402_MINT = '4zMMC9srt5Ri5X14GAgXhaHii3GnPAEERYPJgZJDncDU';

export const X402_SIGNATURE = '5VERv8NMvzbJMEkV8xnrLkEaWRtSz9CosKDYjCJjBRnbJLgp8uirBgmQpjKhoR4tjF3ZpRzrFmBV6UjKdiSZkQUW';

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

export const X402_401 = errors('The agent key (x-agent-key or Authorization: Bearer) is missing, unknown or disabled.', [
  msg(AUTH_MESSAGES.x402),
]);

const X402_400 = lazy(() =>
  errors('Not an x402 v2 request body (a missing or malformed field).', [
    msg('invalidJsonBody'),
    invalid(facilitatorRequestSchema, { x402Version: 2, paymentRequirements: X402_REQUIREMENTS }),
    invalid(facilitatorRequestSchema, { ...X402_REQUEST_EXAMPLE, paymentRequirements: { ...X402_REQUIREMENTS, amount: 10000 } }),
    msg('paymentIdentifierInvalid', 'paymentPayload.extensions.payment-identifier'),
  ]),
);

const X402_IDENTIFIER_409 = errors(
  'The payment identifier (`paymentPayload.extensions.payment-identifier.info.id`) was used with another payment for this agent: nothing was verified, settled or credited.',
  [msg('paymentIdentifierConflict')],
);

const X402_IDENTIFIER_DOC =
  ' With the `payment-identifier` extension (`paymentPayload.extensions["payment-identifier"].info.id`, 16-128 characters of ' +
  'letters, digits, `-` and `_`), the same identifier with the same payment answers the first result (`Idempotent-Replayed: true`); ' +
  'with another payment, 409. Identifiers are kept per agent for 24 hours.';

/** x402 (docs/x402.md): the facilitator a seller's stock middleware calls at `<base>/x402`, and an agent's x402 settings and payments. */
export const X402_ROUTES = [
  // x402 (docs/x402.md): the facilitator a seller's stock middleware calls at `<base>/x402`, with its agent key.
  {
    name: 'x402-verify',
    method: 'POST',
    path: '/x402/verify',
    table: X402_VERIFY,
    x402: 'read',
    operation: () => ({
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
              invalidMessage: FACILITATOR_REFUSALS.payToMustBeTreasury,
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
        400: X402_400(),
        401: X402_401,
        409: X402_IDENTIFIER_409,
        ...BODY_ERRORS,
        503: BUSY,
      },
    }),
  },
  {
    name: 'x402-settle',
    method: 'POST',
    path: '/x402/settle',
    table: X402_SETTLE,
    x402: 'settle',
    operation: () => ({
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
        400: X402_400(),
        401: X402_401,
        409: errors(
          'The same payment is being credited by a concurrent request (`Retry-After`), or its payment identifier was used with another payment for this agent (nothing settled or credited).',
          [msg('idempotencyInProgress'), msg('paymentIdentifierConflict')],
          ['Retry-After'],
        ),
        ...BODY_ERRORS,
        503: BUSY,
      },
    }),
  },
  // Public: a stock client asks it before anything else (its Bearer header is ignored).
  {
    name: 'x402-supported',
    method: 'GET',
    path: '/x402/supported',
    public: true,
    table: {},
    x402: 'read',
    operation: () => ({
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
    }),
  },
  {
    name: 'agent-x402-settings',
    method: 'GET',
    path: '/api/v1/agents/x402',
    table: AGENT,
    x402: 'read',
    publicLinks: true,
    operation: () => ({
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
    }),
  },
  {
    name: 'agent-x402-payments',
    method: 'GET',
    path: '/api/v1/agents/x402/payments',
    table: uses('agentKeyLookup', 'listX402Payments'),
    operation: () => ({
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
              refunded: 0,
            },
          ],
          nextCursor: null,
        }),
        400: errors('An invalid query parameter.', LIST_400()),
        401: X402_401,
        503: BUSY,
      },
    }),
  },
] as const satisfies readonly DocumentedRoute[];
