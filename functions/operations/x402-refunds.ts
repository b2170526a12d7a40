/**
 * Refunds of x402 payments as operations (DESIGN §28, docs/x402.md "Refunds"): the refund made
 * (a money movement under a required Idempotency-Key, answered 202 and stored) and read. Both take
 * the agent's x-agent-key enabled or not: a disabled agent may still give money back.
 * functions/api/agent-x402-refund*.handler.ts and the MCP tool `x402_refund` derive from these.
 */
import { refundX402PaymentSchema, x402RefundView } from '../contracts/x402-refund';
import { AUTH_MESSAGES } from '../messages/credentials';
import * as NEEDS from '../registry/needs.generated';
import { getX402Refund, refundX402Payment, renderRefund } from '../use-cases/x402-refunds/refunds';
import { operation } from './operation';

/** POST /api/v1/agents/x402/payments/{id}/refund: x-agent-key, Idempotency-Key, `{amount?}` (default: the rest). */
export const refundX402PaymentOperation = operation({
  route: 'agent-x402-refund-create',
  needs: NEEDS.agentX402RefundCreate,
  credentials: { kind: 'anyAgentKey', refusal: AUTH_MESSAGES.x402Refund },
  idempotency: 'required',
  body: { schema: refundX402PaymentSchema, optional: true },
  run: ({ caller: { agentKeyHash }, idempotencyKey, params, body }) =>
    refundX402Payment({
      agentKeyHash,
      idempotencyKey,
      paymentId: params.id,
      ...(body.amount !== undefined ? { amount: body.amount } : {}),
    }),
  render: renderRefund,
});

/** GET /api/v1/agents/x402/refunds/{id}: x-agent-key; the refund (another agent's: 404). */
export const getX402RefundOperation = operation({
  route: 'agent-x402-refund-get',
  needs: NEEDS.agentX402RefundGet,
  credentials: { kind: 'anyAgentKey', refusal: AUTH_MESSAGES.x402Refund },
  idempotency: 'none',
  // A COMPLETED refund's receipt link (on PUBLIC_BASE_URL, DESIGN §27).
  links: true,
  run: ({ caller: { agentKeyHash }, params }) => getX402Refund(agentKeyHash, params.id),
  render: (refund, { baseUrl }) => ({ statusCode: 200, body: x402RefundView(refund, baseUrl) }),
});
