/**
 * x402 purchases in the operation registry (routes.ts assembles the areas; DESIGN §22): an agent
 * pays any x402 seller from its payer's USDC under a grant — the purchase made, listed, read, and
 * its receipt. Beside the facilitator's routes (x402.ts), whose example keys it shares. Each entry
 * carries its OpenAPI operation.
 */
import { component } from '../contracts/response.schemas';
import {
  createPurchaseSchema,
  listX402PaymentsQuerySchema,
  purchaseListSchema,
  purchaseReceiptSchema,
  purchaseSchema,
} from '../contracts/x402';
import { judgeRequirements, type PurchaseSettings } from '../core/purchases';
import { X402_VERSION } from '../core/x402';
import { refusalText as msg } from '../messages/catalogue';
import { AUTH_MESSAGES } from '../messages/credentials';
import { uses } from '../store/access';
import { BODY_ERRORS, BUSY, EXAMPLE_BASE_URL, errors, IDEMPOTENCY_ERRORS, LIST_400, ok } from './doc';
import type { DocumentedRoute } from './spec';
import { PURCHASE_TABLE, READ_PURCHASE } from './tables';

import { X402_401, X402_FEE_PAYER, X402_MINT, X402_NETWORK_EXAMPLE, X402_PAY_TO, X402_SIGNATURE } from './x402';

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

/** x402 purchases (DESIGN §22): what an agent buys from an x402 seller, as a buyer. */
export const X402_PURCHASE_ROUTES = [
  // x402 purchases (DESIGN §22, docs/x402.md): an agent pays any x402 seller from its payer's USDC; create and read sign with the hot wallet.
  {
    name: 'agent-x402-purchase-create',
    method: 'POST',
    path: '/api/v1/agents/x402/purchases',
    table: PURCHASE_TABLE,
    x402: 'settle',
    approvalSecret: true,
    publicLinks: true,
    operation: () => ({
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
    }),
  },
  {
    name: 'agent-x402-purchases-list',
    method: 'GET',
    path: '/api/v1/agents/x402/purchases',
    table: uses('agentKeyLookup', 'listAgentPurchases'),
    // Shows a settled movement's receipt link (DESIGN §27, on PUBLIC_BASE_URL).
    publicLinks: true,
    operation: () => ({
      summary: "x402: the agent's purchases",
      description: 'Newest first; `nextCursor` for the next page.',
      tag: 'x402',
      security: [['agentKey'], ['agentBearer']],
      query: listX402PaymentsQuerySchema,
      responses: {
        200: ok('A page of purchases.', component('X402PurchaseList', purchaseListSchema), { data: [EXAMPLE_PURCHASE], nextCursor: null }),
        400: errors('An invalid query parameter.', LIST_400()),
        401: X402_401,
        503: BUSY,
      },
    }),
  },
  {
    name: 'agent-x402-purchase-get',
    method: 'GET',
    path: '/api/v1/agents/x402/purchases/{id}',
    table: READ_PURCHASE,
    x402: 'settle',
    // Shows a settled movement's receipt link (DESIGN §27, on PUBLIC_BASE_URL).
    publicLinks: true,
    operation: () => ({
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
    }),
  },
  {
    name: 'agent-x402-purchase-receipt',
    method: 'POST',
    path: '/api/v1/agents/x402/purchases/{id}/receipt',
    table: uses('agentKeyLookup', 'getCharge', 'settlePurchase'),
    x402: 'read',
    // Shows a settled movement's receipt link (DESIGN §27, on PUBLIC_BASE_URL).
    publicLinks: true,
    operation: () => ({
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
          receiptUrl: `${EXAMPLE_BASE_URL}/api/v1/receipts/${EXAMPLE_PURCHASE.id}`,
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
    }),
  },
] as const satisfies readonly DocumentedRoute[];
