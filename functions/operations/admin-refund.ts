/**
 * The operator's refund as an operation (docs/lifecycle.md): a charge given back to its payer.
 * Every one takes the operator (IAM, or x-admin-key where the stage takes a key). A module per use
 * case so that each function bundles only its own (operations/README.md); the admin CLI
 * (bin/operator/) runs the same use cases in-process and answers with these renders.
 */
import './operator-credentials';
import { refundChargeSchema } from '../contracts/request.schemas';
import * as NEEDS from '../registry/needs.generated';
import { refundChargeByOperator } from '../use-cases/charges/lifecycle';
import { settledChargeAnswer } from './lifecycle';
import { operation } from './operation';

const OPERATOR = { kind: 'operator' } as const;

/** POST /api/v1/admin/agents/{id}/charges/{chargeId}/refund: Idempotency-Key, `{amount?}`. */
export const adminRefundChargeOperation = operation({
  route: 'admin-refund-charge',
  needs: NEEDS.adminRefundCharge,
  credentials: OPERATOR,
  idempotency: 'required',
  body: { schema: refundChargeSchema, optional: true },
  // The refunded charge's receipt links, as the agent's own refund answers it (on PUBLIC_BASE_URL, stored with the answer).
  links: true,
  run: ({ params, idempotencyKey, body, baseUrl }) =>
    refundChargeByOperator({ agentId: params.id, chargeId: params.chargeId, idempotencyKey, baseUrl, ...body }),
  render: settledChargeAnswer,
});
