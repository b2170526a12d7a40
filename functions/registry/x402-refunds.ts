/**
 * Refunds of x402 payments in the operation registry (routes.ts assembles the areas; DESIGN §28): a
 * seller agent gives a settled payment back to its payer's wallet, and reads the refund. Each entry
 * carries its OpenAPI operation.
 */
import { component } from '../contracts/response.schemas';
import { refundX402PaymentSchema, x402RefundCreatedSchema, x402RefundSchema } from '../contracts/x402-refund';
import { refusalText as msg } from '../messages/catalogue';
import { AUTH_MESSAGES } from '../messages/credentials';
import { uses } from '../store/access';
import { amountProblem, BODY_ERRORS, BUSY, EXAMPLE_BASE_URL, errors, IDEMPOTENCY_ERRORS, invalid, lazy, ok } from './doc';
import type { DocumentedRoute } from './spec';
import { X402_SIGNATURE } from './x402';

const EXAMPLE_REFUND = {
  id: 'xr01jhx3k6v1f8q2n7c9m4p5r6s7',
  paymentId: 'x402_01jhx3k6v1f8q2n7c9m4p5r6s7',
  amount: 0.004,
  currency: 'USDC',
  to: '3Ujc6pW8vXsLfWqX1fGxG9m7mNh1vJ6yXg2CQRh4X5pN',
  status: 'PENDING',
};

const REFUND_401 = errors('The agent key is missing or unknown (a disabled agent may still refund).', [msg(AUTH_MESSAGES.x402Refund)]);

const REFUND_400 = lazy(() =>
  errors(
    'Checked in this order: Idempotency-Key, body (an amount in USDC, never rounded), the amount against what is left of the ' +
      'payment, the payer (a wallet a refund can be paid to).',
    [
      msg('missingIdempotencyKey'),
      msg('invalidIdempotencyKey'),
      msg('invalidJsonBody'),
      invalid(refundX402PaymentSchema, { amount: '1' }),
      amountProblem('0', 'USDC'),
      amountProblem('0.0000001', 'USDC'),
      invalid(refundX402PaymentSchema, { x: 1 }),
      msg('refundExceedsPayment'),
      msg('refundPayerNotAWallet'),
    ],
  ),
);

export const X402_REFUND_ROUTES = [
  {
    name: 'agent-x402-refund-create',
    method: 'POST',
    path: '/api/v1/agents/x402/payments/{id}/refund',
    table: uses('agentKeyLookup', 'idempotentCommand', 'commitX402Refund'),
    queue: 'refunds',
    operation: () => ({
      summary: 'x402: refund a payment',
      description:
        "Gives a credited x402 payment back, in part (`amount`) or whole (without it: what is left), to the payment's payer: " +
        "the agent's USDC balance is debited at once and the payout worker sends the USDC from the hot wallet to the payer's " +
        "token account (created if missing, at the service's cost, by the payment's first refund), exactly once; no fee. " +
        'Partial refunds add up to at most the payment. Poll GET /api/v1/agents/x402/refunds/{id}; event `x402.payment.refunded` ' +
        'when it is paid. A disabled agent may still refund.',
      tag: 'x402',
      security: [['agentKey']],
      idempotent: true,
      pathParams: { id: 'The payment id (`x402_…`, GET /api/v1/agents/x402/payments).' },
      body: { name: 'X402RefundRequest', schema: refundX402PaymentSchema, example: { amount: 0.004 } },
      responses: {
        202: ok('Debited and queued.', component('X402RefundCreated', x402RefundCreatedSchema), EXAMPLE_REFUND, ['Idempotent-Replayed']),
        400: REFUND_400(),
        401: REFUND_401,
        402: errors("The agent's USDC balance holds less than the refund (it was withdrawn or spent).", [msg('insufficientBalance')]),
        404: errors('No such payment of this agent.', [msg('x402PaymentNotFound')]),
        ...IDEMPOTENCY_ERRORS,
        ...BODY_ERRORS,
        503: BUSY,
      },
    }),
  },
  {
    name: 'agent-x402-refund-get',
    method: 'GET',
    path: '/api/v1/agents/x402/refunds/{id}',
    table: uses('agentKeyLookup', 'getX402Refund'),
    // Shows a COMPLETED refund's receipt link (DESIGN §27, on PUBLIC_BASE_URL).
    publicLinks: true,
    operation: () => ({
      summary: 'x402: one refund',
      description: 'The refund, with its `transaction` once COMPLETED.',
      tag: 'x402',
      security: [['agentKey']],
      pathParams: { id: 'The refund id (`xr…`).' },
      responses: {
        200: ok('The refund.', component('X402Refund', x402RefundSchema), {
          ...EXAMPLE_REFUND,
          status: 'COMPLETED',
          transaction: X402_SIGNATURE,
          createdAt: '2026-01-15T09:30:00.000Z',
          receiptUrl: `${EXAMPLE_BASE_URL}/api/v1/receipts/${EXAMPLE_REFUND.id}`,
        }),
        401: REFUND_401,
        404: errors('No such refund of this agent.', [msg('x402RefundNotFound')]),
        503: BUSY,
      },
    }),
  },
] as const satisfies readonly DocumentedRoute[];
